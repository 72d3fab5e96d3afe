#include "pipeline/stage.h"

#include <filesystem>

#include "core/fs.h"
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

std::string recorded_step_dir(const StageContext& context) {
  // The train stage records the step by its metadata.json.
  return std::filesystem::path(recorded_output(context, "train", "step").path)
      .parent_path()
      .string();
}

void clear_stage_directory(const std::string& dir) {
  const std::string failure = remove_tree(dir);
  if (!failure.empty())
    throw UsageError("pipeline", "cannot clear " + dir + ": " + failure,
                     "make the run directory writable");
}

}  // namespace nss::pipeline
