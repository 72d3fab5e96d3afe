#include "ner/entity_tagger.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <set>

#include "core/error.h"
#include "core/fs.h"
#include "core/sha256.h"
#include "hf/weight_files.h"
#include "ner/bert_words.h"
#include "ner/entity_labels.h"

namespace nss::ner {
namespace {

namespace fs = std::filesystem;

constexpr const char* kComponent = "ner";
constexpr const char* kFix =
    "give the directory of a BERT or DistilBERT token-classification model saved by "
    "transformers' save_pretrained (config.json, model.safetensors, tokenizer.json)";
// Tokens per forward pass: bounds the activations (tokens x intermediate floats).
constexpr std::size_t kBatchTokens = 8192;

std::string model_file(const std::string& directory, const char* name) {
  const std::string path = (fs::path(directory) / name).string();
  std::error_code error;
  if (!fs::is_regular_file(path, error))
    throw DataError(kComponent, "the named-entity model has no file " + path, kFix);
  return path;
}

std::string weights_file(const std::string& directory) {
  const fs::path dir(directory);
  std::error_code error;
  if (fs::exists(dir / hf::kWeightsFile, error)) return model_file(directory, hf::kWeightsFile);
  if (fs::exists(dir / hf::kWeightsIndexFile, error))
    throw DataError(
        kComponent,
        directory + " holds sharded weights; a tagger is read from one " + hf::kWeightsFile,
        "save it with save_pretrained(..., max_shard_size=\"10GB\")");
  if (fs::exists(dir / "pytorch_model.bin", error))
    throw DataError(kComponent, directory + " has pytorch_model.bin, which is not read (a pickle)",
                    "convert it with transformers: AutoModelForTokenClassification."
                    "from_pretrained(dir).save_pretrained(dir, safe_serialization=True)");
  return model_file(directory, hf::kWeightsFile);
}

// The tagger splits words itself (bert_words.h) and encodes each alone,
// which is exact only for BERT's normalizer, pre-tokenizer and WordPiece.
bool check_bert_pipeline(const std::string& text, const std::string& path) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw DataError(kComponent, path + " is not valid JSON: " + e.what(), kFix);
  }
  auto type_of = [&](const char* part) {
    const auto it = json.find(part);
    return it != json.end() && it->is_object() ? it->value("type", "") : std::string();
  };
  const std::string normalizer = type_of("normalizer"), pre = type_of("pre_tokenizer"),
                    model = type_of("model");
  if (normalizer != "BertNormalizer" || pre != "BertPreTokenizer" || model != "WordPiece")
    throw DataError(kComponent,
                    path + " is not BERT's WordPiece pipeline (normalizer \"" + normalizer +
                        "\", pre-tokenizer \"" + pre + "\", model \"" + model + "\")",
                    kFix);
  return json["normalizer"].value("handle_chinese_chars", true);
}

// Where a word's first token landed among the batch's tokens.
struct WordRow {
  std::size_t text, word;
  std::size_t row;
};

// Accumulates the words of one text into [CLS] ... [SEP] sequences of at
// most max_positions tokens, a word never split across two.
class SequenceBuilder {
 public:
  SequenceBuilder(std::int32_t cls, std::int32_t sep, std::size_t max_positions)
      : cls_(cls), sep_(sep), budget_(max_positions - 2) {}

  void add_word(std::size_t text, std::size_t word, std::vector<std::int32_t> ids) {
    if (ids.empty()) return;  // nothing but characters the normalizer drops
    if (ids.size() > budget_) ids.resize(budget_);
    if (current_.size() - 1 + ids.size() > budget_) close();
    rows_.push_back({text, word, rows_before_ + current_.size()});
    current_.insert(current_.end(), ids.begin(), ids.end());
  }

  void close() {
    if (current_.size() <= 1) return;
    current_.push_back(sep_);
    rows_before_ += current_.size();
    sequences_.push_back(std::move(current_));
    current_ = {cls_};
  }

  std::vector<std::vector<std::int32_t>>& sequences() { return sequences_; }
  const std::vector<WordRow>& rows() const { return rows_; }

 private:
  std::int32_t cls_, sep_;
  std::size_t budget_, rows_before_ = 0;
  std::vector<std::int32_t> current_{cls_};
  std::vector<std::vector<std::int32_t>> sequences_;
  std::vector<WordRow> rows_;
};

// The logits of every sequence, in passes of at most kBatchTokens tokens.
std::vector<float> all_logits(const Encoder& encoder,
                              std::vector<std::vector<std::int32_t>>& sequences) {
  std::vector<float> out;
  std::vector<std::vector<std::int32_t>> batch;
  std::size_t tokens = 0;
  auto run = [&] {
    if (batch.empty()) return;
    const std::vector<float> logits = encoder.logits(batch);
    out.insert(out.end(), logits.begin(), logits.end());
    batch.clear();
    tokens = 0;
  };
  for (auto& sequence : sequences) {
    if (tokens + sequence.size() > kBatchTokens) run();
    tokens += sequence.size();
    batch.push_back(std::move(sequence));
  }
  run();
  return out;
}

// The pipeline's group_entities over one text's labelled words.
class Grouper {
 public:
  explicit Grouper(std::vector<TaggedEntity>& out) : out_(out) {}

  void add(const std::string& label, std::size_t begin, std::size_t end, double score) {
    LabelTag tag = label_tag(label);
    if (count_ == 0 || tag.group != open_.group || tag.begins) {
      close();
      open_ = {std::move(tag.group), begin, end, 0};
    }
    open_.end = end;
    open_.score += score;
    ++count_;
  }

  void close() {
    if (count_ > 0 && open_.group != "O") {
      open_.score /= static_cast<double>(count_);
      out_.push_back(open_);
    }
    count_ = 0;
  }

 private:
  std::vector<TaggedEntity>& out_;
  TaggedEntity open_;
  std::size_t count_ = 0;
};

}  // namespace

std::unique_ptr<EntityTagger> EntityTagger::load(const std::string& directory,
                                                 std::vector<pii::Entity> wanted) {
  std::error_code error;
  if (!fs::is_directory(directory, error))
    throw UsageError(kComponent, "--pii-ner-model " + directory + " is not a directory", kFix);
  const std::string config_path = model_file(directory, hf::kConfigFile);
  if (std::error_code missing; !fs::exists(fs::path(directory) / "tokenizer.json", missing) &&
                               fs::exists(fs::path(directory) / "vocab.txt", missing))
    throw DataError(kComponent, directory + " has vocab.txt but no tokenizer.json",
                    "write it with transformers: AutoTokenizer.from_pretrained(DIR)."
                    "save_pretrained(DIR)");
  const std::string tokenizer_path = model_file(directory, "tokenizer.json");
  const EncoderConfig config =
      parse_encoder_config(read_text_file(config_path, kComponent), config_path);
  const std::string tokenizer_text = read_text_file(tokenizer_path, kComponent);
  const bool cjk_alone = check_bert_pipeline(tokenizer_text, tokenizer_path);
  tokenizer::Tokenizer tokenizer =
      tokenizer::Tokenizer::from_json_text(tokenizer_text, tokenizer_path);
  if (tokenizer.vocab_size() > config.vocab)
    throw DataError(kComponent,
                    tokenizer_path + " has ids up to " +
                        std::to_string(tokenizer.vocab_size() - 1) + ", beyond the model's " +
                        std::to_string(config.vocab) + " embeddings",
                    kFix);
  const std::vector<std::int32_t> specials = tokenizer.encode("", true);
  if (specials.size() != 2 || config.max_positions < 3)
    throw DataError(kComponent,
                    tokenizer_path +
                        ": its post-processor does not put one token before and "
                        "one after a sequence, as BERT's [CLS] ... [SEP]",
                    kFix);
  const std::string weights_path = weights_file(directory);
  const auto weights = hf::SafetensorsFile::open(weights_path);
  std::unique_ptr<EntityTagger> tagger(
      new EntityTagger(fs::absolute(directory).lexically_normal().string(),
                       fs::absolute(weights_path).lexically_normal().string(), std::move(tokenizer),
                       Encoder::load(config, *weights)));
  tagger->weights_sha256_ = sha256_file_hex(weights_path);
  tagger->cjk_alone_ = cjk_alone;
  tagger->cls_ = specials.front();
  tagger->sep_ = specials.back();
  tagger->wanted_ = std::move(wanted);
  return tagger;
}

std::vector<std::vector<TaggedEntity>> EntityTagger::tag(
    const std::vector<std::string_view>& texts) const {
  const EncoderConfig& config = encoder_.config();
  SequenceBuilder builder(cls_, sep_, static_cast<std::size_t>(config.max_positions));
  std::vector<std::vector<Word>> words(texts.size());
  for (std::size_t t = 0; t < texts.size(); ++t) {
    words[t] = bert_words(texts[t], cjk_alone_);
    for (std::size_t w = 0; w < words[t].size(); ++w) {
      const Word& word = words[t][w];
      builder.add_word(
          t, w, tokenizer_.encode(texts[t].substr(word.begin, word.end - word.begin), false));
    }
    builder.close();
  }
  const std::vector<float> logits = all_logits(encoder_, builder.sequences());
  const std::size_t labels = config.labels.size();
  std::vector<std::vector<TaggedEntity>> out(texts.size());
  std::size_t i = 0;
  const std::vector<WordRow>& rows = builder.rows();
  for (std::size_t t = 0; t < texts.size(); ++t) {
    Grouper grouper(out[t]);
    for (; i < rows.size() && rows[i].text == t; ++i) {
      const float* row = logits.data() + rows[i].row * labels;
      const std::size_t best = static_cast<std::size_t>(std::max_element(row, row + labels) - row);
      double sum = 0;
      for (std::size_t l = 0; l < labels; ++l) sum += std::exp(double(row[l]) - row[best]);
      const Word& word = words[t][rows[i].word];
      grouper.add(config.labels[best], word.begin, word.end, 1.0 / sum);
    }
    grouper.close();
  }
  return out;
}

std::vector<std::vector<pii::Span>> EntityTagger::find(const std::vector<std::string_view>& cells) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::vector<pii::Span>> out(cells.size());
  const std::vector<std::vector<TaggedEntity>> tagged = tag(cells);
  for (std::size_t c = 0; c < cells.size(); ++c)
    for (const TaggedEntity& found : tagged[c]) {
      const auto entity = entity_of_group(found.group);
      if (!entity || std::find(wanted_.begin(), wanted_.end(), *entity) == wanted_.end()) continue;
      out[c].push_back({found.begin, found.end, *entity, found.score});
    }
  usage_.cells += static_cast<std::int64_t>(cells.size());
  for (const auto& spans : out) usage_.entities += static_cast<std::int64_t>(spans.size());
  usage_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

nlohmann::ordered_json EntityTagger::describe() const {
  const EncoderConfig& config = encoder_.config();
  nlohmann::ordered_json labels = nlohmann::ordered_json::object();
  for (const std::string& label : config.labels) {
    const std::string group = label_tag(label).group;
    if (group == "O" || labels.contains(group)) continue;
    const auto entity = entity_of_group(group);
    const bool used = entity && std::find(wanted_.begin(), wanted_.end(), *entity) != wanted_.end();
    labels[group] =
        used ? nlohmann::ordered_json(pii::entity_name(*entity)) : nlohmann::ordered_json();
  }
  return {{"used", true},
          {"directory", directory_},
          {"model_type", config.family->model_type},
          {"weights", weights_path_},
          {"weights_sha256", weights_sha256_},
          {"layers", config.layers},
          {"hidden_size", config.hidden},
          {"aggregation", "first"},
          {"labels", labels},
          {"cells_tagged", usage_.cells},
          {"entities_found", usage_.entities},
          {"seconds", usage_.seconds}};
}

}  // namespace nss::ner
