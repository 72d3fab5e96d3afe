// tokenizer_probe TOKENIZER_JSON: reads one JSON string a line from stdin and
// prints, a line each, {"ids", "ids_plain", "decoded", "decoded_skip",
// "decoded_each"}: the ids with and without special tokens, the text decode
// gives for `ids` keeping and skipping special tokens, and for each id alone
// (parts of a character: replacement characters). The first output line is
// {"vocab_size": N}. Lines are JSON so that the corpus can hold newlines.
//
// tokenizer_probe TOKENIZER_JSON --bench TEXT_FILE REPEATS: encodes the file
// REPEATS times and prints {"tokens", "seconds", "load_seconds"} (the best
// repeat), for scripts/bench/tokenizer_speed.py.
#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/app_main.h"
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
    std::string line;
    while (std::getline(std::cin, line)) {
      const std::string text = nlohmann::json::parse(line).get<std::string>();
      const auto ids = tokenizer.encode(text, true);
      std::vector<std::string> each;
      for (const int32_t id : ids) each.push_back(tokenizer.decode({id}, false));
      const nlohmann::json out = {{"ids", ids},
                                  {"ids_plain", tokenizer.encode(text, false)},
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
