// Column correlation stability: the association matrix of the tabular
// columns (Pearson between numbers, Theil's U between categories, the
// correlation ratio between a category and a number) of the training and
// the synthetic table, and how far apart the two are (NeMo Safe
// Synthesizer's calculate_correlation, step for step).
#pragma once

#include <string>
#include <vector>

#include "evaluate/evaluation_result.h"
#include "evaluate/evaluation_tables.h"

namespace nss::evaluate {

/// Theil's U: how much knowing `y` tells about `x`, in [0, 1].
double theils_u(const std::vector<std::string>& x, const std::vector<std::string>& y);

/// The correlation ratio of numbers `values` grouped by `categories`.
double correlation_ratio(const std::vector<std::string>& categories,
                         const std::vector<double>& values);

/// Pearson's r, 0 when a side has fewer than two distinct values.
double pearson(const std::vector<double>& x, const std::vector<double>& y);

/// The association matrix (row-major) of `columns` of `table`, where
/// `nominal[i]` says column i is a category column (typed on training).
std::vector<double> association_matrix(const Table& table, const std::vector<std::size_t>& columns,
                                       const std::vector<bool>& nominal);

/// The component: unavailable with fewer than two tabular columns; the
/// mean absolute difference of the matrices on its curve.
CorrelationResult measure_correlation(const EvaluationTables& tables);

/// 10 below 0.01, 0 above 0.46, else 37.562 m^2 - 35.643 m + 10.056.
double correlation_curve(double mean_absolute_difference);

}  // namespace nss::evaluate
