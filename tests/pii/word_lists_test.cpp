// Faker's word lists read from their Python source: the literal reader on
// the shapes the providers use and on malformed text, and the lists of
// Debian's python3-fake-factory against what Python's ast.literal_eval
// reads from the same files (counts, first and last entries, weight sums).
#include "pii/word_lists.h"

#include <filesystem>
#include <numeric>

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/fs.h"
#include "support/test_paths.h"

namespace nss::pii {
namespace {

double weight_sum(const std::vector<WeightedWord>& words) {
  return std::accumulate(words.begin(), words.end(), 0.0,
                         [](double sum, const WeightedWord& w) { return sum + w.weight; });
}

TEST(PythonLiteral, TuplesAndOrderedDicts) {
  const std::string source = R"(class Provider:
    formats = ('{{a}}', "{{b}}")
    # a comment ( with a bracket
    states = (
        'Alabama', 'New York',  # trailing comment
        "O'Brien", 'It\'s',
    )
    names = OrderedDict((
        ('Mary', 0.5),
        ("Anne", 2.5e-1),
    ))
    names_copy = names.copy()
    listed = ['x']
)";
  const auto states = read_word_literal(source, "states", "p.py");
  ASSERT_TRUE(states);
  ASSERT_EQ(states->size(), 4u);
  EXPECT_EQ((*states)[1].word, "New York");
  EXPECT_EQ((*states)[2].word, "O'Brien");
  EXPECT_EQ((*states)[3].word, "It's");
  EXPECT_EQ((*states)[0].weight, 1);
  const auto names = read_word_literal(source, "names", "p.py");
  ASSERT_TRUE(names);
  ASSERT_EQ(names->size(), 2u);
  EXPECT_EQ((*names)[1].word, "Anne");
  EXPECT_DOUBLE_EQ((*names)[1].weight, 0.25);
  EXPECT_EQ(read_word_literal(source, "listed", "p.py")->at(0).word, "x");
  EXPECT_FALSE(read_word_literal(source, "missing", "p.py"));
  EXPECT_FALSE(read_word_literal(source, "name", "p.py"));  // only whole names
}

TEST(PythonLiteral, MalformedTextNamesTheLine) {
  const auto error_of = [](const std::string& source) {
    try {
      read_word_literal(source, "x", "f.py");
    } catch (const DataError& e) {
      return e.message();
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of("a = 1\nx = ('a', 'b'\n"), "f.py:3: expected ',' or ')'");
  EXPECT_EQ(error_of("x = ('a\n"), "f.py:1: a string is not closed");
  EXPECT_EQ(error_of("x = names.copy()"), "f.py:1: expected a tuple or a list");
  EXPECT_EQ(error_of("x = (('a', b),)"), "f.py:1: expected a number");
  EXPECT_EQ(error_of("x = (1, 2)"), "f.py:1: expected a string");
}

TEST(WordLists, DebiansFakerAsPythonReadsIt) {
  const std::string dir = faker_dir();
  if (!std::filesystem::exists(dir + "/providers/person/en_US/__init__.py"))
    GTEST_SKIP() << "python3-fake-factory is not installed (" << dir << ")";
  const WordLists lists = load_word_lists(dir);
  ASSERT_EQ(lists.first_names_female.size(), 381u);
  ASSERT_EQ(lists.first_names_male.size(), 322u);
  ASSERT_EQ(lists.last_names.size(), 1000u);
  EXPECT_EQ(lists.street_suffixes.size(), 225u);
  EXPECT_EQ(lists.city_prefixes.size(), 7u);
  EXPECT_EQ(lists.city_suffixes.size(), 19u);
  EXPECT_EQ(lists.states.size(), 50u);
  EXPECT_EQ(lists.states_abbr.size(), 51u);
  EXPECT_EQ(lists.first_names_female.front().word, "April");
  EXPECT_DOUBLE_EQ(lists.first_names_female.front().weight, 0.004529083);
  EXPECT_EQ(lists.first_names_male.back().word, "Zachary");
  EXPECT_EQ(lists.last_names.back().word, "Cooke");
  EXPECT_EQ(lists.street_suffixes.back().word, "Wells");
  EXPECT_EQ(lists.states[32].word, "North Carolina");
  EXPECT_EQ(lists.states_abbr.back().word, "WY");
  // sum(w for _, w in ...) in Python
  EXPECT_NEAR(weight_sum(lists.first_names_female), 1.000000007, 1e-12);
  EXPECT_NEAR(weight_sum(lists.first_names_male), 0.9999999939999995, 1e-12);
  EXPECT_NEAR(weight_sum(lists.last_names), 1.000000008999998, 1e-12);
}

TEST(WordLists, AMissingFileOrListIsAUsageErrorNamingIt) {
  const std::string dir = testing::scratch_dir("faker");
  try {
    load_word_lists(dir);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(e.message().find(dir + "/providers/person/en_US/__init__.py"), std::string::npos);
    EXPECT_NE(e.hint().find("python3-fake-factory"), std::string::npos);
  }
  create_directories(dir + "/providers/person/en_US", "test");
  write_file_atomic(dir + "/providers/person/en_US/__init__.py",
                    "first_names_female = (('A', 1),)\nfirst_names_male = (('B', 1),)\n");
  try {
    load_word_lists(dir);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(e.message().find("the word list last_names is missing from"), std::string::npos);
  }
}

}  // namespace
}  // namespace nss::pii
