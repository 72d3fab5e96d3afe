// sentencepiece_probe MODEL: reads one JSON string a line from stdin and
// prints, a line each, {"ids", "ids_bos", "decoded"}: the ids without and
// with BOS, and the text decode gives for them. The first output line is
// {"vocab_size": N}. For the SentencePiece parity test.
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/app_main.h"
#include "tokenizer/sentencepiece_tokenizer.h"

int main(int argc, char** argv) {
  return nss::run_app("sentencepiece_probe", [&] {
    if (argc != 2) throw nss::UsageError("probe", "usage: sentencepiece_probe MODEL");
    const auto tokenizer = nss::tokenizer::SentencePieceTokenizer::from_file(argv[1]);
    std::cout << nlohmann::json{{"vocab_size", tokenizer.vocab_size()}}.dump() << "\n";
    std::string line;
    while (std::getline(std::cin, line)) {
      const std::string text = nlohmann::json::parse(line).get<std::string>();
      const auto ids = tokenizer.encode(text, false);
      std::cout << nlohmann::json{{"ids", ids},
                                  {"ids_bos", tokenizer.encode(text, true)},
                                  {"decoded", tokenizer.decode(ids)}}
                       .dump()
                << "\n";
    }
    return nss::ExitCode::kOk;
  });
}
