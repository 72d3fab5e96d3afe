#include "generate/text_codec.h"

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "core/sha256.h"
#include "data/byte_tokenizer.h"
#include "data/document_tokenizer.h"
#include "generate/end_ids.h"
#include "generate/sentencepiece_codec.h"
#include "tokenizer/tokenizer.h"

namespace fs = std::filesystem;

namespace nss::generate {
namespace {

std::vector<std::int64_t> widen(const std::vector<std::int32_t>& ids) {
  return {ids.begin(), ids.end()};
}

std::vector<std::int32_t> narrow(const std::vector<std::int64_t>& ids) {
  std::vector<std::int32_t> out;
  for (const std::int64_t id : ids)
    if (id >= 0 && id <= INT32_MAX) out.push_back(static_cast<std::int32_t>(id));
  return out;
}

class JsonCodec : public TextCodec {
 public:
  explicit JsonCodec(const std::string& path)
      : path_(path), tokenizer_(tokenizer::Tokenizer::from_file(path)) {}
  std::vector<std::int64_t> encode_prompt(const std::string& text) const override {
    return widen(tokenizer_.encode(text, true));
  }
  std::vector<std::int64_t> encode_plain(const std::string& text) const override {
    return widen(tokenizer_.encode(text, false));
  }
  std::string decode(const std::vector<std::int64_t>& ids) const override {
    return tokenizer_.decode(narrow(ids), true);
  }
  std::vector<std::optional<std::string>> token_bytes(bool first) const override {
    try {
      return tokenizer_.token_bytes(first);
    } catch (const DataError& e) {
      throw UsageError("generate", path_ + ": " + e.message(),
                       "generate with --constrain none, or with a tokenizer whose tokens decode "
                       "alone");
    }
  }
  std::string description() const override { return "tokenizer.json " + path_; }
  void set_end_ids(std::vector<std::int64_t> ids) { end_ids_ = std::move(ids); }
  const tokenizer::Tokenizer& tokenizer() const { return tokenizer_; }

 private:
  std::string path_;
  tokenizer::Tokenizer tokenizer_;
};

class ByteCodec : public TextCodec {
 public:
  ByteCodec() { end_ids_ = {data::byte_tokenizer::kEos}; }
  std::vector<std::int64_t> encode_prompt(const std::string& text) const override {
    std::vector<std::int64_t> ids{data::byte_tokenizer::kBos};
    for (const unsigned char c : text) ids.push_back(c);
    return ids;
  }
  std::vector<std::int64_t> encode_plain(const std::string& text) const override {
    return {text.begin(), text.end()};
  }
  std::string decode(const std::vector<std::int64_t>& ids) const override {
    std::string text;
    for (const std::int64_t id : ids)
      if (id >= 0 && id < 256) text += static_cast<char>(id);
    return text;
  }
  std::vector<std::optional<std::string>> token_bytes(bool) const override {
    std::vector<std::optional<std::string>> bytes(data::byte_tokenizer::kVocabSize);
    for (int id = 0; id < 256; ++id) bytes[id] = std::string(1, static_cast<char>(id));
    return bytes;
  }
  std::string description() const override { return "the built-in byte-level tokenizer"; }
};

// The tokenizer file `path` names: itself, or the one a directory holds.
std::string tokenizer_file(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return path;
  for (const char* name : {"tokenizer.json", "tokenizer.model"})
    if (fs::is_regular_file(fs::path(path) / name, ec)) return (fs::path(path) / name).string();
  return "";
}

std::unique_ptr<TextCodec> open_file(const std::string& file, const std::string& model_dir) {
  // Through a bridge library kept apart from libtorch's protobuf.
  if (fs::path(file).extension() == ".model") return open_sentencepiece_codec(file, model_dir);
  // Without an eos_token_id in the model directory: the tokenizer's own
  // end-of-text tokens (Llama 3, SmolLM2, Llama 2 names).
  std::vector<std::int64_t> own;
  auto codec = std::make_unique<JsonCodec>(file);
  for (const char* name : {"<|end_of_text|>", "<|endoftext|>", "<|eot_id|>", "<|im_end|>", "</s>"})
    if (const auto id = codec->tokenizer().token_to_id(name)) own.push_back(*id);
  return with_end_ids(std::move(codec), model_dir, std::move(own));
}

}  // namespace

void TextCodec::also_end_at(std::int64_t id) {
  if (std::find(end_ids_.begin(), end_ids_.end(), id) == end_ids_.end()) end_ids_.push_back(id);
}

namespace {

// The codec the training data was tokenised with, when it can be found
// unchanged; nullptr when the data's record names none.
std::unique_ptr<TextCodec> trained_codec(const TokenizerSources& s) {
  if (s.trained_with == data::byte_tokenizer::kName) return std::make_unique<ByteCodec>();
  const std::optional<std::string> named = data::recorded_tokenizer_file(s.trained_with);
  if (!named) return nullptr;
  const std::string& recorded = *named;
  std::error_code ec;
  const auto unchanged = [&](const std::string& file) {
    return !file.empty() && fs::is_regular_file(file, ec) &&
           (s.trained_sha256.empty() || sha256_file_hex(file) == s.trained_sha256);
  };
  if (unchanged(recorded)) return open_file(recorded, s.model_dir);
  const std::string beside = s.model_dir.empty() ? "" : tokenizer_file(s.model_dir);
  if (!s.trained_sha256.empty() && unchanged(beside)) return open_file(beside, s.model_dir);
  throw UsageError("generate",
                   "the model was trained on data tokenised with " + recorded +
                       (s.trained_sha256.empty() ? "" : " (sha256 " + s.trained_sha256 + ")") +
                       ", which " +
                       (fs::exists(recorded, ec) ? "has changed since" : "no longer exists") +
                       (beside.empty() ? "" : ", and " + beside + " is another tokenizer"),
                   "give that tokenizer with --tokenizer PATH");
}

}  // namespace

std::unique_ptr<TextCodec> open_text_codec(const TokenizerSources& s) {
  if (!s.flag.empty()) {
    std::error_code ec;
    if (!fs::exists(s.flag, ec))
      throw UsageError("generate", "--tokenizer " + s.flag + " does not exist",
                       "give a tokenizer.json, a tokenizer.model or a directory holding one");
    const std::string file = tokenizer_file(s.flag);
    if (file.empty())
      throw UsageError("generate",
                       "--tokenizer " + s.flag + " holds no tokenizer.json or tokenizer.model",
                       "give a tokenizer.json, a tokenizer.model or a directory holding one");
    return open_file(file, s.model_dir);
  }
  if (auto codec = trained_codec(s)) return codec;
  if (!s.model_dir.empty()) {
    const std::string file = tokenizer_file(s.model_dir);
    if (!file.empty()) return open_file(file, s.model_dir);
  }
  if (s.vocab_size == data::byte_tokenizer::kVocabSize) return std::make_unique<ByteCodec>();
  throw UsageError(
      "generate",
      "no tokenizer for a model of " + std::to_string(s.vocab_size) + " tokens: " +
          (s.model_dir.empty() ? std::string("it was not started from a model directory")
                               : s.model_dir + " holds no tokenizer.json or tokenizer.model"),
      "give one with --tokenizer PATH");
}

}  // namespace nss::generate
