// report.html's charts as inline SVG (report_html.cpp): grouped bars of a
// column's two distributions, correlation heatmaps with their colour scale,
// the principal-component scatter and the membership attacks' grades.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "evaluate/evaluation_result.h"

namespace nss::evaluate::report {

// How a heatmap maps values to colour: correlations diverge around 0,
// absolute differences grow from 0.
enum class ColourScale { kCorrelation, kDifference };

/// shares[index], 0 when absent or not finite.
double share_at(const std::vector<double>& shares, std::size_t index);
/// The labels a column's chart shows (at most 40, the largest on either
/// side, in their order).
std::vector<std::size_t> labels_shown(const ColumnDistribution& column);
std::string distribution_bars_svg(const ColumnDistribution& column,
                                  const std::vector<std::size_t>& shown);
std::string heatmap_svg(const std::vector<std::string>& columns, const std::vector<double>& values,
                        ColourScale scale, const std::string& title);
std::string colour_legend_svg(ColourScale scale);
/// At most 2,000 evenly spaced points of `points`.
std::vector<std::array<double, 2>> sample_points(const std::vector<std::array<double, 2>>& points);
std::string scatter_svg(const std::vector<std::array<double, 2>>& training,
                        const std::vector<std::array<double, 2>>& synthetic);
std::string grade_bars_svg(const std::vector<std::pair<std::string, int>>& grades);

}  // namespace nss::evaluate::report
