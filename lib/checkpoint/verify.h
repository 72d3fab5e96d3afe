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
  std::vector<std::string> problems;  // one line each, naming file, tensor and block
  std::uint64_t tensors = 0;
  std::uint64_t chunks = 0;
  std::uint64_t bytes_checked = 0;
  bool ok() const { return problems.empty(); }
};

/// The checks that need no data reads: every tensor covered exactly once, every
/// rank file present with its recorded size. Throws CheckpointError at the first problem.
void check_step_files(const std::string& step_dir, const CheckpointIndex& index);

/// Verifies everything in `step_dir`; never throws for a damaged checkpoint
/// (problems are listed instead).
VerifyReport verify_checkpoint(const std::string& step_dir, bool file_locking = true);

}  // namespace nss::checkpoint
