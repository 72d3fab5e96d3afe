#include "data/output_names.h"

#include <filesystem>

namespace nss::data {

std::string beside_output(const std::string& output, const std::string& suffix) {
  const std::filesystem::path p(output);
  return (p.has_extension() ? (p.parent_path() / p.stem()).string() : output) + suffix;
}

std::string absolute_path(const std::string& path) {
  std::error_code error;
  const auto full = std::filesystem::absolute(path, error);
  return error ? path : full.lexically_normal().string();
}

}  // namespace nss::data
