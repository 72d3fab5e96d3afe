#include "core/fs.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <ftw.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"

namespace nss {
namespace {

void write_all(int fd, const std::string& content, const std::string& path) {
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      throw InternalError("fs", "cannot write " + path + ": " + errno_text(err));
    }
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

namespace {

// nftw reports one entry at a time; the first failure is kept for the caller.
thread_local std::string remove_failure;

int remove_entry(const char* path, const struct stat*, int, struct FTW*) {
  if (::remove(path) != 0 && errno != ENOENT && remove_failure.empty())
    remove_failure = std::string("cannot remove ") + path + ": " + errno_text(errno);
  return 0;  // go on: remove as much as possible
}

}  // namespace

std::string remove_tree(const std::string& path) {
  struct stat info;
  if (::lstat(path.c_str(), &info) != 0)
    return errno == ENOENT ? "" : "cannot read " + path + ": " + errno_text(errno);
  remove_failure.clear();
  // Depth first (children before their directory), without following links.
  if (::nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0 && remove_failure.empty())
    remove_failure = "cannot walk " + path + ": " + errno_text(errno);
  return remove_failure;
}

std::string errno_text(int error_number) {
  char buffer[256];
  // GNU strerror_r may return a static string instead of filling the buffer.
  const char* text = strerror_r(error_number, buffer, sizeof buffer);
  return text;
}

void fsync_directory(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw InternalError("fs", "cannot open directory " + path + ": " + errno_text(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  // Some file systems refuse fsync on directories; the rename is still ordered.
  if (rc != 0 && err != EINVAL && err != EROFS)
    throw InternalError("fs", "cannot fsync directory " + path + ": " + errno_text(err));
}

void fsync_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InternalError("fs", "cannot open " + path + ": " + errno_text(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) throw InternalError("fs", "cannot fsync " + path + ": " + errno_text(err));
}

std::string temporary_path_for(const std::string& path) {
  return path + ".tmp." + std::to_string(::getpid());
}

void write_synced_file(const std::string& path, const std::string& content, unsigned permissions) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                        static_cast<mode_t>(permissions));
  if (fd < 0) throw InternalError("fs", "cannot create " + path + ": " + errno_text(errno));
  try {
    write_all(fd, content, path);
  } catch (const Error&) {
    ::unlink(path.c_str());
    throw;
  }
  const int synced = ::fsync(fd);
  const int sync_error = errno;
  const int closed = ::close(fd);
  const int close_error = errno;
  if (synced != 0 || closed != 0) {
    ::unlink(path.c_str());
    throw InternalError("fs", std::string(synced != 0 ? "cannot fsync " : "cannot close ") + path +
                                  ": " + errno_text(synced != 0 ? sync_error : close_error));
  }
}

void write_file_atomic(const std::string& path, const std::string& content, unsigned permissions) {
  const std::filesystem::path target(path);
  const std::string tmp = temporary_path_for(path);
  write_synced_file(tmp, content, permissions);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw InternalError("fs", "cannot rename " + tmp + " to " + path + ": " + errno_text(err));
  }
  const std::string parent =
      target.has_parent_path() ? target.parent_path().string() : std::string(".");
  fsync_directory(parent);
}

std::string read_text_file(const std::string& path, const std::string& component) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(component, "cannot read " + path + ": " + errno_text(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) ::close(fd_);
}

const char* file_kind(unsigned mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

bool same_directory(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

void create_directories(const std::string& path, const std::string& component) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec)
    throw UsageError(component, "cannot create directory " + path + ": " + ec.message(),
                     "choose a writable location");
}

}  // namespace nss
