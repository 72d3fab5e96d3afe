// The configuration file itself: the text of a regular file. A directory, a
// FIFO or a device in its place is a usage error before anything reads it
// (a directory reads as no text, which would train on the defaults; a FIFO
// would block the launch).
#pragma once

#include <string>

namespace nss::config {

/// The text of the configuration file at `path`; UsageError (exit 2) naming
/// the path when it is missing, unreadable, not a regular file or too large
/// to be a configuration.
std::string read_config_file(const std::string& path);

}  // namespace nss::config
