// Reads one JSON object per line ({"logits": [...], "temperature", "top_k",
// "top_p", and optionally "refused": ids whose logits a constraint sets to
// -infinity first;
// "top_p"}) and prints what TokenSampler would draw from: {"tokens": [...],
// "probabilities": [...]}. The sampler parity test compares it with
// transformers' logits warpers.
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "generate/token_sampler.h"

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    const auto request = nlohmann::json::parse(line);
    auto logits = request.at("logits").get<std::vector<float>>();
    // "refused": ids a constraint masks (--constrain schema), -inf first.
    if (request.contains("refused"))
      for (const auto id : request.at("refused").get<std::vector<std::size_t>>())
        logits.at(id) = -std::numeric_limits<float>::infinity();
    const nss::generate::TokenSampler sampler({request.at("temperature").get<double>(),
                                               request.at("top_k").get<std::int64_t>(),
                                               request.at("top_p").get<double>(), 0});
    nlohmann::json tokens = nlohmann::json::array(), probabilities = nlohmann::json::array();
    for (const auto& c :
         sampler.candidates(logits.data(), static_cast<std::int64_t>(logits.size()))) {
      tokens.push_back(c.token);
      probabilities.push_back(c.probability);
    }
    std::cout << nlohmann::json{{"tokens", tokens}, {"probabilities", probabilities}}.dump()
              << "\n";
  }
  return 0;
}
