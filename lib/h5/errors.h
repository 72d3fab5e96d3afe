// HDF5's error reporting turned into text for exceptions: the libraries that
// write and read HDF5 files (lib/data, lib/checkpoint) throw their own error
// types (exit 4 and 5) with HDF5's own explanation in them.
#pragma once

#include <string>

#include <hdf5.h>

namespace nss::h5 {

/// Turns HDF5's automatic error printing off for this thread while alive.
class QuietErrors {
 public:
  QuietErrors();
  ~QuietErrors();
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;

 private:
  H5E_auto2_t saved_function_ = nullptr;
  void* saved_data_ = nullptr;
};

/// Call first in main(): a file whose close failed (a flush that met a full
/// disk or a file-size limit) stays half-closed, and HDF5's exit handler
/// crashes on it (HDF5 1.10); the kernel closes the descriptors instead.
void leave_open_files_to_the_kernel_at_exit();

/// The thread's HDF5 error stack, innermost description last, e.g. "unable to
/// open file; file signature not found"; clears the stack.
std::string take_error_text();

/// "<call> failed on <subject>: <HDF5 error stack> (file:line)", the call
/// text cut at its argument list ("H5Fopen(path, ...)" -> "H5Fopen").
std::string failure_message(const char* call, const std::string& subject, const char* file,
                            int line);

}  // namespace nss::h5
