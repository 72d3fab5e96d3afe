// <run>/metrics.jsonl: one JSON object per line (per logged step, per
// validation, per checkpoint), appended by rank 0 and written per line so a
// killed job keeps everything up to its last step. Metrics are not worth the
// run: when the file cannot be written (a full disk, a file-size limit), the
// log says so once and training goes on; a line is written whole or not at
// all, never torn.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace nss::train {

class MetricsLog {
 public:
  /// Opens `path` for appending (a resumed run continues the same file; a
  /// torn last line that a killed job left is cut off). Throws UsageError
  /// when it cannot be opened at all.
  explicit MetricsLog(const std::string& path);
  ~MetricsLog();
  MetricsLog(const MetricsLog&) = delete;
  MetricsLog& operator=(const MetricsLog&) = delete;

  /// Appends one object as one line; a failed write leaves the file as it
  /// was, warns once and drops the line.
  void append(const nlohmann::json& record);

  /// Lines that could not be written.
  std::int64_t dropped_lines() const { return dropped_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::int64_t dropped_ = 0;
};

}  // namespace nss::train
