#include "checkpoint/checksum.h"

#include <algorithm>
#include <cstdio>

#include <xxhash.h>

#include "checkpoint/damage.h"
#include "core/error.h"

// Digests are defined over little-endian bytes; hashing memory directly is only
// right on a little-endian host (every platform nss_hpc targets).
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "checksums assume a little-endian host");

namespace nss::checkpoint {

struct BlockChecksummer::State {
  XXH3_state_t* xxh = XXH3_createState();
  ~State() { XXH3_freeState(xxh); }
};

struct BlockVerifier::State {
  XXH3_state_t* xxh = XXH3_createState();
  ~State() { XXH3_freeState(xxh); }
};

std::uint64_t xxh3_64(const void* data, std::size_t bytes) {
  return XXH3_64bits(data, bytes);
}

std::string checksum_hex(std::uint64_t digest) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(digest));
  return text;
}

std::uint64_t checksum_block_count(std::uint64_t chunk_bytes, std::uint64_t block_bytes) {
  return (chunk_bytes + block_bytes - 1) / block_bytes;
}

BlockChecksummer::BlockChecksummer(std::uint64_t block_bytes)
    : block_bytes_(block_bytes), state_(std::make_unique<State>()) {
  NSS_ASSERT(block_bytes > 0, "checkpoint", "checksum blocks must not be empty");
  XXH3_64bits_reset(state_->xxh);
}

BlockChecksummer::~BlockChecksummer() = default;
BlockChecksummer::BlockChecksummer(BlockChecksummer&&) noexcept = default;
BlockChecksummer& BlockChecksummer::operator=(BlockChecksummer&&) noexcept = default;

void BlockChecksummer::update(const void* data, std::size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const std::size_t take = std::min<std::uint64_t>(bytes, block_bytes_ - in_block_);
    XXH3_64bits_update(state_->xxh, p, take);
    p += take;
    bytes -= take;
    in_block_ += take;
    if (in_block_ == block_bytes_) {
      digests_.push_back(checksum_hex(XXH3_64bits_digest(state_->xxh)));
      XXH3_64bits_reset(state_->xxh);
      in_block_ = 0;
    }
  }
}

std::vector<std::string> BlockChecksummer::finish() {
  if (in_block_ > 0) {
    digests_.push_back(checksum_hex(XXH3_64bits_digest(state_->xxh)));
    XXH3_64bits_reset(state_->xxh);
    in_block_ = 0;
  }
  return std::move(digests_);
}

BlockVerifier::BlockVerifier(std::uint64_t block_bytes, std::uint64_t chunk_bytes,
                             const std::vector<std::string>& expected, std::uint64_t first_block,
                             std::string subject)
    : block_bytes_(block_bytes),
      chunk_bytes_(chunk_bytes),
      expected_(expected),
      block_(first_block),
      subject_(std::move(subject)),
      state_(std::make_unique<State>()) {
  XXH3_64bits_reset(state_->xxh);
}

BlockVerifier::~BlockVerifier() = default;

void BlockVerifier::update(const void* data, std::size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const std::uint64_t block_end = std::min(chunk_bytes_, (block_ + 1) * block_bytes_);
    const std::uint64_t block_size = block_end - block_ * block_bytes_;
    const std::size_t take = std::min<std::uint64_t>(bytes, block_size - in_block_);
    XXH3_64bits_update(state_->xxh, p, take);
    p += take;
    bytes -= take;
    in_block_ += take;
    if (in_block_ == block_size) check_block();
  }
}

void BlockVerifier::check_block() {
  const std::string actual = checksum_hex(XXH3_64bits_digest(state_->xxh));
  const std::string expected = block_ < expected_.size() ? expected_[block_] : std::string("none");
  if (actual != expected)
    throw_checksum_mismatch(subject_, block_, block_bytes_, chunk_bytes_, expected, actual);
  XXH3_64bits_reset(state_->xxh);
  in_block_ = 0;
  ++block_;
}

void throw_checksum_mismatch(const std::string& subject, std::uint64_t block,
                             std::uint64_t block_bytes, std::uint64_t chunk_bytes,
                             const std::string& expected, const std::string& actual) {
  const std::uint64_t begin = block * block_bytes;
  const std::uint64_t end = std::min(chunk_bytes, begin + block_bytes);
  throw CheckpointDamage("checkpoint",
                         "checksum mismatch in " + subject + ", block " + std::to_string(block) +
                             " (bytes [" + std::to_string(begin) + ", " + std::to_string(end) +
                             ") of the chunk): stored " + expected + ", computed " + actual,
                         "the file is corrupted; resume from an earlier step (checkpoint.resume: "
                         "auto falls back by itself) or restore the file from a backup");
}

}  // namespace nss::checkpoint
