// "Did you mean ...?" for unknown configuration keys: an alias table of names
// other trainers use (learning_rate, batch_size, n_layers, ...) first, then the
// closest valid key by edit distance.
#pragma once

#include <optional>
#include <string>

namespace nss::config {

/// Edit distance (insertions, deletions, substitutions, adjacent swaps).
std::size_t edit_distance(const std::string& a, const std::string& b);

/// The valid key path closest to `unknown_path`, if any is close enough.
std::optional<std::string> suggest_key(const std::string& unknown_path);

}  // namespace nss::config
