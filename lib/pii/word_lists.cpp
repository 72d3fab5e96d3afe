#include "pii/word_lists.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace nss::pii {
namespace {

constexpr const char* kInstall =
    "install Faker's word lists: apt-get install python3-fake-factory (scripts/setup.sh does), "
    "or point NSS_FAKER_DIR at a faker package directory";

std::string read_source(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  if (!in || in.bad())
    throw UsageError("pii", "the word list file " + path + " is missing or unreadable", kInstall);
  return text.str();
}

std::vector<WeightedWord> list(const std::string& source, const char* name,
                               const std::string& path) {
  auto words = read_word_literal(source, name, path);
  if (!words || words->empty())
    throw UsageError("pii", "the word list " + std::string(name) + " is missing from " + path,
                     kInstall);
  return std::move(*words);
}

}  // namespace

std::string faker_dir() {
  const char* dir = std::getenv("NSS_FAKER_DIR");
  return dir && *dir ? dir : kDefaultFakerDir;
}

WordLists load_word_lists(const std::string& dir) {
  WordLists lists;
  lists.faker_dir = dir;
  const std::string person = dir + "/providers/person/en_US/__init__.py";
  const std::string address = dir + "/providers/address/en_US/__init__.py";
  const std::string people = read_source(person);
  lists.first_names_female = list(people, "first_names_female", person);
  lists.first_names_male = list(people, "first_names_male", person);
  lists.last_names = list(people, "last_names", person);
  const std::string places = read_source(address);
  lists.street_suffixes = list(places, "street_suffixes", address);
  lists.city_prefixes = list(places, "city_prefixes", address);
  lists.city_suffixes = list(places, "city_suffixes", address);
  lists.states = list(places, "states", address);
  lists.states_abbr = list(places, "states_abbr", address);
  return lists;
}

}  // namespace nss::pii
