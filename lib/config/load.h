// Loading a configuration: YAML file -> --set overrides -> preset -> keys ->
// derived values -> validation. Every problem found is reported at once, each
// with its full key path and where it came from (file line/column or --set).
#pragma once

#include <string>
#include <vector>

#include "config/config.h"

namespace nss::config {

/// A configuration file plus its command-line overrides ("a.b=c").
struct ConfigSource {
  std::string path;
  std::vector<std::string> overrides;
};

/// Loads, resolves and validates; throws UsageError (exit 2) listing every problem.
Config load_config(const ConfigSource& source);

/// Parses YAML text (e.g. a resolved config received from rank 0); `origin` names it in errors.
Config parse_config_text(const std::string& yaml, const std::string& origin,
                         const std::vector<std::string>& overrides = {});

/// The resolved configuration as YAML, optionally with one comment per key.
std::string to_yaml(const Config& config, bool with_comments);

/// Fills derived values (head_dim, key/value heads, output and checkpoint dirs).
void resolve_derived(Config& config);

/// Checks every value range and relation; throws UsageError listing every problem.
void validate(const Config& config);

class Problems;
/// Adds every value range and relation problem of `config` to `problems`
/// (load_config reports them with the problems of reading, all at once).
void check_values(const Config& config, Problems& problems);

/// Checks what depends on the world size (the tensor and shard groups divide
/// it, batch arithmetic over the data-parallel ranks); throws UsageError
/// naming the numbers and the nearest valid choices.
void validate_layout(const Config& config, int world_size);

}  // namespace nss::config
