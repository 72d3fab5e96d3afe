#include "generate/sentencepiece_codec.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <dlfcn.h>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <climits>

#include "core/error.h"
#include "generate/end_ids.h"
#include "tokenizer/sentencepiece_bridge.h"

namespace fs = std::filesystem;

namespace nss::generate {
namespace {

constexpr const char* kBridgeName = "libnss_sentencepiece_bridge.so";

// The bridge's entry points. It is loaded once and never unloaded: its
// protobuf copy registers exit-time destructors.
struct Bridge {
  decltype(&nss_sp_open) open;
  decltype(&nss_sp_close) close;
  decltype(&nss_sp_encode) encode;
  decltype(&nss_sp_decode) decode;
  decltype(&nss_sp_eos_id) eos_id;
  decltype(&nss_sp_vocab_size) vocab_size;
  decltype(&nss_sp_piece_to_id) piece_to_id;
};

template <class Fn>
void resolve(void* handle, const std::string& where, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
  if (fn == nullptr)
    throw InternalError("generate", where + " has no " + name,
                        "rebuild it: cmake --build build --target nss_sentencepiece_bridge");
}

// Beside the executable (build/bin, or bin/ of an install with lib/ beside
// it), else wherever the dynamic loader looks (LD_LIBRARY_PATH).
Bridge load_bridge() {
#if defined(__SANITIZE_ADDRESS__)
  throw UsageError("generate", "SentencePiece models cannot be read in a sanitizer build",
                   "AddressSanitizer refuses RTLD_DEEPBIND: use a build without NSS_SANITIZE");
#endif
  std::vector<std::string> candidates;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    candidates.push_back((exe.parent_path() / kBridgeName).string());
    candidates.push_back((exe.parent_path().parent_path() / "lib" / kBridgeName).string());
  }
  candidates.push_back(kBridgeName);
  std::string tried;
  for (const auto& candidate : candidates) {
    if (candidate != kBridgeName && !fs::exists(candidate, ec)) continue;
    // RTLD_DEEPBIND: libsentencepiece binds to its own protobuf, not to
    // libtorch's; RTLD_LOCAL: libtorch's never sees libsentencepiece's.
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (handle == nullptr) {
      tried += std::string(tried.empty() ? "" : "; ") + dlerror();
      continue;
    }
    const auto abi =
        reinterpret_cast<decltype(&nss_sp_abi_version)>(dlsym(handle, "nss_sp_abi_version"));
    if (abi == nullptr || abi() != NSS_SP_BRIDGE_ABI)
      throw InternalError("generate", candidate + " is another version of the SentencePiece bridge",
                          "rebuild it: cmake --build build --target nss_sentencepiece_bridge");
    Bridge bridge{};
    resolve(handle, candidate, "nss_sp_open", bridge.open);
    resolve(handle, candidate, "nss_sp_close", bridge.close);
    resolve(handle, candidate, "nss_sp_encode", bridge.encode);
    resolve(handle, candidate, "nss_sp_decode", bridge.decode);
    resolve(handle, candidate, "nss_sp_eos_id", bridge.eos_id);
    resolve(handle, candidate, "nss_sp_vocab_size", bridge.vocab_size);
    resolve(handle, candidate, "nss_sp_piece_to_id", bridge.piece_to_id);
    return bridge;
  }
  throw InternalError(
      "generate", std::string("cannot load ") + kBridgeName + ": " + tried,
      "build it (cmake --build build --target nss_sentencepiece_bridge) and keep it "
      "beside nss_generate or in ../lib");
}

const Bridge& bridge() {
  static const Bridge loaded = load_bridge();
  return loaded;
}

class SentencePieceCodec : public TextCodec {
 public:
  explicit SentencePieceCodec(const std::string& path) : path_(path), bridge_(bridge()) {
    char error[512] = "";
    nss_sp_model* model = nullptr;
    if (bridge_.open(path.c_str(), &model, error, sizeof error) != 0)
      throw DataError("tokenizer", path + " is not a SentencePiece model: " + error,
                      "give a SentencePiece tokenizer.model or a tokenizer.json");
    model_.reset(model, bridge_.close);
  }
  std::vector<std::int64_t> encode_prompt(const std::string& text) const override {
    return encode(text, true);
  }
  std::vector<std::int64_t> encode_plain(const std::string& text) const override {
    return encode(text, false);
  }
  std::string decode(const std::vector<std::int64_t>& ids) const override {
    std::vector<std::int32_t> known;
    for (const std::int64_t id : ids)
      if (id >= 0 && id <= INT32_MAX) known.push_back(static_cast<std::int32_t>(id));
    std::string text(4 * known.size() + 16, '\0');
    for (;;) {
      char error[512] = "";
      size_t length = 0;
      if (bridge_.decode(model_.get(), known.data(), known.size(), text.data(), text.size(),
                         &length, error, sizeof error) != 0)
        throw DataError("tokenizer", "SentencePiece could not decode ids: " + std::string(error));
      const bool fits = length <= text.size();
      text.resize(length);
      if (fits) return text;
    }
  }
  // The library's own decoding of each piece: alone (the first piece loses
  // its leading space) or after a plain one whose text is cut off again.
  // Byte pieces decode to replacement characters alone: their byte instead.
  std::vector<std::optional<std::string>> token_bytes(bool first) const override {
    const std::int32_t size = bridge_.vocab_size(model_.get());
    std::vector<int> byte_of(static_cast<std::size_t>(std::max(size, 0)), -1);
    for (int b = 0; b < 256; ++b) {
      char piece[8];
      std::snprintf(piece, sizeof piece, "<0x%02X>", b);
      const std::int32_t id = bridge_.piece_to_id(model_.get(), piece, 6);
      if (id >= 0 && id < size) byte_of[id] = b;
    }
    std::vector<std::int64_t> prefix;
    std::string prefix_text;
    for (std::int32_t id = 0; !first && prefix.empty() && id < size; ++id) {
      const std::string text = byte_of[id] < 0 ? decode({id}) : "";
      if (text.size() == 1 && std::isalnum(static_cast<unsigned char>(text[0]))) {
        prefix = {id};
        prefix_text = text;
      }
    }
    if (!first && prefix.empty())
      throw UsageError("generate", path_ + ": no piece decodes to a single letter or digit",
                       "generate with --constrain none");
    std::vector<std::optional<std::string>> out(byte_of.size());
    for (std::int32_t id = 0; id < size; ++id) {
      if (byte_of[id] >= 0) {
        out[id] = std::string(1, static_cast<char>(byte_of[id]));
        continue;
      }
      std::vector<std::int64_t> ids = prefix;
      ids.push_back(id);
      const std::string text = decode(ids);
      if (text.compare(0, prefix_text.size(), prefix_text) != 0)
        throw UsageError("generate", path_ + ": a piece changes the text before it",
                         "generate with --constrain none");
      if (text.size() > prefix_text.size()) out[id] = text.substr(prefix_text.size());
    }
    return out;
  }
  std::string description() const override { return "tokenizer.model " + path_; }
  void set_end_ids(std::vector<std::int64_t> ids) { end_ids_ = std::move(ids); }
  std::int32_t eos_id() const { return bridge_.eos_id(model_.get()); }

 private:
  std::vector<std::int64_t> encode(const std::string& text, bool add_bos) const {
    std::vector<std::int32_t> ids(text.size() + 2);
    for (;;) {
      char error[512] = "";
      size_t count = 0;
      if (bridge_.encode(model_.get(), text.data(), text.size(), add_bos ? 1 : 0, ids.data(),
                         ids.size(), &count, error, sizeof error) != 0)
        throw DataError("tokenizer",
                        "SentencePiece could not encode a text: " + std::string(error));
      const bool fits = count <= ids.size();
      ids.resize(count);
      if (fits) return {ids.begin(), ids.end()};
    }
  }

  std::string path_;
  const Bridge& bridge_;
  std::shared_ptr<nss_sp_model> model_;
};

}  // namespace

std::unique_ptr<TextCodec> open_sentencepiece_codec(const std::string& model_file,
                                                    const std::string& model_dir) {
  std::error_code ec;
  if (!fs::is_regular_file(model_file, ec))
    throw DataError("tokenizer", model_file + " is not a regular file",
                    "give a SentencePiece tokenizer.model or a tokenizer.json");
  auto codec = std::make_unique<SentencePieceCodec>(model_file);
  std::vector<std::int64_t> own;
  if (codec->eos_id() >= 0) own.push_back(codec->eos_id());
  return with_end_ids(std::move(codec), model_dir, std::move(own));
}

}  // namespace nss::generate
