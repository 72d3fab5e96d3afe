// XXH3-64 checksums per fixed-size block of a chunk's little-endian bytes, as
// metadata.json records them ("checksums": one 16-hex-digit digest per
// checksum_block_bytes, the last block shorter).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nss::checkpoint {

/// XXH3-64 of `bytes` bytes.
std::uint64_t xxh3_64(const void* data, std::size_t bytes);

/// 16 lower-case hex digits, as stored in metadata.json.
std::string checksum_hex(std::uint64_t digest);

/// Number of checksum blocks of a chunk of `chunk_bytes` bytes.
std::uint64_t checksum_block_count(std::uint64_t chunk_bytes, std::uint64_t block_bytes);

/// Streams a chunk's bytes in pieces of any size and emits one digest per block.
class BlockChecksummer {
 public:
  explicit BlockChecksummer(std::uint64_t block_bytes);
  ~BlockChecksummer();
  BlockChecksummer(BlockChecksummer&&) noexcept;
  BlockChecksummer& operator=(BlockChecksummer&&) noexcept;

  /// Feeds the next `bytes` bytes of the chunk.
  void update(const void* data, std::size_t bytes);

  /// Digests of every block seen so far, the partial last one included.
  std::vector<std::string> finish();

 private:
  struct State;
  std::uint64_t block_bytes_;
  std::uint64_t in_block_ = 0;
  std::unique_ptr<State> state_;
  std::vector<std::string> digests_;
};

/// Verifies a stream of bytes against stored block digests as it is fed
/// (consolidation reads pieces smaller than a block under a memory budget).
/// update() throws CheckpointError at the first block whose digest differs.
class BlockVerifier {
 public:
  /// `expected` are the chunk's digests; `first_block` is the block the stream starts in
  /// (the stream must start at a block boundary); `describe(block)` names a block in errors.
  BlockVerifier(std::uint64_t block_bytes, std::uint64_t chunk_bytes,
                const std::vector<std::string>& expected, std::uint64_t first_block,
                std::string subject);
  ~BlockVerifier();

  /// Feeds the next bytes; completes and checks every block that ends inside them.
  void update(const void* data, std::size_t bytes);

  /// True when the stream ended exactly at a block boundary or at the chunk's end.
  bool at_block_boundary() const { return in_block_ == 0; }

 private:
  void check_block();

  struct State;
  std::uint64_t block_bytes_, chunk_bytes_;
  const std::vector<std::string>& expected_;
  std::uint64_t block_;
  std::uint64_t in_block_ = 0;
  std::string subject_;
  std::unique_ptr<State> state_;
};

/// Throws CheckpointError naming `subject`, the block and both digests.
[[noreturn]] void throw_checksum_mismatch(const std::string& subject, std::uint64_t block,
                                          std::uint64_t block_bytes, std::uint64_t chunk_bytes,
                                          const std::string& expected, const std::string& actual);

}  // namespace nss::checkpoint
