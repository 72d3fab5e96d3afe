// <run>/metrics.jsonl: one JSON object per line (per logged step, per
// validation, per checkpoint), appended by rank 0 and flushed per line so a
// killed job keeps everything up to its last step.
#pragma once

#include <cstdio>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace nss::train {

class MetricsLog {
 public:
  /// Opens `path` for appending (a resumed run continues the same file).
  explicit MetricsLog(const std::string& path);
  ~MetricsLog();
  MetricsLog(const MetricsLog&) = delete;
  MetricsLog& operator=(const MetricsLog&) = delete;

  /// Appends one object as one line and flushes it.
  void append(const nlohmann::json& record);

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

}  // namespace nss::train
