// Names that identify where and when something happened, for lock owners,
// probe files, run ids and set-aside directories.
#pragma once

#include <string>

namespace nss {

/// This machine's host name.
std::string host_name();

/// The current UTC time as "20261124T081500Z" (sortable, safe in file names).
std::string utc_stamp();

}  // namespace nss
