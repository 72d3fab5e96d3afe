// Damage, as opposed to a failure to read: a step's files contradict their
// own record (a checksum, a recorded size, metadata.json's structure or step
// number). Reading again cannot change the answer, so a resume that every
// rank agrees found damage may set the step aside (step_corrupt_path);
// an I/O error may be transient and never does.
#pragma once

#include "core/error.h"

namespace nss::checkpoint {

struct CheckpointDamage : CheckpointError {
  using CheckpointError::CheckpointError;
};

}  // namespace nss::checkpoint
