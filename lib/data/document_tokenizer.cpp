#include "data/document_tokenizer.h"

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/sha256.h"
#include "data/byte_tokenizer.h"
#include "hf/hub_cache.h"
#include "tokenizer/tokenizer.h"

namespace nss::data {
namespace {

// The `tokenizer` attribute of a file made with a tokenizer.json: the prefix, then its path.
constexpr const char* kRecordedJsonPrefix = "hf:";

class ByteLevelTokenizer final : public DocumentTokenizer {
 public:
  ByteLevelTokenizer() {
    metadata_.tokenizer = byte_tokenizer::kName;
    metadata_.vocab_size = byte_tokenizer::kVocabSize;
    metadata_.bos_token_id = byte_tokenizer::kBos;
    metadata_.eos_token_id = byte_tokenizer::kEos;
  }
  void encode(std::string_view text, std::vector<std::int64_t>& ids) const override {
    for (const unsigned char byte : text) ids.push_back(byte);
  }
  std::int64_t count(std::string_view text) const override {
    return static_cast<std::int64_t>(text.size());
  }
  bool counts_without_encoding() const override { return true; }
};

// The candidates prepare_data_hf.py tries when neither a flag nor
// tokenizer_config.json names the token.
const char* const kBosCandidates[] = {"<|begin_of_text|>", "<s>", "<bos>", "<|startoftext|>"};
const char* const kEosCandidates[] = {"<|end_of_text|>", "<|endoftext|>", "</s>", "<eos>"};

// As os.path.join(path, "tokenizer.json") for a directory, else the path;
// a hub name that is no local path ("Org/Name[@revision]") is its snapshot
// in the local Hugging Face cache.
std::string tokenizer_file(const std::string& given) {
  std::error_code error;
  const std::string path = !std::filesystem::exists(given, error) && hf::parse_hub_reference(given)
                               ? hf::resolve_model_directory(given)
                               : given;
  std::string file = path;
  if (std::filesystem::is_directory(path))
    file = path + (!path.empty() && path.back() == '/' ? "" : "/") + "tokenizer.json";
  if (!std::filesystem::is_regular_file(file))
    throw UsageError("data", "no tokenizer.json at " + path,
                     "give a local tokenizer.json or the directory holding it (nothing is "
                     "downloaded)");
  return file;
}

// tokenizer_config.json's `key` (a string or {"content": ...}); empty if none.
std::string configured_special(const std::string& tokenizer_json, const char* key) {
  const auto config = std::filesystem::path(tokenizer_json).parent_path() / "tokenizer_config.json";
  if (!std::filesystem::is_regular_file(config)) return "";
  std::ifstream in(config);
  const auto json = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded())
    throw DataError("data", "cannot parse " + config.string() + " as JSON",
                    "fix the file, or pass --bos-token and --eos-token");
  if (!json.is_object() || !json.contains(key)) return "";
  const auto& value = json.at(key);
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && value.contains("content") && value.at("content").is_string())
    return value.at("content").get<std::string>();
  return "";
}

// prepare_data_hf.py's special_id(): the flag, else tokenizer_config.json,
// else the first candidate in the vocabulary.
template <std::size_t N>
std::optional<std::int64_t> special_id(const tokenizer::Tokenizer& tokenizer,
                                       const std::string& tokenizer_json, const std::string& flag,
                                       const char* key, const char* const (&candidates)[N],
                                       bool required) {
  if (flag == "none" && !required) return std::nullopt;
  const std::string name = flag.empty() ? configured_special(tokenizer_json, key) : flag;
  if (!name.empty()) {
    const auto id = tokenizer.token_to_id(name);
    if (!id)
      throw UsageError(
          "data",
          std::string(key) + " '" + name + "' is not in the vocabulary of " + tokenizer_json,
          "pass --bos-token/--eos-token with a token the tokenizer has");
    return *id;
  }
  for (const char* candidate : candidates)
    if (const auto id = tokenizer.token_to_id(candidate)) return *id;
  if (required)
    throw UsageError("data", "cannot tell the end-of-document token of " + tokenizer_json,
                     "pass --eos-token TOKEN");
  return std::nullopt;
}

class JsonTokenizer final : public DocumentTokenizer {
 public:
  explicit JsonTokenizer(const TokenizerChoice& choice)
      : file_(tokenizer_file(choice.path)), tokenizer_(tokenizer::Tokenizer::from_file(file_)) {
    metadata_.tokenizer = kRecordedJsonPrefix + file_;
    metadata_.tokenizer_sha256 = sha256_file_hex(file_);
    metadata_.vocab_size = tokenizer_.vocab_size();
    metadata_.bos_token_id =
        special_id(tokenizer_, file_, choice.bos_token, "bos_token", kBosCandidates, false);
    metadata_.eos_token_id =
        special_id(tokenizer_, file_, choice.eos_token, "eos_token", kEosCandidates, true);
  }
  void encode(std::string_view text, std::vector<std::int64_t>& ids) const override {
    const auto encoded = tokenizer_.encode(text, /*add_special_tokens=*/false);
    ids.insert(ids.end(), encoded.begin(), encoded.end());
  }
  std::int64_t count(std::string_view text) const override {
    return static_cast<std::int64_t>(tokenizer_.encode(text, false).size());
  }
  bool counts_without_encoding() const override { return false; }

 private:
  std::string file_;
  tokenizer::Tokenizer tokenizer_;
};

}  // namespace

void DocumentTokenizer::encode_document(std::string_view text,
                                        std::vector<std::int64_t>& ids) const {
  if (bos()) ids.push_back(*bos());
  encode(text, ids);
  ids.push_back(eos());
}

DType DocumentTokenizer::dtype() const {
  return *metadata_.vocab_size <= (std::int64_t{1} << 16) ? DType::kUInt16 : DType::kUInt32;
}

std::unique_ptr<DocumentTokenizer> make_byte_level_tokenizer() {
  return std::make_unique<ByteLevelTokenizer>();
}

std::unique_ptr<DocumentTokenizer> make_json_tokenizer(const TokenizerChoice& choice) {
  return std::make_unique<JsonTokenizer>(choice);
}

std::optional<std::string> recorded_tokenizer_file(const std::string& recorded) {
  const std::string prefix = kRecordedJsonPrefix;
  if (recorded.rfind(prefix, 0) != 0) return std::nullopt;
  return recorded.substr(prefix.size());
}

std::unique_ptr<DocumentTokenizer> recorded_tokenizer(const TokenFileMetadata& metadata) {
  if (metadata.tokenizer == byte_tokenizer::kName) return make_byte_level_tokenizer();
  const std::optional<std::string> file = recorded_tokenizer_file(metadata.tokenizer);
  if (!file) return nullptr;
  TokenizerChoice choice;
  choice.path = *file;
  std::unique_ptr<DocumentTokenizer> tokenizer;
  try {
    tokenizer = make_json_tokenizer(choice);
  } catch (const Error&) {
    return nullptr;
  }
  // Another tokenizer.json at the recorded path would make other token ids.
  const std::string& recorded_hash = metadata.tokenizer_sha256;
  if (!recorded_hash.empty() && tokenizer->metadata().tokenizer_sha256 != recorded_hash)
    return nullptr;
  return tokenizer;
}

}  // namespace nss::data
