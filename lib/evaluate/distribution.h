// Distributions and the distance between two of them, as NeMo Safe
// Synthesizer's evaluation measures a column (statistics/stats.py): numeric
// columns on shared Doane bins, everything else by category frequencies,
// compared with the Jensen-Shannon distance (base 2).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "evaluate/evaluation_result.h"
#include "evaluate/table.h"

namespace nss::evaluate {

/// Weights by key (a category, or a bin index written as text).
using Distribution = std::map<std::string, double>;

/// Jensen-Shannon distance in [0, 1] of two weightings (each normalised);
/// 0 for no keys, 0.5887 when either side weighs nothing.
double jensen_shannon(const Distribution& p, const Distribution& q);

/// Bin edges numpy's histogram_bin_edges(bins="doane") gives the finite
/// values of both columns over their common range; 500 bins when Doane asks
/// for more. Empty when neither column has a finite value.
std::vector<double> doane_edges(const Column& a, const Column& b);

/// The count of values per bin of `edges` (right-closed, the first bin
/// closed on the left too; values outside are left out), keyed by bin index.
Distribution binned(const Column& column, const std::vector<double>& edges);

/// The count of each str(value) over every row, missing ones included.
Distribution categories(const Column& column);

/// One column compared, training against synthetic (the EvaluationField of
/// the reference): types, the distance (empty when not comparable: a side
/// without values, or other/text/empty typed), its score on the
/// distribution curve, and the shares the report draws.
ColumnDistribution compare_column(const std::string& name, const Column& training,
                                  const Column& synthetic);

/// The column-distribution curve: 10 below 0.02, 0 above 0.99, else
/// 7.44 d^2 - 16.646 d + 10.305.
double tabular_curve(double distance);

}  // namespace nss::evaluate
