#include "generate/end_ids.h"

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace nss::generate {

std::vector<std::int64_t> configured_end_ids(const std::string& model_dir) {
  for (const char* name : {"generation_config.json", "config.json"}) {
    const fs::path path = fs::path(model_dir) / name;
    std::ifstream in(path);
    if (model_dir.empty() || !in) continue;
    const auto doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!doc.is_object() || !doc.contains("eos_token_id")) continue;
    const auto& eos = doc.at("eos_token_id");
    std::vector<std::int64_t> ids;
    if (eos.is_number_integer()) ids.push_back(eos.get<std::int64_t>());
    if (eos.is_array())
      for (const auto& id : eos)
        if (id.is_number_integer()) ids.push_back(id.get<std::int64_t>());
    if (!ids.empty()) return ids;
  }
  return {};
}

}  // namespace nss::generate
