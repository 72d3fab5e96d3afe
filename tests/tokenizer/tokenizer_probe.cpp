// tokenizer_probe TOKENIZER_JSON: reads one JSON string a line from stdin and
// prints, a line each, {"ids", "ids_plain", "decoded", "decoded_skip",
// "decoded_each"}: the ids with and without special tokens, the text decode
// gives for `ids` keeping and skipping special tokens, and for each id alone
// (parts of a character: replacement characters), and "token_bytes_agree":
// whether the plain ids' text is what Tokenizer::token_bytes says each id
// adds, joined (null where the tokenizer cannot say). The first output line
// is {"vocab_size": N}. Lines are JSON so that the corpus can hold newlines.
//
// tokenizer_probe TOKENIZER_JSON --bench TEXT_FILE REPEATS: encodes the file
// REPEATS times and prints {"tokens", "seconds", "load_seconds"} (the best
// repeat), for scripts/bench/tokenizer_speed.py.
#include <chrono>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/app_main.h"
#include "core/utf8.h"
#include "tokenizer/tokenizer.h"

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

nss::ExitCode bench(const std::string& tokenizer_path, const std::string& text_path, int repeats) {
  auto start = std::chrono::steady_clock::now();
  const auto tokenizer = nss::tokenizer::Tokenizer::from_file(tokenizer_path);
  const double load_seconds = seconds_since(start);
  std::ifstream in(text_path, std::ios::binary);
  if (!in) throw nss::DataError("probe", "cannot read " + text_path);
  std::ostringstream text;
  text << in.rdbuf();
  size_t tokens = 0;
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    start = std::chrono::steady_clock::now();
    tokens = tokenizer.encode(text.str(), false).size();
    best = std::min(best, seconds_since(start));
  }
  std::cout << nlohmann::json{{"tokens", tokens}, {"seconds", best}, {"load_seconds", load_seconds}}
            << "\n";
  return nss::ExitCode::kOk;
}

// The bytes each id adds at the start and after another, or none when the
// tokenizer cannot tell them apart from their neighbours.
struct TokenBytes {
  std::vector<std::optional<std::string>> first, after;
  bool known = false;
};

TokenBytes token_bytes(const nss::tokenizer::Tokenizer& tokenizer) {
  TokenBytes out;
  try {
    out.first = tokenizer.token_bytes(true);
    out.after = tokenizer.token_bytes(false);
    out.known = true;
  } catch (const nss::DataError&) {
  }
  return out;
}

nlohmann::json bytes_agree(const TokenBytes& bytes, const nss::tokenizer::Tokenizer& tokenizer,
                           const std::vector<int32_t>& ids) {
  if (!bytes.known) return nullptr;
  std::string joined;
  bool first = true;
  for (const int32_t id : ids) {
    const auto& piece = (first ? bytes.first : bytes.after)[id];
    if (!piece) continue;
    joined += *piece;
    first = false;
  }
  return nss::utf8_lossy(joined) == tokenizer.decode(ids, true);
}

}  // namespace

int main(int argc, char** argv) {
  return nss::run_app("tokenizer_probe", [&] {
    if (argc == 5 && std::string(argv[2]) == "--bench") {
      return bench(argv[1], argv[3], std::stoi(argv[4]));
    }
    if (argc != 2) {
      throw nss::UsageError("probe",
                            "usage: tokenizer_probe TOKENIZER_JSON [--bench TEXT_FILE REPEATS]");
    }
    const auto tokenizer = nss::tokenizer::Tokenizer::from_file(argv[1]);
    std::cout << nlohmann::json{{"vocab_size", tokenizer.vocab_size()}} << "\n";
    const TokenBytes bytes = token_bytes(tokenizer);
    std::string line;
    while (std::getline(std::cin, line)) {
      const std::string text = nlohmann::json::parse(line).get<std::string>();
      const auto ids = tokenizer.encode(text, true);
      const auto plain = tokenizer.encode(text, false);
      std::vector<std::string> each;
      for (const int32_t id : ids) each.push_back(tokenizer.decode({id}, false));
      const nlohmann::json out = {{"ids", ids},
                                  {"ids_plain", plain},
                                  {"token_bytes_agree", bytes_agree(bytes, tokenizer, plain)},
                                  {"decoded", tokenizer.decode(ids, false)},
                                  {"decoded_skip", tokenizer.decode(ids, true)},
                                  {"decoded_each", each}};
      // Replacement characters, not an exception, for any invalid UTF-8
      // (there should be none: decode returns valid UTF-8).
      std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    }
    return nss::ExitCode::kOk;
  });
}
