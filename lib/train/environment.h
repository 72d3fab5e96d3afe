// environment.json: what ran where — versions, git revision, hosts, ranks,
// threads and the Slurm/launcher environment — so a run can be reproduced and
// a slow or failing node identified afterwards.
#pragma once

#include <string>
#include <vector>

#include "comm/mpi_runtime.h"

namespace nss::train {

/// This rank's entry of environment.json (JSON text).
std::string describe_rank(const comm::ProcessLayout& layout, const std::string& device);

/// The whole environment.json document from every rank's entry.
std::string describe_environment(const std::vector<std::string>& rank_entries,
                                 const std::vector<std::string>& command_line);

}  // namespace nss::train
