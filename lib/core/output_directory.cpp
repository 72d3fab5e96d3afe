#include "core/output_directory.h"

#include <algorithm>
#include <cerrno>
#include <sys/stat.h>

#include "core/fs.h"

namespace nss {

OutputDirectory::OutputDirectory(OutputTarget target, std::string what,
                                 std::vector<std::string> names)
    : target_(std::move(target)), what_(std::move(what)), names_(std::move(names)) {
  if (::mkdir(target_.path.c_str(), 0755) == 0) {
    created_ = true;
    claim_.emplace(path(), TemporaryClaim::Kind::kFlatDirectory);
    return;
  }
  if (errno != EEXIST)
    throw output_location_error(target_.component, "create the " + what_, path(), errno);
  struct stat info {};
  if (::stat(path().c_str(), &info) != 0)
    throw output_location_error(target_.component, "look at the " + what_, path(), errno);
  if (!S_ISDIR(info.st_mode))
    throw UsageError(
        target_.component,
        "the " + what_ + " " + path() + " (" + target_.option + ") is " +
            (S_ISREG(info.st_mode) ? "a regular file" : file_kind(info.st_mode)) +
            ", not a directory",
        "give a new directory, or an existing one without earlier output, as " + target_.option);
  std::vector<std::string> present;
  for (const auto& name : names_) {
    const OutputTarget inside = file(name);
    if (::lstat(inside.path.c_str(), &info) != 0) continue;
    if (S_ISREG(info.st_mode) && target_.existing == ExistingOutput::kReplaceFile) continue;
    present.push_back(name);
  }
  if (present.empty()) return;
  std::string listed;
  for (const auto& name : present) listed += (listed.empty() ? "" : ", ") + name;
  throw UsageError(target_.component,
                   "the " + what_ + " " + path() + " (" + target_.option + ") already holds " +
                       listed + " (an existing output is never overwritten)",
                   "choose a new directory as " + target_.option + ", or move those files away");
}

OutputDirectory::~OutputDirectory() {
  if (created_ && !kept_) remove_tree(path());
}

OutputTarget OutputDirectory::file(const std::string& name) const {
  NSS_ASSERT(std::find(names_.begin(), names_.end(), name) != names_.end(), "output",
             name + " was not claimed in " + path());
  return {path() + "/" + name, target_.component, target_.option, target_.existing};
}

}  // namespace nss
