// The word lists surrogate names, streets, cities and states are drawn
// from: Faker's en_US providers as Debian's python3-fake-factory installs
// them (never invented here), read at run time from their Python source.
#pragma once

#include <string>
#include <vector>

#include "pii/python_literal.h"

namespace nss::pii {

/// Where Debian installs Faker (python3-fake-factory);
/// NSS_FAKER_DIR overrides it.
inline constexpr const char* kDefaultFakerDir = "/usr/lib/python3/dist-packages/faker";

struct WordLists {
  std::vector<WeightedWord> first_names_female, first_names_male, last_names;  // weighted
  std::vector<WeightedWord> street_suffixes, city_prefixes, city_suffixes;     // weight 1
  std::vector<WeightedWord> states;                                            // the 50 state names
  std::vector<WeightedWord> states_abbr;  // their 51 postal codes (with DC)
  std::string faker_dir;
};

/// NSS_FAKER_DIR when set, else kDefaultFakerDir.
std::string faker_dir();

/// The lists from `dir`'s providers/person/en_US/__init__.py and
/// providers/address/en_US/__init__.py. UsageError (exit 2) naming the
/// missing file, or the list missing from it, with the package to install;
/// DataError for a list that is not a literal of words.
WordLists load_word_lists(const std::string& dir);

}  // namespace nss::pii
