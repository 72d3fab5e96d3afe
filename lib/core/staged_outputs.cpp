#include "core/staged_outputs.h"

namespace nss {

void StagedOutputs::stage(const OutputTarget& target, const std::string& content) {
  auto file = std::make_unique<OutputFile>(target);
  file->reserve(content.size());
  file->write_at(0, content.data(), content.size());
  files_.push_back(std::move(file));
}

void StagedOutputs::publish() {
  for (const auto& file : files_) file->commit();
  files_.clear();
}

}  // namespace nss
