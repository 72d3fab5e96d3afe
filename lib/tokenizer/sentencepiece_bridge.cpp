// The C interface of sentencepiece_bridge.h over SentencePieceTokenizer (the
// one wrapper of libsentencepiece, compiled into this library). Every
// entry point catches what the library or the allocator throws: nothing
// unwinds into the caller.
#include "tokenizer/sentencepiece_bridge.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/sentencepiece_tokenizer.h"

#define NSS_SP_EXPORT __attribute__((visibility("default")))

struct nss_sp_model {
  nss::tokenizer::SentencePieceTokenizer tokenizer;
};

namespace {

int fail(const std::string& reason, char* error, size_t capacity) {
  if (error != nullptr && capacity > 0) {
    const size_t n = std::min(reason.size(), capacity - 1);
    std::memcpy(error, reason.data(), n);
    error[n] = '\0';
  }
  return 1;
}

}  // namespace

extern "C" {

NSS_SP_EXPORT int nss_sp_abi_version(void) {
  return NSS_SP_BRIDGE_ABI;
}

NSS_SP_EXPORT int nss_sp_open(const char* path, nss_sp_model** model, char* error,
                              size_t error_capacity) {
  *model = nullptr;
  try {
    *model = new nss_sp_model{nss::tokenizer::SentencePieceTokenizer::from_file(path)};
    return 0;
  } catch (const std::exception& e) {
    return fail(e.what(), error, error_capacity);
  }
}

NSS_SP_EXPORT void nss_sp_close(nss_sp_model* model) {
  delete model;
}

NSS_SP_EXPORT int nss_sp_encode(const nss_sp_model* model, const char* text, size_t length,
                                int add_bos, int32_t* ids, size_t capacity, size_t* count,
                                char* error, size_t error_capacity) {
  try {
    const auto pieces = model->tokenizer.encode(std::string_view(text, length), add_bos != 0);
    *count = pieces.size();
    std::copy_n(pieces.begin(), std::min(capacity, pieces.size()), ids);
    return 0;
  } catch (const std::exception& e) {
    return fail(e.what(), error, error_capacity);
  }
}

NSS_SP_EXPORT int nss_sp_decode(const nss_sp_model* model, const int32_t* ids, size_t count,
                                char* text, size_t capacity, size_t* length, char* error,
                                size_t error_capacity) {
  try {
    const std::string decoded = model->tokenizer.decode(std::vector<int32_t>(ids, ids + count));
    *length = decoded.size();
    if (capacity > 0) std::memcpy(text, decoded.data(), std::min(capacity, decoded.size()));
    return 0;
  } catch (const std::exception& e) {
    return fail(e.what(), error, error_capacity);
  }
}

NSS_SP_EXPORT int32_t nss_sp_vocab_size(const nss_sp_model* model) {
  return model->tokenizer.vocab_size();
}

NSS_SP_EXPORT int32_t nss_sp_piece_to_id(const nss_sp_model* model, const char* piece,
                                         size_t length) {
  try {
    return model->tokenizer.token_to_id(std::string_view(piece, length)).value_or(-1);
  } catch (const std::exception&) {
    return -1;
  }
}

NSS_SP_EXPORT int32_t nss_sp_bos_id(const nss_sp_model* model) {
  return model->tokenizer.bos_id();
}

NSS_SP_EXPORT int32_t nss_sp_eos_id(const nss_sp_model* model) {
  return model->tokenizer.eos_id();
}

}  // extern "C"
