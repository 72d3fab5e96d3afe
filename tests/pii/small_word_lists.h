// A few words of each Faker list, for the rules' unit tests (the real lists
// are python3-fake-factory's; word_lists_test reads them).
#pragma once

#include "pii/word_lists.h"

namespace nss::pii {

inline WordLists small_word_lists() {
  WordLists lists;
  lists.first_names_female = {{"Mary", 1}, {"Anne", 1}, {"Linda", 1}, {"Grace", 1}};
  lists.first_names_male = {{"John", 1}, {"Omar", 1}, {"Jordan", 1}, {"Grant", 1}};
  lists.last_names = {{"Smith", 1}, {"Garcia", 1}, {"Nguyen", 1}, {"Wagner", 1}, {"Gomez", 1}};
  lists.street_suffixes = {{"Street", 1}, {"Avenue", 1}, {"Way", 1}, {"Canyon", 1}};
  lists.city_prefixes = {{"North", 1}};
  lists.city_suffixes = {{"ville", 1}};
  lists.states = {{"Alabama", 1}, {"New York", 1}, {"Ohio", 1}, {"Texas", 1}};
  lists.states_abbr = {{"AL", 1}, {"NY", 1}, {"OH", 1}, {"TX", 1}, {"DC", 1}};
  return lists;
}

}  // namespace nss::pii
