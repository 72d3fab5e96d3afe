// The command-line step of the MPI programs (nss_hpc, nss_synthesize): every
// rank parses the same argv, so a parse error is the same AgreedError (exit
// 2) on every rank; rank 0 prints --help.
#pragma once

#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "comm/agreement.h"

namespace nss {

/// Parses argv into `cli`; false when --help was printed and the program is done.
inline bool parse_rank_arguments(CLI::App& cli, int argc, char** argv, int rank,
                                 const std::string& usage) {
  try {
    cli.parse(argc, argv);
  } catch (const CLI::Success&) {
    if (rank == 0) std::fputs(cli.help().c_str(), stdout);
    return false;
  } catch (const CLI::ParseError& e) {
    throw comm::AgreedError(ExitCode::kUsage, "cli", e.what(), "usage: " + usage);
  }
  return true;
}

}  // namespace nss
