// SIGINT/SIGTERM/SIGUSR1/SIGUSR2 become a flag (async-signal-safe); ranks
// agree on it where their work can be put on disk (the trainer at step
// boundaries, nss_generate --records between rounds), save it, and exit 7
// (TERM/INT/USR2) or 75 (USR1: requeue me). USR2 is how slurm/train.sbatch forwards a TERM: srun
// and mpirun kill the ranks on TERM instead of delivering it, but pass USR2 on.
#pragma once

#include "comm/communicator.h"
#include "core/error.h"

namespace nss::comm {

enum class StopRequest : int {
  kNone = 0,
  kRequeue = 1,    // SIGUSR1: the time limit is near
  kTerminate = 2,  // SIGTERM/SIGINT/SIGUSR2: a cancel; wins over requeue
};

/// Installs the handlers (idempotent).
void install_stop_signal_handlers();

/// The strongest request this process has received so far.
StopRequest local_stop_request();

/// The strongest request any rank has received (collective: all-reduce MAX).
StopRequest agree_on_stop_request(comm::Communicator& comm);

/// Exit code for a stop request: 7 for terminate, 75 for requeue.
ExitCode exit_code_for(StopRequest request);

/// "SIGUSR1 (time limit near)" and the like, for logs.
const char* describe(StopRequest request);

}  // namespace nss::comm
