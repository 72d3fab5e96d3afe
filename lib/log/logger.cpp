#include "log/logger.h"

#include <atomic>
#include <cstdio>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "core/error.h"

namespace nss::log {
namespace {

std::string pattern_for(int rank) {
  // The rank is fixed for the life of the process, so it is baked into the pattern.
  char prefix[64];
  std::snprintf(prefix, sizeof prefix, "[%%Y-%%m-%%d %%H:%%M:%%S.%%e] [rank %d] [%%l] %%v", rank);
  return prefix;
}

// A log file that cannot be written (a full disk, a file-size limit) must
// not end the run: spdlog reports the failure here instead of throwing, and
// this says so once on stderr.
void report_log_failure_once(const std::string& message) {
  static std::atomic<bool> reported{false};
  if (reported.exchange(true)) return;
  std::fprintf(stderr,
               "warning: [log] cannot write a log file: %s; training goes on, and log "
               "lines that cannot be written are lost (this warning is not repeated)\n",
               message.c_str());
  std::fflush(stderr);
}

}  // namespace

void init(int rank) {
  auto console = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  console->set_level(rank == 0 ? spdlog::level::trace : spdlog::level::err);
  auto logger = std::make_shared<spdlog::logger>("nss", console);
  logger->set_pattern(pattern_for(rank));
  logger->set_level(spdlog::level::info);
  logger->flush_on(spdlog::level::warn);
  logger->set_error_handler(report_log_failure_once);
  spdlog::set_default_logger(logger);
}

std::string rank_log_path(const std::string& logs_dir, int rank) {
  char name[32];
  std::snprintf(name, sizeof name, "rank_%05d.log", rank);
  return logs_dir + "/" + name;
}

void attach_rank_file(const std::string& logs_dir, int rank) {
  const std::string path = rank_log_path(logs_dir, rank);
  for (const auto& sink : spdlog::default_logger()->sinks()) {
    const auto* file = dynamic_cast<spdlog::sinks::basic_file_sink_mt*>(sink.get());
    if (file != nullptr && file->filename() == path) return;
  }
  std::shared_ptr<spdlog::sinks::basic_file_sink_mt> file;
  try {
    file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(path, /*truncate=*/false);
  } catch (const spdlog::spdlog_ex& e) {
    throw UsageError("log", "cannot open log file " + path + ": " + e.what(),
                     "make run.output_dir writable");
  }
  file->set_pattern(pattern_for(rank));
  spdlog::default_logger()->sinks().push_back(file);
}

void set_level(const std::string& level) {
  const auto parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off")
    throw UsageError("log", "unknown logging.level '" + level + "'",
                     "use trace, debug, info, warn or error");
  spdlog::default_logger()->set_level(parsed);
}

void flush() {
  if (auto logger = spdlog::default_logger()) logger->flush();
}

}  // namespace nss::log
