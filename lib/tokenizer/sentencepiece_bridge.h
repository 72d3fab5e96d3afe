/* A plain C interface to a SentencePiece model, built as its own shared
 * library (libnss_sentencepiece_bridge.so) for processes that also hold
 * libtorch. Debian's libsentencepiece.so.0 carries a private copy of
 * protobuf-lite 3.14.0 and exports all of its google::protobuf symbols;
 * libtorch_cpu.so needs libprotobuf.so.32 (3.21.12), which exports the same
 * names. Linked into one process, each binds to the other's copy: the
 * process dies before main() (libprotobuf's static initialiser calls
 * libsentencepiece's MergeFromImpl), and a bridge dlopen'ed RTLD_LOCAL alone
 * still aborts (libsentencepiece's VerifyVersion(3.14.0) binds to
 * libprotobuf 3.21.12's). dlopen with RTLD_LOCAL | RTLD_DEEPBIND keeps
 * libsentencepiece bound to its own protobuf and out of the global scope
 * (generate/sentencepiece_codec.cpp). Nothing C++ crosses this interface:
 * no exceptions, no std types; errors come back as text. */
#ifndef NSS_TOKENIZER_SENTENCEPIECE_BRIDGE_H
#define NSS_TOKENIZER_SENTENCEPIECE_BRIDGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The interface version; a loader refuses a library that answers another. */
#define NSS_SP_BRIDGE_ABI 1

typedef struct nss_sp_model nss_sp_model;

/* NSS_SP_BRIDGE_ABI as the library was built. */
int nss_sp_abi_version(void);

/* Loads the model at `path` into *model: 0, or nonzero with *model NULL and
 * the reason in `error` (NUL-terminated, cut to error_capacity). */
int nss_sp_open(const char* path, nss_sp_model** model, char* error, size_t error_capacity);

/* Frees a model nss_sp_open gave; NULL is ignored. */
void nss_sp_close(nss_sp_model* model);

/* The ids of text[0, length), BOS first when add_bos and the model has one.
 * Writes at most `capacity` ids and sets *count to how many there are: when
 * *count > capacity, call again with room for *count. 0, or nonzero with
 * the reason in `error`. */
int nss_sp_encode(const nss_sp_model* model, const char* text, size_t length, int add_bos,
                  int32_t* ids, size_t capacity, size_t* count, char* error, size_t error_capacity);

/* The text of ids[0, count) without control pieces (BOS, EOS); ids outside
 * the vocabulary are skipped. Writes at most `capacity` bytes (no NUL) and
 * sets *length to the text's length, as nss_sp_encode does with ids. */
int nss_sp_decode(const nss_sp_model* model, const int32_t* ids, size_t count, char* text,
                  size_t capacity, size_t* length, char* error, size_t error_capacity);

/* The number of pieces. */
int32_t nss_sp_vocab_size(const nss_sp_model* model);

/* The id of piece[0, length), or -1 when the model does not have it. */
int32_t nss_sp_piece_to_id(const nss_sp_model* model, const char* piece, size_t length);

/* The model's BOS and EOS ids, -1 when it has none. */
int32_t nss_sp_bos_id(const nss_sp_model* model);
int32_t nss_sp_eos_id(const nss_sp_model* model);

#ifdef __cplusplus
}
#endif

#endif
