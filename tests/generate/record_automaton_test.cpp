// The records automaton against the record validator it must agree with:
// every row training renders (within the limits) is accepted, and every
// string it accepts — among hundreds of thousands of mutations of valid
// records — is a valid completion; the limits bound each value; the token
// masks equal a brute-force walk of every token from the same state.
#include "generate/record_automaton.h"

#include <random>
#include <set>

#include <gtest/gtest.h>

#include "data/csv_records.h"
#include "generate/token_masks.h"

namespace nss::generate {
namespace {

RecordSchema schema(std::int32_t chars = 12) {
  RecordSchema s;
  s.columns = {{"name", false, false},
               {"age", true, true},
               {"city \"q\"", false, true},
               {"score", true, false}};
  for (auto& column : s.columns) column.limits = {chars, 4, 3, 2};
  return s;
}

bool accepts(const RecordAutomaton& automaton, const std::string& text) {
  RecordAutomaton::State state = automaton.start();
  return automaton.walk(state, text) && automaton.accepting(state);
}

bool valid(const RecordSchema& s, const std::string& text) {
  const auto records = check_completion(s, text);
  if (records.empty()) return false;
  for (const auto& r : records)
    if (!r.valid) return false;
  return true;
}

std::string random_cell(std::mt19937& rng, bool number, bool empty_ok) {
  static const std::vector<std::string> kStrings = {"Ada",
                                                    "O'Brien",
                                                    "say \"hi\"",
                                                    "back\\slash",
                                                    "tab\there",
                                                    "line\nbreak",
                                                    "\x01"
                                                    "ctl",
                                                    "Zürich",
                                                    "東京",
                                                    "😀 ok",
                                                    "12",
                                                    "-0.5",
                                                    "1e5",
                                                    "x",
                                                    "  spaced  ",
                                                    "007"};
  static const std::vector<std::string> kNumbers = {"0",   "-0",    "12",      "-345", "9999",
                                                    "0.5", "3.125", "-1.5e10", "2E+3", "7e-2"};
  if (empty_ok && rng() % 5 == 0) return "";
  const auto& pool = number ? kNumbers : kStrings;
  return pool[rng() % pool.size()];
}

std::string random_record(std::mt19937& rng, const RecordSchema& s) {
  std::vector<std::string> header, row;
  for (const auto& c : s.columns) {
    header.push_back(c.name);
    row.push_back(random_cell(rng, c.number, c.empty_cells));
  }
  return data::csv_row_to_json(header, row);
}

TEST(RecordAutomatonTest, AcceptsEveryRenderedRowWithinTheLimits) {
  const RecordSchema s = schema();
  const RecordAutomaton automaton(s, false);
  std::mt19937 rng(1);
  for (int i = 0; i < 2000; ++i) {
    const std::string record = random_record(rng, s);
    ASSERT_TRUE(valid(s, record)) << record;
    EXPECT_TRUE(accepts(automaton, record)) << record;
  }
  EXPECT_LT(automaton.node_count(), 200u);
}

TEST(RecordAutomatonTest, EverythingItAcceptsIsValid) {
  const RecordSchema s = schema();
  const RecordAutomaton automaton(s, true);
  std::mt19937 rng(2);
  const std::string alphabet = "{}\":,.-+eE0123456789 \\nuab\x01\n\xc3\xbc\xe6\x9d\xb1";
  int accepted = 0;
  for (int i = 0; i < 300000; ++i) {
    std::string text = random_record(rng, s);
    if (rng() % 4 == 0) text += "\n" + random_record(rng, s);
    for (int edits = 1 + rng() % 3; edits > 0; --edits) {
      const std::size_t at = rng() % (text.size() + 1);
      const char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0:
          text.insert(text.begin() + at, c);
          break;
        case 1:
          if (at < text.size()) text.erase(at, 1);
          break;
        default:
          if (at < text.size()) text[at] = c;
      }
    }
    if (!accepts(automaton, text)) continue;
    ++accepted;
    EXPECT_TRUE(valid(s, text)) << text;
  }
  EXPECT_GT(accepted, 10000);  // the mutations reach the language, not only its outside
}

TEST(RecordAutomatonTest, RefusesWhatTrainingNeverRenders) {
  const RecordSchema s = schema();
  const RecordAutomaton automaton(s, false);
  const std::string good = R"({"name":"Ada","age":36,"city \"q\"":"","score":1.5})";
  ASSERT_TRUE(accepts(automaton, good));
  for (
      const std::string& bad : std::vector<std::string>{
          R"({"name":"Ada","age":36,"city \"q\"":"","score":1.5} )",     // trailing space
          R"({"name": "Ada","age":36,"city \"q\"":"","score":1.5})",     // a space
          R"({"age":36,"name":"Ada","city \"q\"":"","score":1.5})",      // order
          R"({"name":"","age":36,"city \"q\"":"","score":1.5})",         // empty, none in table
          R"({"name":"Ada","age":"x","city \"q\"":"","score":1.5})",     // text in a number
          R"({"name":"Ada","age":036,"city \"q\"":"","score":1.5})",     // leading zero
          R"({"name":"Ada","age":36,"city \"q\"":"","score":""})",       // no empty score
          R"({"name":"A\/a","age":36,"city \"q\"":"","score":1.5})",     // an escape never written
          R"({"name":"A\u0041","age":36,"city \"q\"":"","score":1.5})",  // \u only for controls
          "{\"name\":\"A\xff\",\"age\":36,\"city \\\"q\\\"\":\"\",\"score\":1.5}",  // bad UTF-8
          "{\"name\":\"\xed\xa0\x80\",\"age\":36,\"city \\\"q\\\"\":\"\",\"score\":1.5}",  // surrogate
          good + "\n" + good,  // a second record in an ungrouped example
      })
    EXPECT_FALSE(accepts(automaton, bad)) << bad;
}

TEST(RecordAutomatonTest, ALimitOfZeroAllowsNoValueOfThatKind) {
  RecordSchema s;
  s.columns = {{"id", true, false}, {"code", false, false}};
  s.columns[0].limits = {0, 3, 0, 0};  // integers only
  s.columns[1].limits = {4, 0, 0, 0};  // strings only: no cell was a number
  const RecordAutomaton automaton(s, false);
  EXPECT_TRUE(accepts(automaton, R"({"id":123,"code":"ab"})"));
  EXPECT_FALSE(accepts(automaton, R"({"id":1.5,"code":"ab"})"));
  EXPECT_FALSE(accepts(automaton, R"({"id":1e5,"code":"ab"})"));
  EXPECT_FALSE(accepts(automaton, R"({"id":1,"code":12})"));
  EXPECT_FALSE(accepts(automaton, R"({"id":1,"code":""})"));
}

TEST(RecordAutomatonTest, DigitStringsTakeDigitsAlone) {
  // A zip code column: "06647" as text, 10009 as a number, some empty.
  RecordSchema s;
  s.columns = {{"zip", false, true}};
  s.columns[0].limits = {5, 5, 0, 0};
  s.columns[0].digit_strings = true;
  s.columns[0].missing_values = {"NA", "N/A", "NaN", "#N/A", "#N/A N/A", "1.#IND"};
  const RecordAutomaton automaton(s, false);
  for (const std::string value : {R"("06647")", R"("0")", R"("")", "10009", "0", R"("NA")",
                                  R"("N/A")", R"("NaN")", R"("#N/A")", R"("#N/A N/A")"}) {
    const std::string record = R"({"zip":)" + value + "}";
    EXPECT_TRUE(accepts(automaton, record)) << value;
    EXPECT_TRUE(valid(s, record)) << value;
  }
  // A spelling beginning with a digit would share the digits' edges: valid, not offered.
  for (const std::string value :
       {R"("B89")", R"("066 47")", R"("-0664")", R"("0.5")", R"("066470")", R"("٠٦")", R"("N")",
        R"("NAN")", R"("#N/A N")", R"("null")", R"("1.#IND")", R"("NA0")"}) {
    const std::string record = R"({"zip":)" + value + "}";
    EXPECT_FALSE(accepts(automaton, record)) << value;
  }
  for (const std::string value : {R"("B89")", R"("066 47")", R"("-0664")", R"("0.5")", R"("٠٦")",
                                  R"("N")", R"("null")", R"("NA0")"})
    EXPECT_FALSE(valid(s, R"({"zip":)" + value + "}")) << value;
  EXPECT_TRUE(valid(s, R"({"zip":"1.#IND"})"));
}

TEST(RecordAutomatonTest, KnowsItsShortestCompletion) {
  const RecordSchema s = schema();
  // A number is shorter than any string, even "" (the columns may hold numbers).
  const std::string shortest = R"({"name":0,"age":0,"city \"q\"":0,"score":0})";
  EXPECT_EQ(RecordAutomaton(s, false).shortest_completion(), shortest.size());
}

TEST(RecordAutomatonTest, CategoriesLimitAColumnToItsRecordedValues) {
  RecordSchema s = schema();
  s.columns[0].categories = {"Ada", "Al", "O\"Neil"};  // name, no empty cells
  s.columns[2].categories = {"x"};                     // city "q", empty cells
  auto record = [](const std::string& name, const std::string& city) {
    return R"({"name":)" + name + R"(,"age":1,"city \"q\"":)" + city + R"(,"score":2})";
  };
  const RecordAutomaton with(s, false, true), without(s, false, false);
  for (const std::string name : {R"("Ada")", R"("Al")", R"("O\"Neil")"}) {
    EXPECT_TRUE(accepts(with, record(name, R"("x")"))) << name;
    EXPECT_TRUE(accepts(with, record(name, R"("")"))) << name;
  }
  for (const std::string name : {R"("A")", R"("Adam")", R"("")", "7", R"("ada")"})
    EXPECT_FALSE(accepts(with, record(name, R"("x")"))) << name;
  EXPECT_FALSE(accepts(with, record(R"("Ada")", R"("y")")));
  EXPECT_TRUE(accepts(without, record(R"("Bob")", R"("y")")));
}

TEST(RecordAutomatonTest, TheLimitsBoundEveryValue) {
  const RecordSchema s = schema(5);
  const RecordAutomaton automaton(s, false);
  auto record = [](const std::string& name, const std::string& age, const std::string& score) {
    return R"({"name":")" + name + R"(","age":)" + age + R"(,"city \"q\"":"","score":)" + score +
           "}";
  };
  EXPECT_TRUE(accepts(automaton, record("ab\\ncd", "9999", "1.125e-12")));  // an escape is one
  EXPECT_FALSE(accepts(automaton, record("abcdef", "1", "1")));
  EXPECT_TRUE(accepts(automaton, record("東京東京東", "1", "1")));  // characters, not bytes
  EXPECT_FALSE(accepts(automaton, record("x", "12345", "1")));
  EXPECT_FALSE(accepts(automaton, record("x", "1", "0.1234")));
  EXPECT_FALSE(accepts(automaton, record("x", "1", "1e123")));
}

// A vocabulary of single bytes, pieces of records and tokens that cross
// value boundaries; two specials that never appear in a completion.
std::vector<std::optional<std::string>> vocabulary(const RecordSchema& s) {
  std::vector<std::optional<std::string>> tokens;
  for (int b = 0; b < 256; ++b) tokens.push_back(std::string(1, static_cast<char>(b)));
  for (const std::string piece :
       {"{\"",   "name",  "\":\"", "\",\"",    "age",  "\":", ",\"",        "city", " \\\"q\\\"",
        "score", "\"}",   "}\n",   "}\n{",     "12",   "345", ".5",         "e1",   "Ada",
        "\\n",   "\\u00", "東",    "\xe6\x9d", "\xb1", "0.",  "\":\"\",\"", "\"\"", "Zürich"})
    tokens.push_back(piece);
  (void)s;
  tokens.push_back(std::nullopt);
  tokens.push_back(std::nullopt);
  return tokens;
}

TEST(TokenMasksTest, EqualABruteForceWalkOfEveryToken) {
  const RecordSchema s = schema(6);
  const RecordAutomaton automaton(s, true);
  const auto tokens = vocabulary(s);
  const std::int32_t end = static_cast<std::int32_t>(tokens.size()) - 1;
  TokenMasks masks(automaton, tokens, {end});
  std::mt19937 rng(3);
  int states = 0;
  for (int i = 0; i < 300; ++i) {
    const std::string record = random_record(rng, s);
    RecordAutomaton::State state = automaton.start();
    for (std::size_t at = 0; at <= record.size(); ++at) {
      if (at > 0 && !automaton.step(state, static_cast<unsigned char>(record[at - 1]))) break;
      const TokenMasks::Mask& mask = masks.allowed(state);
      for (std::int32_t id = 0; id < static_cast<std::int32_t>(tokens.size()); ++id) {
        RecordAutomaton::State walked = state;
        const bool expected = id == end    ? automaton.accepting(state)
                              : tokens[id] ? automaton.walk(walked, *tokens[id])
                                           : false;
        ASSERT_EQ(mask.allows(id), expected) << record.substr(0, at) << " | token " << id;
      }
      ++states;
    }
  }
  EXPECT_GT(states, 10000);
  EXPECT_LT(masks.cached_masks(), 400u);  // states that differ only in a long counter share one
}

TEST(TokenMasksTest, ApplySetsRefusedLogitsAndPaddedRowsToMinusInfinity) {
  const RecordSchema s = schema();
  const RecordAutomaton automaton(s, false);
  const auto tokens = vocabulary(s);
  TokenMasks masks(automaton, tokens, {static_cast<std::int32_t>(tokens.size()) - 1});
  const auto vocab = static_cast<std::int64_t>(tokens.size()) + 3;  // padded embedding rows
  for (const RecordAutomaton::State state : {automaton.start(), [&] {
                                               RecordAutomaton::State in = automaton.start();
                                               automaton.walk(in, "{\"name\":\"A");
                                               return in;
                                             }()}) {
    std::vector<float> logits(vocab, 1.0f);
    const auto& mask = masks.allowed(state);
    masks.apply(mask, logits.data(), vocab);
    for (std::int64_t id = 0; id < vocab; ++id)
      EXPECT_EQ(std::isinf(logits[id]), id >= static_cast<std::int64_t>(tokens.size()) ||
                                            !mask.allows(static_cast<std::int32_t>(id)));
  }
}

}  // namespace
}  // namespace nss::generate
