#include "checkpoint/verify.h"

#include <filesystem>
#include <set>
#include <sys/stat.h>

#include "checkpoint/checkpoint_reader.h"
#include "core/error.h"

namespace nss::checkpoint {
namespace {

// "" when the file is present with the size metadata.json records, else why not.
std::string file_problem(const std::string& step_dir, const std::string& name,
                         std::uint64_t bytes) {
  const std::string path = (std::filesystem::path(step_dir) / name).string();
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return path + " is missing";
  if (static_cast<std::uint64_t>(info.st_size) != bytes)
    return path + " has " + std::to_string(info.st_size) + " bytes, metadata.json records " +
           std::to_string(bytes);
  return "";
}

}  // namespace

void check_step_files(const std::string& step_dir, const CheckpointIndex& index) {
  const auto problems = coverage_problems(index);
  if (!problems.empty())
    throw CheckpointError("checkpoint", step_dir + ": " + problems.front(),
                          "metadata.json does not cover every tensor; the step cannot be used");
  for (const auto& [name, bytes] : index.file_bytes) {
    const std::string problem = file_problem(step_dir, name, bytes);
    if (!problem.empty())
      throw CheckpointError("checkpoint", problem,
                            "a rank file of this step is missing or damaged; the step cannot be "
                            "used");
  }
}

VerifyReport verify_checkpoint(const std::string& step_dir, bool file_locking) {
  VerifyReport report;
  CheckpointIndex index;
  try {
    index = read_index(step_dir);
  } catch (const CheckpointError& e) {
    report.problems.push_back(e.message());
    return report;
  }
  std::set<std::string> unusable_files;
  for (const auto& [name, bytes] : index.file_bytes) {
    std::string problem = file_problem(step_dir, name, bytes);
    if (problem.empty()) continue;
    report.problems.push_back(std::move(problem));
    unusable_files.insert(name);
  }
  for (const auto& problem : coverage_problems(index)) report.problems.push_back(problem);

  CheckpointReader reader(step_dir, index, file_locking);
  for (const auto& [name, tensor] : index.tensors) {
    ++report.tensors;
    for (const auto& chunk : tensor.chunks) {
      ++report.chunks;
      if (unusable_files.count(chunk.file)) continue;
      for (auto& problem : reader.verify_chunk(name, chunk))
        report.problems.push_back(std::move(problem));
    }
  }
  report.bytes_checked = reader.bytes_read();
  return report;
}

}  // namespace nss::checkpoint
