// File-system helpers with the durability guarantees the run directory and
// checkpoints rely on.
#pragma once

#include <cstdint>
#include <string>

namespace nss {

/// "<path>.tmp.<pid>": where a file or directory is built before a rename
/// puts it at `path` (same directory, so the rename is atomic; the pid keeps
/// two writers apart).
std::string temporary_path_for(const std::string& path);

/// Creates (or truncates) `path`, writes `content` and fsyncs it; on failure
/// removes it and throws InternalError naming the call, the file and errno.
void write_synced_file(const std::string& path, const std::string& content,
                       unsigned permissions = 0644);

/// Writes `content` to `path` atomically: a temporary file in the same
/// directory, fsync, rename over `path`, fsync of the directory.
void write_file_atomic(const std::string& path, const std::string& content,
                       unsigned permissions = 0644);

/// fsyncs a directory so that renames and creations inside it are durable.
void fsync_directory(const std::string& path);

/// fsyncs an existing regular file.
void fsync_file(const std::string& path);

/// Reads a whole file; throws DataError naming the path when it cannot.
std::string read_text_file(const std::string& path, const std::string& component);

/// Creates `path` and its parents; throws UsageError naming the path on failure.
void create_directories(const std::string& path, const std::string& component);

/// Removes `path` and everything below it (symbolic links, not their
/// targets); a missing path is no error. Returns "" on success, else what
/// failed. POSIX nftw rather than std::filesystem::remove_all: libtorch 2.x
/// exports its own, older std::filesystem, which the dynamic linker binds
/// first, and its remove_all jumps to a null address on some hosts (seen on an
/// H100 machine with PyTorch 2.11's libtorch).
std::string remove_tree(const std::string& path);

/// An open file descriptor, closed when it goes out of scope.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor();
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

/// What a stat() mode names, for "X is <kind>, not a regular file":
/// "a directory", "a FIFO", "a character device", "a block device", "a socket".
const char* file_kind(unsigned mode);

/// True when both paths exist and name the same file or directory (same
/// device and inode, whatever the spelling or links).
bool same_directory(const std::string& a, const std::string& b);

/// "errno text" for the current errno, e.g. "No such file or directory".
std::string errno_text(int error_number);

}  // namespace nss
