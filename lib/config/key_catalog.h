// Every valid configuration key with its type, default and documentation,
// derived from the schema in config.h. Used for suggestions and the reference.
#pragma once

#include <string>
#include <vector>

namespace nss::config {

struct KeyInfo {
  std::string path;           // "training.lora.rank"
  std::string type;           // "integer", "section", ...
  std::string default_value;  // as YAML text; empty for sections
  std::string range;          // "[1, 65536]"; empty for keys that are not numbers
  std::string doc;
  bool is_section = false;
};

/// All keys and sections in schema order.
const std::vector<KeyInfo>& key_catalog();

/// The reference as a Markdown table per section (docs/configuration.md).
std::string key_catalog_markdown();

}  // namespace nss::config
