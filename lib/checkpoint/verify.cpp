#include "checkpoint/verify.h"

#include <filesystem>
#include <map>
#include <set>
#include <sys/stat.h>

#include "checkpoint/checkpoint_reader.h"
#include "checkpoint/damage.h"
#include "checkpoint/step_directory.h"
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

// Everything that failed in one rank file, so that a file with dozens of bad
// checksum blocks is one line, not one per block.
class FileDamage {
 public:
  void add(const std::string& tensor, const ChunkRecord& chunk,
           const std::vector<std::string>& problems) {
    std::uint64_t mismatches = 0;
    for (const auto& problem : problems) {
      // verify_chunk's own classification: a mismatch per bad block, else one
      // problem (a missing dataset, a failed read) for the whole chunk.
      if (problem.find("checksum mismatch") != std::string::npos) {
        if (first_mismatch_.empty()) first_mismatch_ = problem;
        ++mismatches;
        continue;
      }
      if (first_unreadable_.empty()) first_unreadable_ = problem;
      unreadable_.push_back(tensor);
    }
    if (mismatches == 0) return;
    bad_blocks_ += mismatches;
    mismatched_.push_back(tensor + " (dataset " + chunk.dataset + ": " +
                          count(mismatches, "block") + ")");
  }

  /// One line per kind of failure, naming `path`.
  std::vector<std::string> lines(const std::string& path) const {
    std::vector<std::string> out;
    if (bad_blocks_ > 0)
      out.push_back(path + ": " + count(bad_blocks_, "checksum block") + " fail, in " +
                    count(mismatched_.size(), "tensor") + ": " + join(mismatched_) +
                    "; the first: " + first_mismatch_);
    if (!unreadable_.empty())
      out.push_back(path + ": " + count(unreadable_.size(), "chunk") + " cannot be read (" +
                    join(unreadable_) + "); the first: " + first_unreadable_);
    return out;
  }

 private:
  static std::string count(std::uint64_t n, const std::string& noun) {
    return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
  }
  static std::string join(const std::vector<std::string>& items) {
    std::string text;
    for (const auto& item : items) text += (text.empty() ? "" : ", ") + item;
    return text;
  }

  std::uint64_t bad_blocks_ = 0;
  std::vector<std::string> mismatched_, unreadable_;
  std::string first_mismatch_, first_unreadable_;
};

}  // namespace

void check_step_files(const std::string& step_dir, const CheckpointIndex& index) {
  const auto problems = coverage_problems(index);
  if (!problems.empty())
    throw CheckpointDamage("checkpoint", step_dir + ": " + problems.front(),
                           "metadata.json does not cover every tensor; the step cannot be used");
  for (const auto& [name, bytes] : index.file_bytes) {
    const std::string problem = file_problem(step_dir, name, bytes);
    if (!problem.empty())
      throw CheckpointDamage("checkpoint", problem,
                             "a rank file of this step is missing or damaged; the step cannot be "
                             "used");
  }
}

std::string read_checked_index_text(const std::string& step_dir) {
  std::string text = read_index_text(step_dir);
  const CheckpointIndex index =
      parse_index(text, (std::filesystem::path(step_dir) / kIndexFile).string());
  const auto named = parse_step_dir_name(std::filesystem::path(step_dir).filename().string());
  if (named && *named != index.step)
    throw CheckpointDamage("checkpoint",
                           step_dir + "/metadata.json records step " + std::to_string(index.step) +
                               ", but its directory is named for step " + std::to_string(*named),
                           "the step was renamed or its metadata.json edited; it cannot be used");
  check_step_files(step_dir, index);
  return text;
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
  std::map<std::string, FileDamage> damage;  // by rank file name
  for (const auto& [name, tensor] : index.tensors) {
    ++report.tensors;
    for (const auto& chunk : tensor.chunks) {
      ++report.chunks;
      if (unusable_files.count(chunk.file)) continue;
      const auto problems = reader.verify_chunk(name, chunk);
      if (!problems.empty()) damage[chunk.file].add(name, chunk, problems);
    }
  }
  for (const auto& [file, file_damage] : damage)
    for (auto& line : file_damage.lines((std::filesystem::path(step_dir) / file).string()))
      report.problems.push_back(std::move(line));
  report.bytes_checked = reader.bytes_read();
  return report;
}

}  // namespace nss::checkpoint
