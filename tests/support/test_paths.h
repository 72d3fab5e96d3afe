// Paths tests need: a fresh scratch directory per test, the source tree, and
// the build's bin/ directory (set by ctest's environment).
#pragma once

#include <string>

namespace nss::testing {

/// A new empty directory under $TMPDIR, unique to this process and test.
std::string scratch_dir(const std::string& tag);

/// The source tree root (NSS_SOURCE_DIR), for fixtures.
std::string source_dir();

}  // namespace nss::testing
