#include "evaluate/report_charts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>

#include "evaluate/report_html.h"
#include "evaluate/report_text.h"

namespace nss::evaluate::report {
namespace {

// ----------------------------------------------------------------- colours

struct Rgb {
  double red, green, blue;
};

const Rgb kMissingColour{189, 189, 189};

Rgb blend(Rgb from, Rgb to, double t) {
  return {from.red + (to.red - from.red) * t, from.green + (to.green - from.green) * t,
          from.blue + (to.blue - from.blue) * t};
}

std::string css_colour(Rgb colour) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "#%02x%02x%02x", static_cast<int>(std::lround(colour.red)),
                static_cast<int>(std::lround(colour.green)),
                static_cast<int>(std::lround(colour.blue)));
  return buffer;
}

constexpr int kColourSteps = 40;

double scale_low(ColourScale scale) {
  return scale == ColourScale::kCorrelation ? -1.0 : 0.0;
}

// The colour step (0..kColourSteps) of `value`, clamped to the scale; -1 for NaN.
int colour_step(double value, ColourScale scale) {
  if (std::isnan(value)) return -1;
  const double low = scale_low(scale);
  const double t = (std::clamp(value, low, 1.0) - low) / (1.0 - low);
  return static_cast<int>(std::lround(t * kColourSteps));
}

Rgb step_colour(int step, ColourScale scale) {
  if (step < 0) return kMissingColour;
  const double t = static_cast<double>(step) / kColourSteps;
  if (scale == ColourScale::kCorrelation) {
    const Rgb blue{33, 102, 172}, white{247, 247, 247}, red{178, 24, 43};
    return t < 0.5 ? blend(blue, white, t * 2) : blend(white, red, t * 2 - 1);
  }
  const Rgb pale{255, 247, 236}, orange{252, 141, 89}, dark{127, 0, 0};
  return t < 0.5 ? blend(pale, orange, t * 2) : blend(orange, dark, t * 2 - 1);
}

// Whether text on this step needs to be light to be read.
bool dark_step(int step, ColourScale scale) {
  if (step < 0) return false;
  const double t = static_cast<double>(step) / kColourSteps;
  return scale == ColourScale::kCorrelation ? std::abs(t - 0.5) > 0.3 : t > 0.6;
}

// ----------------------------------------------------------------- SVG pieces

std::string svg_open(int width, int height, const std::string& label) {
  const std::string w = std::to_string(width), h = std::to_string(height);
  return "<svg viewBox=\"0 0 " + w + " " + h + "\" width=\"" + w + "\" height=\"" + h +
         "\" role=\"img\" aria-label=\"" + html_escape(label) + "\">";
}

std::string svg_text(double x, double y, const std::string& text, const std::string& attributes) {
  return "<text x=\"" + fixed(x, 1) + "\" y=\"" + fixed(y, 1) + "\" " + attributes + ">" +
         html_escape(text) + "</text>";
}

std::string svg_rect(double x, double y, double width, double height, const std::string& fill) {
  return "<rect x=\"" + fixed(x, 1) + "\" y=\"" + fixed(y, 1) + "\" width=\"" + fixed(width, 1) +
         "\" height=\"" + fixed(height, 1) + "\" fill=\"" + fill + "\"/>";
}

// The smallest of 1, 2, 2.5, 5 times a power of ten at or above `value`.
double nice_ceiling(double value) {
  if (!(value > 0)) return 1;
  const double power = std::pow(10.0, std::floor(std::log10(value)));
  for (double factor : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (factor * power >= value * (1 - 1e-12)) return factor * power;
  }
  return 10 * power;
}

// Round tick positions covering [low, high], about `count` of them.
std::vector<double> nice_ticks(double low, double high, int count) {
  const double step = nice_ceiling((high - low) / std::max(1, count));
  std::vector<double> ticks;
  for (double tick = std::ceil(low / step) * step; tick <= high + step * 1e-9; tick += step) {
    ticks.push_back(std::abs(tick) < step * 1e-9 ? 0.0 : tick);
  }
  return ticks;
}

std::string tick_label(double value, double step) {
  const int decimals = std::clamp(static_cast<int>(std::ceil(-std::log10(step))), 0, 6);
  return fixed(value, decimals);
}

}  // namespace

// ----------------------------------------------------------------- charts

const char* const kTrainingColour = "#1f77b4";
const char* const kSyntheticColour = "#ff7f0e";

constexpr std::size_t kMaxLabelsShown = 40;
constexpr std::size_t kMaxScatterPoints = 2000;

double share_at(const std::vector<double>& shares, std::size_t index) {
  return index < shares.size() && std::isfinite(shares[index]) ? shares[index] : 0.0;
}

double larger_share(const ColumnDistribution& column, std::size_t index) {
  return std::max(share_at(column.training_share, index), share_at(column.synthetic_share, index));
}

// The labels a chart shows: the kMaxLabelsShown with the largest share on
// either side, kept in their original order so numeric bins stay ordered.
std::vector<std::size_t> labels_shown(const ColumnDistribution& column) {
  std::vector<std::size_t> order(column.labels.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (order.size() <= kMaxLabelsShown) return order;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return larger_share(column, a) > larger_share(column, b);
  });
  order.resize(kMaxLabelsShown);
  std::sort(order.begin(), order.end());
  return order;
}

std::string label_text(const std::string& label) {
  return label.empty() ? "(blank)" : label;
}

// Grouped horizontal bars, one row per label: training above synthetic.
std::string distribution_bars_svg(const ColumnDistribution& column,
                                  const std::vector<std::size_t>& shown) {
  constexpr int kLabelWidth = 170, kBarWidth = 330, kRowHeight = 22, kAxisHeight = 22;
  double largest = 0;
  for (std::size_t index : shown) largest = std::max(largest, larger_share(column, index));
  const double axis_max = nice_ceiling(largest);
  const int height = kAxisHeight + kRowHeight * static_cast<int>(shown.size()) + 4;
  std::string svg = svg_open(kLabelWidth + kBarWidth + 40, height,
                             "Training and synthetic shares of column " + column.name);
  for (double tick : {0.0, axis_max / 2, axis_max}) {
    const double x = kLabelWidth + kBarWidth * tick / axis_max;
    append(svg, "<line class=\"grid\" x1=\"", fixed(x, 1), "\" x2=\"", fixed(x, 1), "\" y1=\"",
           std::to_string(kAxisHeight - 4), "\" y2=\"", std::to_string(height), "\"/>",
           svg_text(x, 12, tick_label(100 * tick, 50 * axis_max) + "%",
                    "class=\"tick\" text-anchor=\"middle\""));
  }
  for (std::size_t row = 0; row < shown.size(); ++row) {
    const std::size_t index = shown[row];
    const double y = kAxisHeight + kRowHeight * static_cast<double>(row);
    const double training = share_at(column.training_share, index);
    const double synthetic = share_at(column.synthetic_share, index);
    const std::string label = label_text(column.labels[index]);
    append(svg, "<g><title>",
           html_escape(label + ": training " + percent(training) + ", synthetic " +
                       percent(synthetic)),
           "</title>", svg_text(kLabelWidth - 6, y + 14, shorten(label, 24), "text-anchor=\"end\""),
           svg_rect(kLabelWidth, y + 3, kBarWidth * training / axis_max, 7, kTrainingColour),
           svg_rect(kLabelWidth, y + 11, kBarWidth * synthetic / axis_max, 7, kSyntheticColour),
           "</g>");
  }
  return svg + "</svg>";
}

// The cells as one path per colour step: a 250-column matrix stays a few MB.
std::string heatmap_cells(const std::vector<double>& values, int count, int cell, int origin,
                          ColourScale scale) {
  std::map<int, std::string> paths;  // ordered: the page is deterministic
  const std::string side = std::to_string(cell);
  for (int row = 0; row < count; ++row) {
    for (int col = 0; col < count; ++col) {
      const int step = colour_step(values[static_cast<std::size_t>(row) * count + col], scale);
      append(paths[step], "M", std::to_string(origin + col * cell), " ",
             std::to_string(origin + row * cell), "h", side, "v", side, "h-", side, "z");
    }
  }
  std::string svg;
  for (const auto& [step, path] : paths) {
    append(svg, "<path fill=\"", css_colour(step_colour(step, scale)), "\" d=\"", path, "\"/>");
  }
  return svg;
}

// Per cell, a hover title, and the value (or "n/a") written where it fits.
std::string heatmap_annotations(const std::vector<std::string>& columns,
                                const std::vector<double>& values, int cell, int origin,
                                ColourScale scale) {
  const int count = static_cast<int>(columns.size());
  std::string svg;
  for (int row = 0; row < count; ++row) {
    for (int col = 0; col < count; ++col) {
      const double value = values[static_cast<std::size_t>(row) * count + col];
      const std::string shown = std::isnan(value) ? "n/a" : fixed(value, 2);
      const double x = origin + col * cell, y = origin + row * cell;
      append(svg, "<rect fill-opacity=\"0\" x=\"", fixed(x, 0), "\" y=\"", fixed(y, 0),
             "\" width=\"", std::to_string(cell), "\" height=\"", std::to_string(cell),
             "\"><title>", html_escape(columns[row] + " \u00d7 " + columns[col] + ": " + shown),
             "</title></rect>");
      const bool fits = std::isnan(value) ? cell >= 16 : cell >= 26;
      if (!fits) continue;
      const bool light = dark_step(colour_step(value, scale), scale);
      append(svg, svg_text(x + cell / 2.0, y + cell / 2.0 + 3, shown,
                           light ? "class=\"cell light\" text-anchor=\"middle\""
                                 : "class=\"cell\" text-anchor=\"middle\""));
    }
  }
  return svg;
}

constexpr std::size_t kHeatmapLabelCharacters = 16;

std::string heatmap_labels(const std::vector<std::string>& columns, int cell, int origin,
                           int font) {
  std::string svg;
  const std::string size = "font-size=\"" + std::to_string(font) + "\"";
  for (std::size_t k = 0; k < columns.size(); ++k) {
    const double middle = origin + cell * (k + 0.5) + font * 0.35;
    const std::string label = shorten(columns[k], kHeatmapLabelCharacters);
    append(svg, svg_text(origin - 4, middle, label, size + " text-anchor=\"end\""),
           "<text transform=\"translate(", fixed(middle, 1), ",", std::to_string(origin - 4),
           ") rotate(-90)\" ", size, ">", html_escape(label), "</text>");
  }
  return svg;
}

// Beyond this many columns cells get no hover titles, to keep the page small.
constexpr std::size_t kMaxAnnotatedColumns = 40;

std::string heatmap_svg(const std::vector<std::string>& columns, const std::vector<double>& values,
                        ColourScale scale, const std::string& title) {
  const int count = static_cast<int>(columns.size());
  const int cell = std::clamp(440 / std::max(count, 1), 9, 40);
  const int font = std::min(11, cell - 1);
  std::size_t longest = 1;
  for (const std::string& column : columns) {
    longest = std::max(longest, character_count(shorten(column, kHeatmapLabelCharacters)));
  }
  const int origin = 10 + static_cast<int>(std::ceil(0.62 * font * static_cast<double>(longest)));
  const int size = origin + count * cell + 4;
  std::string svg = svg_open(size, size, title);
  append(svg, heatmap_labels(columns, cell, origin, font),
         heatmap_cells(values, count, cell, origin, scale));
  if (columns.size() <= kMaxAnnotatedColumns) {
    svg += heatmap_annotations(columns, values, cell, origin, scale);
  }
  return svg + "</svg>";
}

std::string colour_legend_svg(ColourScale scale) {
  constexpr int kSwatch = 5, kLeft = 10;
  const int bar_end = kLeft + (kColourSteps + 1) * kSwatch;
  std::string svg = svg_open(bar_end + 60, 34, "Colour scale");
  for (int step = 0; step <= kColourSteps; ++step) {
    svg += svg_rect(kLeft + step * kSwatch, 2, kSwatch, 12, css_colour(step_colour(step, scale)));
  }
  const bool correlation = scale == ColourScale::kCorrelation;
  const char* const ticks[] = {correlation ? "-1" : "0", correlation ? "0" : "0.5",
                               correlation ? "1" : "\u22651"};
  for (int k = 0; k < 3; ++k) {
    const double x = kLeft + (k * kColourSteps / 2 + 0.5) * kSwatch;
    svg += svg_text(x, 28, ticks[k], "class=\"tick\" text-anchor=\"middle\"");
  }
  append(svg, svg_rect(bar_end + 14, 2, 12, 12, css_colour(kMissingColour)),
         svg_text(bar_end + 30, 12, "n/a", "class=\"tick\""));
  return svg + "</svg>";
}

// At most kMaxScatterPoints evenly spaced points: deterministic, and spread
// over the whole table rather than its head.
std::vector<std::array<double, 2>> sample_points(const std::vector<std::array<double, 2>>& points) {
  if (points.size() <= kMaxScatterPoints) return points;
  std::vector<std::array<double, 2>> sample;
  sample.reserve(kMaxScatterPoints);
  for (std::size_t k = 0; k < kMaxScatterPoints; ++k) {
    sample.push_back(points[k * points.size() / kMaxScatterPoints]);
  }
  return sample;
}

bool finite_point(const std::array<double, 2>& point) {
  return std::isfinite(point[0]) && std::isfinite(point[1]);
}

struct PlotArea {
  double low[2] = {0, 0}, high[2] = {0, 0};  // data range per axis
  double left = 56, top = 12, width = 470, height = 360;
  double x(double value) const { return left + width * (value - low[0]) / (high[0] - low[0]); }
  double y(double value) const {
    return top + height - height * (value - low[1]) / (high[1] - low[1]);
  }
};

// The range of the finite points, padded by 5%; false when there are none.
bool fit_area(const std::vector<std::array<double, 2>>& a,
              const std::vector<std::array<double, 2>>& b, PlotArea& area) {
  bool any = false;
  for (const auto* points : {&a, &b}) {
    for (const auto& point : *points) {
      if (!finite_point(point)) continue;
      for (int axis = 0; axis < 2; ++axis) {
        area.low[axis] = any ? std::min(area.low[axis], point[axis]) : point[axis];
        area.high[axis] = any ? std::max(area.high[axis], point[axis]) : point[axis];
      }
      any = true;
    }
  }
  for (int axis = 0; any && axis < 2; ++axis) {
    const double pad =
        area.high[axis] > area.low[axis] ? (area.high[axis] - area.low[axis]) / 20 : 1.0;
    area.low[axis] -= pad;
    area.high[axis] += pad;
  }
  return any;
}

std::string scatter_axes(const PlotArea& area) {
  std::string svg;
  const auto x_ticks = nice_ticks(area.low[0], area.high[0], 6);
  const auto y_ticks = nice_ticks(area.low[1], area.high[1], 5);
  const double x_step = x_ticks.size() > 1 ? x_ticks[1] - x_ticks[0] : 1;
  const double y_step = y_ticks.size() > 1 ? y_ticks[1] - y_ticks[0] : 1;
  const double bottom = area.top + area.height, right = area.left + area.width;
  for (double tick : x_ticks) {
    const std::string x = fixed(area.x(tick), 1);
    append(svg, "<line class=\"grid\" x1=\"", x, "\" x2=\"", x, "\" y1=\"", fixed(area.top, 1),
           "\" y2=\"", fixed(bottom, 1), "\"/>",
           svg_text(area.x(tick), bottom + 14, tick_label(tick, x_step),
                    "class=\"tick\" text-anchor=\"middle\""));
  }
  for (double tick : y_ticks) {
    const std::string y = fixed(area.y(tick), 1);
    append(svg, "<line class=\"grid\" x1=\"", fixed(area.left, 1), "\" x2=\"", fixed(right, 1),
           "\" y1=\"", y, "\" y2=\"", y, "\"/>",
           svg_text(area.left - 6, area.y(tick) + 4, tick_label(tick, y_step),
                    "class=\"tick\" text-anchor=\"end\""));
  }
  append(svg, svg_text(area.left + area.width / 2, bottom + 32, "PC1", "text-anchor=\"middle\""),
         "<text transform=\"translate(14,", fixed(area.top + area.height / 2, 1),
         ") rotate(-90)\" text-anchor=\"middle\">PC2</text>");
  return svg;
}

std::string scatter_points(const PlotArea& area, const std::vector<std::array<double, 2>>& points,
                           const char* colour) {
  std::string svg = std::string("<g fill=\"") + colour + "\" fill-opacity=\"0.45\">";
  for (const auto& point : points) {
    if (!finite_point(point)) continue;
    append(svg, "<circle cx=\"", fixed(area.x(point[0]), 1), "\" cy=\"", fixed(area.y(point[1]), 1),
           "\" r=\"2.2\"/>");
  }
  return svg + "</g>";
}

// Training and synthetic points on the first two principal components;
// empty when no point is finite.
std::string scatter_svg(const std::vector<std::array<double, 2>>& training,
                        const std::vector<std::array<double, 2>>& synthetic) {
  PlotArea area;
  if (!fit_area(training, synthetic, area)) return "";
  std::string svg = svg_open(540, 420, "Principal components of training and synthetic rows");
  append(svg, scatter_axes(area), scatter_points(area, training, kTrainingColour),
         scatter_points(area, synthetic, kSyntheticColour));
  return svg + "</svg>";
}

// How many attacks got each grade, one bar per grade in the grade's colour.
std::string grade_bars_svg(const std::vector<std::pair<std::string, int>>& grades) {
  constexpr int kLeft = 44, kTop = 18, kPlotHeight = 160, kSlot = 84;
  int largest = 0;
  for (const auto& grade : grades) largest = std::max(largest, grade.second);
  const double axis_max = nice_ceiling(std::max(largest, 1));
  const int width = kLeft + kSlot * static_cast<int>(grades.size()) + 10;
  std::string svg = svg_open(width, kTop + kPlotHeight + 30, "Membership inference attack grades");
  for (double tick : {0.0, axis_max / 2, axis_max}) {
    const double y = kTop + kPlotHeight - kPlotHeight * tick / axis_max;
    append(svg, "<line class=\"grid\" x1=\"", std::to_string(kLeft), "\" x2=\"",
           std::to_string(width), "\" y1=\"", fixed(y, 1), "\" y2=\"", fixed(y, 1), "\"/>",
           svg_text(kLeft - 6, y + 4, tick_label(tick, axis_max / 2),
                    "class=\"tick\" text-anchor=\"end\""));
  }
  for (std::size_t k = 0; k < grades.size(); ++k) {
    const auto& [grade, count] = grades[k];
    const double height = kPlotHeight * std::max(count, 0) / axis_max;
    const double x = kLeft + kSlot * static_cast<double>(k) + 12;
    const double top = kTop + kPlotHeight - height;
    append(svg, svg_rect(x, top, kSlot - 24, height, grade_colour(grade)),
           svg_text(x + (kSlot - 24) / 2.0, top - 4, std::to_string(count),
                    "class=\"tick\" text-anchor=\"middle\""),
           svg_text(x + (kSlot - 24) / 2.0, kTop + kPlotHeight + 16, shorten(grade, 12),
                    "text-anchor=\"middle\""));
  }
  return svg + "</svg>";
}

}  // namespace nss::evaluate::report
