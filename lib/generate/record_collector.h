// The outcome of `nss_generate --records N`: completions judged in sample
// order, line by line, against the training table's schema; valid records
// kept until N (the CSV with the table's columns, and the same records as
// JSONL), invalid ones kept with the sample and the reason; the counts the
// progress lines, the early stop and the summary are made of.
#pragma once

#include <cstdint>
#include <string>

#include "generate/record_validator.h"

namespace nss::generate {

struct RecordCounts {
  std::int64_t valid = 0;
  std::int64_t invalid = 0;
};

class RecordCollector {
 public:
  RecordCollector(RecordSchema schema, std::int64_t wanted);

  /// Judges every line of sample `sample`'s `completion`; `finish_reason`
  /// ("eos", "stop", "length") explains a record cut off by
  /// --max-new-tokens. A completion without any line counts as one invalid
  /// record. Valid records beyond the N wanted are not kept or counted.
  RecordCounts add(std::int64_t sample, const std::string& completion,
                   const std::string& finish_reason);

  bool done() const { return totals_.valid >= wanted_; }
  const RecordCounts& totals() const { return totals_; }
  std::int64_t samples() const { return samples_; }
  /// Invalid records whose sample reached --max-new-tokens before they closed.
  std::int64_t cut_off() const { return cut_off_; }
  /// The valid share of the records judged (0 before any).
  double valid_fraction() const;

  /// synthetic.csv (header and one line per valid record).
  const std::string& csv() const { return csv_; }
  /// synthetic.jsonl (one valid record per line, as generated).
  const std::string& jsonl() const { return jsonl_; }
  /// invalid.jsonl ({"sample", "text", "reason"} per invalid record).
  const std::string& invalid_jsonl() const { return invalid_jsonl_; }

 private:
  void reject(std::int64_t sample, const std::string& text, const std::string& reason);

  RecordSchema schema_;
  std::int64_t wanted_;
  RecordCounts totals_;
  std::int64_t samples_ = 0;
  std::int64_t cut_off_ = 0;
  std::string csv_, jsonl_, invalid_jsonl_;
};

}  // namespace nss::generate
