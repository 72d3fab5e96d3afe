#include "pipeline/stage.h"

#include "core/sha256.h"

namespace nss::pipeline {

OutputFile output_file(const std::string& path) {
  return {path, sha256_file_hex(path)};
}

const OutputFile& recorded_output(const StageContext& context, const std::string& stage,
                                  const std::string& name) {
  const auto& record = context.ledger->stage(stage);
  const auto found = record.outputs.find(name);
  if (record.status != StageStatus::kCompleted || found == record.outputs.end())
    throw InternalError("pipeline", "stage " + stage + " has recorded no output " + name);
  return found->second;
}

}  // namespace nss::pipeline
