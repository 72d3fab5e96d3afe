// What this binary is: version and the git revision it was built from.
#pragma once

namespace nss {

/// Project version, e.g. "0.1.0".
const char* build_version();

/// `git describe --always --dirty` of the source tree at build time, or "unknown".
const char* build_git_revision();

}  // namespace nss
