#include "core/output_location.h"

#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fs.h"
#include "core/temporary_files.h"
#include "core/units.h"

namespace nss {
namespace {

constexpr const char* kLocationHint =
    "write to an existing, writable directory with room for the output (check the path, its "
    "permissions, free space with df -h and the file-size limit with ulimit -f), or choose "
    "another --output";

std::string parent_of(const std::string& path) {
  const auto parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

// A rename that never replaces: renameat2's RENAME_NOREPLACE, or, where the
// file system lacks it, a hard link (which fails on an existing name) and the
// unlink of the temporary name. Returns 0 or the errno of the failure.
int rename_without_replacing(const std::string& from, const std::string& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) return errno;
  struct stat info {};
  if (::lstat(from.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    // No hard links to directories: the name is checked, then taken.
    if (::lstat(to.c_str(), &info) == 0) return EEXIST;
    return ::rename(from.c_str(), to.c_str()) == 0 ? 0 : errno;
  }
  if (::link(from.c_str(), to.c_str()) != 0) return errno;
  ::unlink(from.c_str());
  return 0;
}

}  // namespace

UsageError output_location_error(const std::string& component, const std::string& message) {
  return UsageError(component, message, kLocationHint);
}

UsageError output_location_error(const std::string& component, const std::string& action,
                                 const std::string& path, int error_number) {
  return output_location_error(component,
                               "cannot " + action + " " + path + ": " + errno_text(error_number));
}

void check_output_path(const OutputTarget& target) {
  struct stat info {};
  if (::stat(target.path.c_str(), &info) != 0) {
    const int missing = errno;
    if (missing != ENOENT && missing != ENOTDIR)
      throw output_location_error(target.component, "look at " + target.option, target.path,
                                  missing);
    // A link to nothing is neither new nor a regular file.
    if (::lstat(target.path.c_str(), &info) == 0 && S_ISLNK(info.st_mode))
      throw UsageError(
          target.component,
          target.option + " " + target.path + " is a symbolic link to a path that does not exist",
          "remove the link or choose another " + target.option);
    return;  // new; the parent shows when the temporary file is created beside it
  }
  const std::string named = target.option + " " + target.path;
  const bool regular = S_ISREG(info.st_mode);
  if (regular && target.existing == ExistingOutput::kReplaceFile) return;
  if (regular || (S_ISDIR(info.st_mode) && target.existing == ExistingOutput::kRefuse))
    throw UsageError(target.component,
                     named + " already exists" + (regular ? "" : " (a directory)"),
                     "remove it or choose another " + target.option +
                         " (an existing output is never overwritten)");
  throw UsageError(target.component,
                   named + " is " + file_kind(info.st_mode) +
                       ": an output is written only to a new path or over a regular file",
                   "choose a new file path for " + target.option);
}

void publish_output(const std::string& temporary, const OutputTarget& target) {
  check_output_path(target);
  const int failed = target.existing == ExistingOutput::kRefuse
                         ? rename_without_replacing(temporary, target.path)
                         : (::rename(temporary.c_str(), target.path.c_str()) == 0 ? 0 : errno);
  if (failed == EEXIST)
    throw UsageError(target.component,
                     target.option + " " + target.path +
                         " appeared while this output was written (another job writing there?)",
                     "remove it or choose another " + target.option +
                         " (an existing output is never overwritten)");
  if (failed != 0)
    throw output_location_error(target.component, "rename " + temporary + " to", target.path,
                                failed);
  try {
    fsync_directory(parent_of(target.path));
  } catch (const InternalError& e) {
    throw output_location_error(target.component, e.message());
  }
}

void write_output_file(const OutputTarget& target, const std::string& content) {
  check_output_path(target);
  const std::string temporary = temporary_path_for(target.path);
  const TemporaryClaim claim(temporary);
  try {
    write_synced_file(temporary, content, target.private_data ? 0600 : 0644);
  } catch (const InternalError& e) {
    // write_synced_file names the call, the file and the errno text.
    throw output_location_error(target.component, e.message());
  }
  try {
    publish_output(temporary, target);
  } catch (...) {
    ::unlink(temporary.c_str());
    throw;
  }
}

void write_output_file(const std::string& path, const std::string& content,
                       const std::string& component) {
  write_output_file(OutputTarget{path, component}, content);
}

void reserve_output_room(int fd, std::uint64_t bytes, const std::string& component,
                         const std::string& path) {
  if (bytes == 0) return;
  int rc;
  do rc = ::fallocate(fd, 0, 0, static_cast<off_t>(bytes));
  while (rc != 0 && errno == EINTR);
  if (rc != 0 && errno != EOPNOTSUPP)
    throw output_location_error(component, "reserve " + format_bytes(bytes) + " for", path, errno);
}

}  // namespace nss
