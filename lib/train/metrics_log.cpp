#include "train/metrics_log.h"

#include <cerrno>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/fs.h"

namespace nss::train {

MetricsLog::MetricsLog(const std::string& path) : path_(path) {
  file_ = std::fopen(path.c_str(), "a");
  if (!file_)
    throw UsageError("train", "cannot open " + path + " for appending: " + errno_text(errno),
                     "make run.output_dir writable");
}

MetricsLog::~MetricsLog() {
  if (file_) std::fclose(file_);
}

void MetricsLog::append(const nlohmann::json& record) {
  const std::string line = record.dump() + "\n";
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0)
    throw InternalError("train", "cannot write " + path_ + ": " + errno_text(errno));
}

}  // namespace nss::train
