// nss_prepare_data --format records --holdout: the table split into the
// rows the model trains on and the holdout (holdout.h), the holdout written
// as a CSV beside the token file with owner-only permissions (it is as
// private as the training table), and what the token file records of both.
#pragma once

#include <string>

#include "core/staged_outputs.h"
#include "data/example_source.h"
#include "data/holdout.h"
#include "data/token_file_format.h"

namespace nss::data {

/// A records table split by split_holdout.
struct RecordsSplit {
  RecordsTable training;
  RecordsTable holdout;  // no rows: no holdout
  HoldoutSplit split;
};

/// Splits `table`: rows of one `group_by` value stay together, and without
/// group_by identical rows do, so no holdout row is also a training row.
/// UsageError for a group_by column the header lacks, and as holdout_target.
RecordsSplit split_records(RecordsTable table, const std::string& group_by,
                           const HoldoutOptions& options);

/// Where the holdout goes beside the token file `output`: records.h5 ->
/// records.holdout.csv, and (--holdout-eval) records.holdout.h5.
std::string holdout_csv_path(const std::string& output);
std::string holdout_tokens_path(const std::string& output);

/// `table` as CSV text: the header, then one line per row.
std::string table_csv(const RecordsTable& table);

/// The record of the table at `source` every records token file carries:
/// its absolute path and SHA-256.
HoldoutRecord source_record(const std::string& source);

/// Stages the holdout of `split` for holdout_csv_path(output) (mode 0600,
/// replacing an earlier holdout file when published) and fills the rest of
/// `record`, the source's record.
void stage_holdout_table(const RecordsSplit& split, const HoldoutOptions& options,
                         const std::string& output, HoldoutRecord& record, StagedOutputs& staged);

}  // namespace nss::data
