// The C++ tagger (lib/ner) on texts, for the parity test against
// transformers: reads JSON lines {"text": ...} on stdin and prints per text
// {"entities": [{"group", "begin", "end", "score"}], "words": [[b, e], ...]}
// with byte offsets; with --logits ID_LINES, prints the logits of each line
// of space-separated token ids instead.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "hf/safetensors_file.h"
#include "ner/bert_words.h"
#include "ner/encoder.h"
#include "ner/entity_tagger.h"

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int print_logits(const std::string& directory) {
  const auto config = nss::ner::parse_encoder_config(read_file(directory + "/config.json"),
                                                     directory + "/config.json");
  const auto weights = nss::hf::SafetensorsFile::open(directory + "/model.safetensors");
  const auto encoder = nss::ner::Encoder::load(config, *weights);
  std::vector<std::vector<std::int32_t>> sequences;
  for (std::string line; std::getline(std::cin, line);) {
    std::istringstream ids(line);
    sequences.emplace_back();
    for (std::int32_t id; ids >> id;) sequences.back().push_back(id);
  }
  // All sequences in one pass: the batch must not change any sequence's logits.
  const std::vector<float> logits = encoder.logits(sequences);
  nlohmann::json out = nlohmann::json::array();
  std::size_t row = 0;
  const std::size_t labels = config.labels.size();
  for (const auto& sequence : sequences) {
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t t = 0; t < sequence.size(); ++t, ++row)
      rows.push_back(
          std::vector<float>(logits.begin() + row * labels, logits.begin() + (row + 1) * labels));
    out.push_back(rows);
  }
  std::cout << out.dump() << "\n";
  return 0;
}

int print_entities(const std::string& directory) {
  auto tagger = nss::ner::EntityTagger::load(directory, nss::pii::all_entities());
  std::vector<std::string> texts;
  for (std::string line; std::getline(std::cin, line);)
    texts.push_back(nlohmann::json::parse(line).at("text").get<std::string>());
  const std::vector<std::string_view> views(texts.begin(), texts.end());
  const auto tagged = tagger->tag(views);
  const auto spans = tagger->find(views);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    nlohmann::json entities = nlohmann::json::array(), words = nlohmann::json::array(),
                   found = nlohmann::json::array();
    for (const auto& e : tagged[i])
      entities.push_back(
          {{"group", e.group}, {"begin", e.begin}, {"end", e.end}, {"score", e.score}});
    for (const auto& w : nss::ner::bert_words(texts[i], true)) words.push_back({w.begin, w.end});
    for (const auto& s : spans[i])
      found.push_back(
          {{"entity", nss::pii::entity_name(s.entity)}, {"begin", s.begin}, {"end", s.end}});
    std::cout << nlohmann::json{{"entities", entities}, {"words", words}, {"spans", found}}.dump()
              << "\n";
  }
  std::cerr << tagger->describe().dump() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc == 3 && std::string(argv[1]) == "--logits") return print_logits(argv[2]);
    if (argc == 2) return print_entities(argv[1]);
    std::fprintf(stderr,
                 "usage: ner_probe MODEL_DIR < texts.jsonl | ner_probe --logits MODEL_DIR < ids\n");
    return 2;
  } catch (const nss::Error& e) {
    std::fprintf(stderr, "ner_probe: %s%s%s\n", e.message().c_str(), e.hint().empty() ? "" : "; ",
                 e.hint().c_str());
    return static_cast<int>(e.code());
  }
}
