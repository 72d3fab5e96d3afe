// Where the files nss_prepare_data writes beside its token file go, and how
// the token file names them.
#pragma once

#include <string>

namespace nss::data {

/// `output` with its extension replaced by `suffix`: records.h5 and
/// ".holdout.csv" give records.holdout.csv (a name without an extension
/// keeps it all).
std::string beside_output(const std::string& output, const std::string& suffix);

/// `path` absolute and normal, as a token file records a path; `path`
/// itself when the working directory cannot be read.
std::string absolute_path(const std::string& path);

}  // namespace nss::data
