// Human-readable byte sizes ("256MiB", "1.5GiB") in both directions.
#pragma once

#include <cstdint>
#include <string>

namespace nss {

/// Parses "4194304", "4MiB", "1.5 GiB", "2GB" (powers of 1000) ...; throws UsageError.
std::uint64_t parse_bytes(const std::string& text);

/// Formats with binary units: "1.50 GiB", "512 B".
std::string format_bytes(double bytes);

}  // namespace nss
