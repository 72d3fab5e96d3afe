// The synthetic rows that copy a training row exactly, and the Dataset
// Statistics NeMo Safe Synthesizer reports beside the privacy scores.
#pragma once

#include <cstddef>

#include "evaluate/evaluation_result.h"
#include "evaluate/evaluation_tables.h"

namespace nss::evaluate {

/// NSS's count_memorized_lines: distinct training rows that are also
/// synthetic rows. A column numeric on one side only is compared as numbers
/// when the other side's texts all read as Python floats, else as values
/// (a number never equals a text); numbers compare as floats (1 == 1.0 ==
/// True); missing cells match each other.
std::size_t count_memorized_rows(const Table& training, const Table& synthetic);

/// Percent of missing cells, truncated (int(100 * missing / cells)).
int missing_percent(const Table& table);

/// Rows and columns read and evaluated, missing percents, memorized rows.
DatasetStatistics dataset_statistics(const EvaluationTables& tables);

}  // namespace nss::evaluate
