// The command-line step the serial tools share: --help prints and ends the
// run with exit 0, a parse error is a UsageError (exit 2) with the usage line.
#pragma once

#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "config/choices.h"
#include "core/error.h"

namespace nss {

/// The choice `value` names for option `flag`; UsageError listing the choices.
template <class E>
E tool_choice(const std::string& flag, const std::string& value) {
  if (const auto choice = config::choice_of<E>(value)) return *choice;
  throw UsageError("cli", flag + " " + value + " is not a choice",
                   "use one of: " + config::choice_list<E>());
}

/// Parses argv into `cli`; false when --help was printed and the tool is done.
inline bool parse_tool_arguments(CLI::App& cli, int argc, char** argv, const std::string& tool,
                                 const std::string& usage) {
  try {
    cli.parse(argc, argv);
  } catch (const CLI::Success&) {
    std::fputs(cli.help().c_str(), stdout);
    return false;
  } catch (const CLI::ParseError& e) {
    throw UsageError(tool, e.what(), "usage: " + usage);
  }
  return true;
}

}  // namespace nss
