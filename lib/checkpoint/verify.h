// Full verification of a committed step, as `nss_ckpt verify` runs it: the
// index parses, every rank file exists with its recorded size, every tensor is
// covered exactly once, and every checksum block of every chunk verifies.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint/index.h"

namespace nss::checkpoint {

struct VerifyReport {
  // One line per problem: the index, a rank file missing or of the wrong size,
  // a coverage gap, or a damaged rank file with its failing checksum blocks
  // counted per tensor (and its first failure in full: dataset, block, bytes).
  std::vector<std::string> problems;
  std::uint64_t tensors = 0;
  std::uint64_t chunks = 0;
  std::uint64_t bytes_checked = 0;
  bool ok() const { return problems.empty(); }
};

/// The checks that need no data reads: every tensor covered exactly once, every
/// rank file present with its recorded size. Throws CheckpointError at the first problem.
void check_step_files(const std::string& step_dir, const CheckpointIndex& index);

/// metadata.json's text after check_step_files and a check of its step
/// number against the directory's name: what a load reads once, on one rank.
/// Throws CheckpointDamage for a step that contradicts itself.
std::string read_checked_index_text(const std::string& step_dir);

/// Verifies everything in `step_dir`; never throws for a damaged checkpoint
/// (problems are listed instead).
VerifyReport verify_checkpoint(const std::string& step_dir, bool file_locking = true);

}  // namespace nss::checkpoint
