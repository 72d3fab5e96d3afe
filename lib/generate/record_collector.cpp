#include "generate/record_collector.h"

#include <nlohmann/json.hpp>

namespace nss::generate {
namespace {

// Generated text may hold broken UTF-8: replace it rather than fail the run.
std::string json_line(const nlohmann::ordered_json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace

RecordCollector::RecordCollector(RecordSchema schema, std::int64_t wanted)
    : schema_(std::move(schema)), wanted_(wanted), csv_(csv_header(schema_)) {}

RecordCounts RecordCollector::add(std::int64_t sample, const std::string& completion,
                                  const std::string& finish_reason) {
  ++samples_;
  RecordCounts counts;
  const auto records = check_completion(schema_, completion);
  if (records.empty()) {
    cut_off_ += finish_reason == "length" ? 1 : 0;
    reject(sample, completion, "the sample holds no record");
    ++counts.invalid;
  }
  for (std::size_t i = 0; i < records.size() && !done(); ++i) {
    const CheckedRecord& r = records[i];
    if (r.valid) {
      csv_ += csv_line(schema_, r.record);
      jsonl_ += json_line(r.record);
      ++totals_.valid;
      ++counts.valid;
      continue;
    }
    const bool cut = finish_reason == "length" && i + 1 == records.size();
    cut_off_ += cut ? 1 : 0;
    reject(sample, r.line,
           cut ? r.reason + " (cut off at --max-new-tokens: raise it if records are longer)"
               : r.reason);
    ++counts.invalid;
  }
  return counts;
}

void RecordCollector::reject(std::int64_t sample, const std::string& text,
                             const std::string& reason) {
  ++totals_.invalid;
  invalid_jsonl_ += json_line({{"sample", sample}, {"text", text}, {"reason", reason}});
}

double RecordCollector::valid_fraction() const {
  const std::int64_t judged = totals_.valid + totals_.invalid;
  return judged == 0 ? 0.0 : static_cast<double>(totals_.valid) / static_cast<double>(judged);
}

}  // namespace nss::generate
