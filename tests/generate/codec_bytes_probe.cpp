// What TextCodec::token_bytes says each token adds, joined, against the
// codec's decode: codec_bytes_probe TOKENIZER (a tokenizer.json or a
// SentencePiece tokenizer.model) reads one JSON string a line and prints
// {"ids": N, "agree": true|false} a line each (the text encoded without
// special tokens, its first token's bytes then the others', made valid
// UTF-8, compared with decode).
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/app_main.h"
#include "core/utf8.h"
#include "generate/text_codec.h"

int main(int argc, char** argv) {
  return nss::run_app("codec_bytes_probe", [&] {
    if (argc != 2) throw nss::UsageError("probe", "usage: codec_bytes_probe TOKENIZER < texts");
    nss::generate::TokenizerSources sources;
    sources.flag = argv[1];
    const auto codec = nss::generate::open_text_codec(sources);
    const auto first = codec->token_bytes(true), after = codec->token_bytes(false);
    for (std::string line; std::getline(std::cin, line);) {
      const auto ids = codec->encode_plain(nlohmann::json::parse(line).get<std::string>());
      std::string joined;
      bool at_start = true;
      for (const std::int64_t id : ids) {
        const auto& piece = (at_start ? first : after).at(static_cast<std::size_t>(id));
        if (!piece) continue;
        joined += *piece;
        at_start = false;
      }
      std::cout << nlohmann::json{{"ids", ids.size()},
                                  {"agree", nss::utf8_lossy(joined) == codec->decode(ids)}}
                << "\n";
    }
    return nss::ExitCode::kOk;
  });
}
