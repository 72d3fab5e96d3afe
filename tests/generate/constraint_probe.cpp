// The records constraint (lib/generate/record_constraint.h) on a vocabulary,
// for the parity test against a regular expression and outlines-core:
//
//   constraint_probe SCHEMA_JSON GROUPED TOKENIZER_JSON|byte-level < prefixes
//
// reads one line of space-separated token ids per prefix (possibly empty)
// and prints, a line each, the JSON list of token ids allowed after it, or
// null when the prefix itself is refused. The end token is the tokenizer's
// last id (byte-level: 257).
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/app_main.h"
#include "generate/record_constraint.h"
#include "tokenizer/tokenizer.h"

namespace {

nss::generate::VocabularyBytes vocabulary(const std::string& source, std::int32_t& end) {
  if (source == "byte-level") {
    nss::generate::VocabularyBytes bytes;
    bytes.after.resize(258);
    for (int id = 0; id < 256; ++id) bytes.after[id] = std::string(1, static_cast<char>(id));
    bytes.first = bytes.after;
    end = 257;
    return bytes;
  }
  const auto tokenizer = nss::tokenizer::Tokenizer::from_file(source);
  end = tokenizer.vocab_size() - 1;
  return {tokenizer.token_bytes(true), tokenizer.token_bytes(false)};
}

}  // namespace

int main(int argc, char** argv) {
  return nss::run_app("constraint_probe", [&] {
    if (argc != 4)
      throw nss::UsageError("probe", "usage: constraint_probe SCHEMA_JSON GROUPED TOKENIZER < ids");
    std::ifstream in(argv[1]);
    std::ostringstream text;
    text << in.rdbuf();
    const auto schema = nss::generate::RecordSchema::from_json(text.str());
    std::int32_t end = 0;
    nss::generate::VocabularyBytes bytes = vocabulary(argv[3], end);
    const auto vocab = static_cast<std::int64_t>(bytes.after.size());
    nss::generate::RecordConstraint constraint(schema, std::string(argv[2]) == "1", false,
                                               std::move(bytes), {end});
    for (std::string line; std::getline(std::cin, line);) {
      std::istringstream ids(line);
      std::int64_t state = constraint.start();
      for (std::int64_t id; state != constraint.kRefused && ids >> id;)
        state = constraint.advance(state, id);
      if (state == constraint.kRefused) {
        std::cout << "null\n";
        continue;
      }
      std::vector<float> logits(static_cast<std::size_t>(vocab), 0.0f);
      constraint.mask(state, logits.data(), vocab);
      nlohmann::json allowed = nlohmann::json::array();
      for (std::int64_t id = 0; id < vocab; ++id)
        if (logits[id] == 0.0f) allowed.push_back(id);
      std::cout << allowed.dump() << "\n";
    }
    return nss::ExitCode::kOk;
  });
}
