#include "hf/weight_files.h"

#include <cstdio>
#include <regex>

namespace nss::hf {

std::string shard_file_name(int index, int count) {
  char name[64];
  std::snprintf(name, sizeof name, "model-%05d-of-%05d.safetensors", index, count);
  return name;
}

bool is_weights_file_name(const std::string& name) {
  static const std::regex kShard(R"(model-\d{5}-of-\d{5}\.safetensors)");
  return name == kWeightsFile || name == kWeightsIndexFile || std::regex_match(name, kShard);
}

}  // namespace nss::hf
