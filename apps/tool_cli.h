// The command-line step the serial tools share: --help prints and ends the
// run with exit 0, a parse error is a UsageError (exit 2) with the usage line.
#pragma once

#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "config/choices.h"
#include "core/error.h"

namespace nss {

/// The choice `value` names for option `flag`, read as configuration keys
/// read theirs (config::choice_of); UsageError listing the choices.
template <class E>
E tool_choice(const std::string& flag, const std::string& value) {
  if (const auto choice = config::choice_of<E>(value)) return *choice;
  std::string choices = config::choice_list<E>();
  const auto last = choices.rfind(", ");
  if (last != std::string::npos) choices.replace(last, 2, " or ");
  throw UsageError("cli", "unknown " + flag + " '" + value + "': " + flag + " must be " + choices,
                   "use " + flag + " " + choices + " (use one of: " + config::choice_list<E>() +
                       ", in any case)");
}

/// Option `flag` of `cli` taking one of E's names into `value` (its default
/// shown as the name); a value that names none is tool_choice's UsageError.
template <class E>
CLI::Option* add_choice_option(CLI::App& cli, const std::string& flag, E& value,
                               const std::string& help) {
  return cli
      .add_option_function<std::string>(
          flag, [flag, &value](const std::string& text) { value = tool_choice<E>(flag, text); },
          help + " (" + config::choice_list<E>() + ")")
      ->default_str(config::choice_name(value));
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
