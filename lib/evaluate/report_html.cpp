#include "evaluate/report_html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>

namespace nss::evaluate {
namespace {

// ----------------------------------------------------------------- text and numbers

template <typename... Parts>
void append(std::string& out, const Parts&... parts) {
  (out.append(parts), ...);
}

std::string fixed(double value, int decimals) {
  if (!std::isfinite(value)) return "n/a";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  std::string text = buffer;
  // "-0.0" reads as a sign the data does not have.
  if (text[0] == '-' && text.find_first_not_of("-0.") == std::string::npos) text.erase(0, 1);
  return text;
}

std::string significant(double value) {
  if (!std::isfinite(value)) return "n/a";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.4g", value);
  return buffer;
}

std::string thousands(std::size_t count) {
  std::string digits = std::to_string(count);
  for (long at = static_cast<long>(digits.size()) - 3; at > 0; at -= 3) digits.insert(at, ",");
  return digits;
}

std::string percent(double share) {
  return std::isfinite(share) ? fixed(100.0 * share, 1) + "%" : "n/a";
}

std::string score_value(const Score& score) {
  return score.score ? fixed(*score.score, 1) : "";
}

std::string score_text(const Score& score) {
  return score.score ? fixed(*score.score, 1) : "n/a";
}

// The byte length of the well-formed UTF-8 character at `at` (Unicode's
// table 3-7: no overlong form, surrogate or code point past U+10FFFF), or 0.
std::size_t valid_character(const std::string& text, std::size_t at) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[at + k]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  const std::size_t length = lead >= 0xC2 && lead <= 0xDF   ? 2
                             : lead >= 0xE0 && lead <= 0xEF ? 3
                             : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                            : 0;
  if (length == 0 || at + length > text.size()) return 0;
  const unsigned char low = lead == 0xE0 ? 0xA0 : lead == 0xF0 ? 0x90 : 0x80;
  const unsigned char high = lead == 0xED ? 0x9F : lead == 0xF4 ? 0x8F : 0xBF;
  if (byte(1) < low || byte(1) > high) return 0;
  for (std::size_t k = 2; k < length; ++k) {
    if ((byte(k) & 0xC0) != 0x80) return 0;
  }
  return length;
}

std::size_t character_count(const std::string& text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char byte) {
    return (static_cast<unsigned char>(byte) & 0xC0) != 0x80;
  }));
}

// At most `max_characters` characters of `text`, cut on a character boundary.
std::string shorten(const std::string& text, std::size_t max_characters) {
  std::size_t at = 0, characters = 0;
  while (at < text.size() && characters < max_characters) {
    at += std::max<std::size_t>(1, valid_character(text, at));
    ++characters;
  }
  return at < text.size() ? text.substr(0, at) + "\u2026" : text;
}

std::string grade_class(const std::string& grade) {
  static const std::map<std::string, std::string> kClasses = {{"Excellent", "excellent"},
                                                              {"Very Good", "very-good"},
                                                              {"Good", "good"},
                                                              {"Moderate", "moderate"},
                                                              {"Poor", "poor"}};
  const auto found = kClasses.find(grade);
  return "grade-" + (found == kClasses.end() ? std::string("unavailable") : found->second);
}

std::string grade_colour(const std::string& grade) {
  static const std::map<std::string, std::string> kColours = {{"Excellent", "#1a7f37"},
                                                              {"Very Good", "#5a9e2f"},
                                                              {"Good", "#b58900"},
                                                              {"Moderate", "#d9731a"},
                                                              {"Poor", "#c62828"}};
  const auto found = kColours.find(grade);
  return found == kColours.end() ? "#8a8a8a" : found->second;
}

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

// How a heatmap maps values to colour: correlations diverge around 0,
// absolute differences grow from 0.
enum class ColourScale { kCorrelation, kDifference };

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

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (std::size_t at = 0; at < text.size();) {
    const unsigned char byte = static_cast<unsigned char>(text[at]);
    const std::size_t length = valid_character(text, at);
    if (length == 0 || (byte < 0x20 && byte != '\t' && byte != '\n' && byte != '\r') ||
        byte == 0x7F) {
      out += "\uFFFD";  // not text an HTML page may hold
      ++at;
      continue;
    }
    switch (byte) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.append(text, at, length);
    }
    at += length;
  }
  return out;
}

namespace {

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

}  // namespace
namespace {

// ----------------------------------------------------------------- page sections

const char* const kDpNotice =
    "This report reads the training table (private data) and is itself not covered by any "
    "differential-privacy guarantee \u2014 share it like the training data.";

const char* const kStyle = R"css(
:root{--ink:#1d2329;--muted:#5b6570;--line:#d9dee3;--panel:#f6f8fa;--grade:#8a8a8a}
*{box-sizing:border-box}
body{margin:0;font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--ink);background:#fff}
main{max-width:1240px;margin:0 auto;padding:24px 32px 48px}
h1{font-size:26px;margin:0 0 4px}
h2{font-size:20px;margin:0 0 10px;border-bottom:1px solid var(--line);padding-bottom:4px}
h3{font-size:16px;margin:14px 0 6px}
section{margin:36px 0}
nav a{margin-right:14px;color:#0b5cad;text-decoration:none}
.subtitle,.meta,.note,.left-out,.na,.caption{color:var(--muted)}
.na{font-style:italic}
.dp-notice{background:#fff4e5;border-left:4px solid #d9731a;padding:8px 12px;margin:14px 0;font-weight:600}
dl.run{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:12px 0}
dl.run dt{color:var(--muted)}
dl.run dd{margin:0;word-break:break-all}
code{font-size:12px;background:var(--panel);padding:1px 4px;border-radius:3px}
.scores{display:flex;gap:24px;flex-wrap:wrap}
.score-card{flex:1 1 320px;border:1px solid var(--line);border-top:8px solid var(--grade);border-radius:8px;padding:14px 20px;background:var(--panel)}
.score-card h2{border:0;font-size:18px;margin:0;padding:0}
.score-card .big{font-size:64px;font-weight:700;line-height:1.1;color:var(--grade)}
.out-of{font-size:24px;color:var(--muted);font-weight:400}
.grade-excellent{--grade:#1a7f37}.grade-very-good{--grade:#5a9e2f}.grade-good{--grade:#b58900}
.grade-moderate{--grade:#d9731a}.grade-poor{--grade:#c62828}.grade-unavailable{--grade:#8a8a8a}
.grade{display:inline-block;padding:1px 8px;border-radius:10px;color:#fff;background:var(--grade);font-size:12px;font-weight:600;white-space:nowrap}
.score-card .grade{font-size:16px;padding:2px 12px}
table{border-collapse:collapse;margin:8px 0}
th,td{border-bottom:1px solid var(--line);padding:4px 10px;text-align:left;vertical-align:top}
thead th{border-bottom:2px solid var(--line)}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.two{display:grid;grid-template-columns:1fr 1fr;gap:28px}
@media (max-width:900px){.two{grid-template-columns:1fr}}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:16px;align-items:start}
figure.scatter{width:fit-content;max-width:100%}
.heatmaps{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}
figure{margin:0;border:1px solid var(--line);border-radius:6px;padding:10px;background:#fff;overflow-x:auto}
figcaption{margin-bottom:6px}
svg{display:block}
svg text{font-size:11px;fill:var(--ink)}
svg text.tick{font-size:10px;fill:var(--muted)}
svg text.cell{font-size:9px;pointer-events:none}
svg text.light{fill:#fff}
svg .grid{stroke:#e3e7eb;stroke-width:1}
.swatch{display:inline-block;width:12px;height:12px;border-radius:2px;vertical-align:-1px;margin:0 4px 0 12px}
.swatch.training{background:#1f77b4}.swatch.synthetic{background:#ff7f0e}
.memorized strong{font-size:16px}
footer{color:var(--muted);border-top:1px solid var(--line);padding-top:8px;margin-top:40px;font-size:12px}
)css";

struct Component {
  const char* key;  // the data-score marker: the component as evaluation.json names it
  const char* title;
  const char* meaning;
  const Score* score;
};

std::vector<Component> quality_components(const EvaluationResult& result) {
  return {
      {"column_distribution_stability", "Column Distribution Stability",
       "Distribution: per column, how close the synthetic values are distributed to the training "
       "values (Jensen-Shannon distance on shared bins or categories).",
       &result.column_distribution},
      {"column_correlation_stability", "Column Correlation Stability",
       "Correlation: whether the synthetic table keeps the associations between pairs of "
       "columns (how far its correlation matrix lies from the training one).",
       &result.correlation.score},
      {"deep_structure_stability", "Deep Structure Stability",
       "Deep structure: both tables projected on the training table's first two principal "
       "components; how alike the projections are distributed.",
       &result.deep_structure.score},
      {"text_structure_similarity", "Text Structure Similarity",
       "Text structure: for free-text columns, whether sentence, word and character counts "
       "look alike.",
       &result.text_structure.score},
      {"text_semantic_similarity", "Text Semantic Similarity",
       "Text semantics: for free-text columns, how close the meaning of the synthetic text is "
       "to the training text (sentence embeddings).",
       &result.text_semantic},
  };
}

std::vector<Component> privacy_components(const EvaluationResult& result) {
  return {
      {"membership_inference_protection", "Membership Inference Protection",
       "Membership inference: whether an attacker holding a record can tell from the synthetic "
       "table that it was a training row rather than a holdout row (360 attacks).",
       &result.membership.score},
      {"attribute_inference_protection", "Attribute Inference Protection",
       "Attribute inference: whether an attacker who knows some columns of a training row "
       "(quasi-identifiers) can infer its other columns from the nearest synthetic rows.",
       &result.attribute.score},
      {"pii_replay", "PII Replay",
       "PII replay: whether personal identifiers of the training table (names, addresses, "
       "numbers) reappear verbatim in the synthetic table.",
       &result.pii_replay},
  };
}

Component quality_headline(const EvaluationResult& result) {
  return {"synthetic_quality_score", "Synthetic Quality Score",
          "How well the synthetic table keeps the statistical properties of the training table: "
          "the components below, combined.",
          &result.quality};
}

Component privacy_headline(const EvaluationResult& result) {
  return {"data_privacy_score", "Data Privacy Score",
          "How well the synthetic table protects the individual rows of the training table: the "
          "components below, combined.",
          &result.privacy};
}

// The marker a test reads back: which score, its value and its grade.
std::string score_marker(const char* key, const Score& score) {
  return std::string("<span class=\"score\" data-score=\"") + key + "\" data-value=\"" +
         score_value(score) + "\" data-grade=\"" + html_escape(score.grade) + "\">" +
         score_text(score) + "</span>";
}

std::string grade_badge(const Score& score) {
  return "<span class=\"grade " + grade_class(score.grade) + "\">" + html_escape(score.grade) +
         "</span>";
}

std::string notes_paragraph(const Score& score) {
  return score.notes.empty() ? "" : "<p class=\"note\">" + html_escape(score.notes) + "</p>";
}

// A section's own score line (no marker: each score is marked once, above).
std::string section_score(const Score& score) {
  return "<p>Score <strong>" + score_text(score) + "</strong> " + grade_badge(score) + "</p>" +
         notes_paragraph(score);
}

std::string distance_text(const std::optional<double>& distance) {
  return distance ? fixed(*distance, 4) : "n/a";
}

void append_head(std::string& out, const ReportContext& context) {
  append(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
         "<title>Synthetic data evaluation: ", html_escape(context.synthetic_path),
         "</title>\n<style>", kStyle, "</style>\n</head>\n<body>\n<main>\n");
}

void append_header(std::string& out, const ReportContext& context) {
  const std::string holdout = context.holdout_path.empty()
                                  ? "none"
                                  : "<code>" + html_escape(context.holdout_path) + "</code>";
  append(out, "<header>\n<h1>Synthetic data evaluation</h1>\n",
         "<p class=\"subtitle\">Synthetic Quality Score and Data Privacy Score, computed as NeMo "
         "Safe Synthesizer computes them.</p>\n",
         "<p class=\"dp-notice\">", kDpNotice, "</p>\n<dl class=\"run\">",
         "<dt>Training table</dt><dd><code>", html_escape(context.training_path), "</code></dd>",
         "<dt>Holdout table</dt><dd>", holdout, "</dd>", "<dt>Synthetic table</dt><dd><code>",
         html_escape(context.synthetic_path), "</code></dd>", "<dt>Generated</dt><dd>",
         html_escape(context.generated_at), " by nss_hpc ", html_escape(context.version),
         "</dd></dl>\n");
  append(out, "<nav><a href=\"#scores\">Scores</a><a href=\"#statistics\">Dataset</a>",
         "<a href=\"#columns\">Columns</a><a href=\"#correlation\">Correlations</a>",
         "<a href=\"#deep-structure\">Deep structure</a><a href=\"#text\">Text</a>",
         "<a href=\"#membership\">Membership inference</a>",
         "<a href=\"#attribute\">Attribute inference</a>",
         "<a href=\"#unavailable\">Unavailable</a></nav>\n</header>\n");
}

void append_score_card(std::string& out, const Component& headline) {
  const Score& score = *headline.score;
  append(out, "<div class=\"score-card ", grade_class(score.grade), "\"><h2>", headline.title,
         "</h2><div class=\"big\">", score_marker(headline.key, score),
         "<span class=\"out-of\"> / 10</span></div>", grade_badge(score), notes_paragraph(score),
         "</div>\n");
}

void append_headline_scores(std::string& out, const EvaluationResult& result) {
  out += "<section id=\"scores\" class=\"scores\">\n";
  append_score_card(out, quality_headline(result));
  append_score_card(out, privacy_headline(result));
  out += "</section>\n";
}

void append_component_table(std::string& out, const std::vector<Component>& components) {
  out +=
      "<table><thead><tr><th>Component</th><th class=\"num\">Score</th><th>Grade</th>"
      "<th>What it measures</th></tr></thead><tbody>";
  for (const Component& component : components) {
    append(out, "<tr><td>", component.title, "</td><td class=\"num\">",
           score_marker(component.key, *component.score), "</td><td>",
           grade_badge(*component.score), "</td><td>", component.meaning, "</td></tr>");
  }
  out += "</tbody></table>";
}

void append_meanings(std::string& out, const EvaluationResult& result) {
  const Component quality = quality_headline(result), privacy = privacy_headline(result);
  const DatasetStatistics& statistics = result.statistics;
  append(out, "<section id=\"meaning\"><h2>What these scores mean</h2>",
         "<p>Scores run from 0 to 10. Grades: Excellent 8\u201310, Very Good 6\u20138, Good "
         "4\u20136, Moderate 2\u20134, Poor 0\u20132; a component that could not be computed is "
         "Unavailable and left out.</p>\n<div class=\"two\"><div><h3>",
         quality.title, " (SQS)</h3><p>", quality.meaning, "</p>");
  append_component_table(out, quality_components(result));
  append(out, "</div><div><h3>", privacy.title, " (DPS)</h3><p>", privacy.meaning, "</p>");
  append_component_table(out, privacy_components(result));
  append(out, "<p class=\"memorized\">Exact training rows reproduced: <strong>",
         thousands(statistics.memorized_rows), "</strong> of the ",
         thousands(statistics.synthetic_rows),
         " synthetic rows evaluated are copies of training rows.</p></div></div></section>\n");
}

std::string privacy_sentence(const ReportContext& context) {
  if (!context.training_known)
    return "How the model was trained is not known here (nss_evaluate --step STEP_DIR shows a "
           "private run's guarantee).";
  if (!context.trained_privately) return "Trained without differential privacy.";
  std::string text = "Trained with differential privacy: \u03b5 = " +
                     (context.epsilon ? significant(*context.epsilon) : "not recorded") +
                     ", \u03b4 = " + (context.delta ? significant(*context.delta) : "not recorded");
  if (!context.accountant.empty()) text += " (" + context.accountant + " accountant)";
  return text + ".";
}

void append_privacy_line(std::string& out, const ReportContext& context) {
  append(out, "<section id=\"privacy\"><h2>Differential privacy</h2><p class=\"privacy-line\">",
         html_escape(privacy_sentence(context)), "</p>");
  if (context.trained_privately) {
    out +=
        "<p class=\"caption\">The guarantee bounds what the trained model, and so the "
        "synthetic table, reveals about any one training record.</p>";
  }
  out += "</section>\n";
}

}  // namespace
namespace {

void append_statistics(std::string& out, const DatasetStatistics& statistics, bool has_holdout) {
  const std::string holdout = has_holdout ? thousands(statistics.holdout_rows) : "\u2014";
  append(out, "<section id=\"statistics\"><h2>Dataset statistics</h2>",
         "<table><thead><tr><th></th><th class=\"num\">Training</th>",
         "<th class=\"num\">Synthetic</th><th class=\"num\">Holdout</th></tr></thead><tbody>",
         "<tr><th>Rows read</th><td class=\"num\">", thousands(statistics.training_rows_read),
         "</td><td class=\"num\">", thousands(statistics.synthetic_rows_read),
         "</td><td class=\"num\">", holdout, "</td></tr>");
  append(out, "<tr><th>Rows evaluated</th><td class=\"num\">", thousands(statistics.training_rows),
         "</td><td class=\"num\">", thousands(statistics.synthetic_rows), "</td><td class=\"num\">",
         holdout, "</td></tr>", "<tr><th>Missing cells</th><td class=\"num\">",
         std::to_string(statistics.training_missing_percent), "%</td><td class=\"num\">",
         std::to_string(statistics.synthetic_missing_percent),
         "%</td><td class=\"num\">\u2014</td></tr></tbody></table>");
  append(out, "<p>Columns: <strong>", thousands(statistics.columns), "</strong> evaluated of ",
         thousands(statistics.columns_read), " read");
  if (statistics.columns < statistics.columns_read) out += " (the first ones in training order)";
  append(out, ". Rows beyond 5,000 are sampled down, as NeMo Safe Synthesizer samples them.</p>",
         "<p class=\"memorized\">Memorized rows: <strong>", thousands(statistics.memorized_rows),
         "</strong> synthetic rows are exact training rows");
  if (statistics.synthetic_rows > 0) {
    append(out, " (",
           percent(static_cast<double>(statistics.memorized_rows) /
                   static_cast<double>(statistics.synthetic_rows)),
           " of the synthetic rows evaluated)");
  }
  out += ".</p></section>\n";
}

std::string column_types(const ColumnDistribution& column) {
  return std::string(field_type_name(column.training_type)) + " / " +
         field_type_name(column.synthetic_type);
}

void append_column_summary(std::string& out, const std::vector<ColumnDistribution>& columns) {
  out +=
      "<table><thead><tr><th>Column</th><th>Type (training / synthetic)</th>"
      "<th class=\"num\">JS distance</th><th class=\"num\">Score</th><th>Grade</th></tr>"
      "</thead><tbody>";
  for (std::size_t k = 0; k < columns.size(); ++k) {
    const ColumnDistribution& column = columns[k];
    const std::string name = html_escape(column.name);
    append(out, "<tr><td><a href=\"#column-", std::to_string(k), "\">", name, "</a></td><td>",
           column_types(column), "</td><td class=\"num\">", distance_text(column.distance),
           "</td><td class=\"num column-score\" data-column=\"", name, "\" data-value=\"",
           score_value(column.score), "\">", score_text(column.score), "</td><td>",
           grade_badge(column.score), "</td></tr>");
  }
  out += "</tbody></table>";
}

// Which labels the chart left out, and the shares they hold on each side.
std::string left_out_caption(const ColumnDistribution& column,
                             const std::vector<std::size_t>& shown) {
  std::vector<bool> is_shown(column.labels.size(), false);
  for (std::size_t index : shown) is_shown[index] = true;
  double training = 0, synthetic = 0;
  for (std::size_t k = 0; k < column.labels.size(); ++k) {
    if (is_shown[k]) continue;
    training += share_at(column.training_share, k);
    synthetic += share_at(column.synthetic_share, k);
  }
  return "<p class=\"left-out\">Showing the " + std::to_string(shown.size()) +
         " labels with the largest shares; " + thousands(column.labels.size() - shown.size()) +
         " of " + thousands(column.labels.size()) + " left out (" + percent(training) +
         " of training, " + percent(synthetic) + " of synthetic).</p>";
}

void append_column_chart(std::string& out, const ColumnDistribution& column, std::size_t index) {
  append(out, "<figure class=\"column-chart\" id=\"column-", std::to_string(index),
         "\"><figcaption><strong>", html_escape(column.name), "</strong> <span class=\"meta\">",
         column_types(column), " \u00b7 JS distance ", distance_text(column.distance),
         " \u00b7 score ", score_text(column.score), "</span> ", grade_badge(column.score),
         "</figcaption>");
  if (column.labels.empty()) {
    out += "<p class=\"na\">No distribution to draw.</p>";
  } else {
    const std::vector<std::size_t> shown = labels_shown(column);
    out += distribution_bars_svg(column, shown);
    if (shown.size() < column.labels.size()) out += left_out_caption(column, shown);
  }
  append(out, notes_paragraph(column.score), "</figure>\n");
}

std::string series_legend() {
  return "<p><span class=\"swatch training\"></span>training"
         "<span class=\"swatch synthetic\"></span>synthetic</p>";
}

void append_columns(std::string& out, const EvaluationResult& result) {
  append(out, "<section id=\"columns\"><h2>Column distributions</h2>",
         section_score(result.column_distribution),
         "<p>Per column, the share of each category or bin in the training and the synthetic "
         "table; the Jensen-Shannon distance between them (0 = identical) and its score.</p>");
  if (result.columns.empty()) {
    out += "<p class=\"na\">No columns were compared.</p></section>\n";
    return;
  }
  append_column_summary(out, result.columns);
  append(out, series_legend(), "<div class=\"charts\">\n");
  for (std::size_t k = 0; k < result.columns.size(); ++k) {
    append_column_chart(out, result.columns[k], k);
  }
  out += "</div></section>\n";
}

void append_heatmap(std::string& out, const CorrelationResult& correlation, const char* title,
                    const std::vector<double>& values, ColourScale scale) {
  const std::size_t count = correlation.columns.size();
  append(out, "<figure class=\"heatmap\"><figcaption><strong>", title, "</strong></figcaption>");
  if (values.size() == count * count) {
    append(out, heatmap_svg(correlation.columns, values, scale, title), colour_legend_svg(scale));
  } else {
    out += "<p class=\"na\">Not available.</p>";
  }
  out += "</figure>\n";
}

void append_correlations(std::string& out, const CorrelationResult& correlation) {
  append(out, "<section id=\"correlation\"><h2>Column correlations</h2>",
         section_score(correlation.score),
         "<p>Pairwise associations between the tabular columns in each table, and their "
         "absolute difference; grey cells (n/a) are undefined, e.g. for a constant column.</p>");
  if (correlation.columns.empty()) {
    out += "<p class=\"na\">No tabular columns to correlate.</p></section>\n";
    return;
  }
  out += "<div class=\"heatmaps\">\n";
  append_heatmap(out, correlation, "Training", correlation.training, ColourScale::kCorrelation);
  append_heatmap(out, correlation, "Synthetic", correlation.synthetic, ColourScale::kCorrelation);
  append_heatmap(out, correlation, "Absolute difference", correlation.difference,
                 ColourScale::kDifference);
  out += "</div></section>\n";
}

std::string sample_caption(const char* name, std::size_t shown, std::size_t total) {
  if (shown == total) return "all " + thousands(total) + " " + name + " points";
  return thousands(shown) + " of " + thousands(total) + " " + name + " points (evenly spaced)";
}

void append_deep_structure(std::string& out, const DeepStructureResult& deep) {
  append(out, "<section id=\"deep-structure\"><h2>Deep structure</h2>", section_score(deep.score),
         "<p>Both tables projected on the training table's first two principal components. "
         "Jensen-Shannon distance of the projections: PC1 ",
         distance_text(deep.component_distances[0]), ", PC2 ",
         distance_text(deep.component_distances[1]), ".</p>");
  const auto training = sample_points(deep.training_points);
  const auto synthetic = sample_points(deep.synthetic_points);
  const std::string svg = scatter_svg(training, synthetic);
  if (svg.empty()) {
    out += "<p class=\"na\">No projected points to draw.</p></section>\n";
    return;
  }
  append(out, "<figure class=\"scatter\">", series_legend(), svg, "<p class=\"caption\">Showing ",
         sample_caption("training", training.size(), deep.training_points.size()), " and ",
         sample_caption("synthetic", synthetic.size(), deep.synthetic_points.size()),
         ".</p></figure></section>\n");
}

void append_text(std::string& out, const EvaluationResult& result) {
  const TextStructureResult& structure = result.text_structure;
  append(out, "<section id=\"text\"><h2>Text columns</h2><h3>Text Structure Similarity</h3>",
         section_score(structure.score));
  if (structure.columns.empty()) {
    out += "<p class=\"na\">No free-text columns were evaluated.</p>";
  } else {
    out +=
        "<table><thead><tr><th>Column</th><th class=\"num\">Score</th><th>Grade</th></tr>"
        "</thead><tbody>";
    for (const TextColumnStructure& column : structure.columns) {
      append(out, "<tr><td>", html_escape(column.name), "</td><td class=\"num\">",
             score_text(column.score), "</td><td>", grade_badge(column.score), "</td></tr>");
    }
    out += "</tbody></table>";
  }
  append(out, "<h3>Text Semantic Similarity</h3>", section_score(result.text_semantic),
         "</section>\n");
}

}  // namespace
namespace {

void append_thresholds(std::string& out, const std::vector<MembershipResult::Threshold>& rows) {
  if (rows.empty()) return;
  out +=
      "<table><thead><tr><th class=\"num\">Threshold</th><th class=\"num\">True positives</th>"
      "<th class=\"num\">False positives</th></tr></thead><tbody>";
  for (const MembershipResult::Threshold& row : rows) {
    append(out, "<tr><td class=\"num\">", significant(row.threshold), "</td><td class=\"num\">",
           std::to_string(row.true_positives), "</td><td class=\"num\">",
           std::to_string(row.false_positives), "</td></tr>");
  }
  out += "</tbody></table>";
}

void append_membership(std::string& out, const MembershipResult& membership) {
  append(out, "<section id=\"membership\"><h2>Membership inference</h2>",
         section_score(membership.score),
         "<p>10 runs of 36 attacks each try to tell training rows from holdout rows by their "
         "distance to the synthetic rows; each attack is graded by how little it gains over a "
         "guess.</p>");
  if (membership.attack_grades.empty()) {
    out += "<p class=\"na\">No attacks were run.</p>";
  } else {
    int attacks = 0;
    for (const auto& grade : membership.attack_grades) attacks += grade.second;
    append(out, "<div class=\"two\"><figure><figcaption><strong>Grades of the ",
           std::to_string(attacks), " attacks</strong></figcaption>",
           grade_bars_svg(membership.attack_grades), "</figure><div>");
    if (!membership.thresholds.empty()) {
      out +=
          "<h3>Attacks' thresholds</h3><p class=\"caption\">How many training rows (true "
          "positives) and holdout rows (false positives) each threshold flags.</p>";
    }
    append_thresholds(out, membership.thresholds);
    out += "</div></div>";
  }
  out += "</section>\n";
}

void append_attribute(std::string& out, const AttributeResult& attribute) {
  append(
      out, "<section id=\"attribute\"><h2>Attribute inference</h2>", section_score(attribute.score),
      "<p>", thousands(attribute.attacked_rows), " training rows attacked with ",
      std::to_string(attribute.quasi_identifiers),
      " quasi-identifier columns known: per column, how often the nearest synthetic rows "
      "give its value, its entropy weight, and the risk as a 0\u201310 score (10 = no risk).</p>");
  if (attribute.columns.empty()) {
    out += "<p class=\"na\">No columns were attacked.</p></section>\n";
    return;
  }
  out +=
      "<table><thead><tr><th>Column</th><th class=\"num\">Accuracy</th>"
      "<th class=\"num\">Weight</th><th class=\"num\">Risk score</th><th>Grade</th></tr>"
      "</thead><tbody>";
  for (const AttributeResult::ColumnRisk& column : attribute.columns) {
    Score risk;  // only to draw the grade's badge
    risk.grade = column.grade;
    append(out, "<tr><td>", html_escape(column.name), "</td><td class=\"num\">",
           percent(column.accuracy), "</td><td class=\"num\">", fixed(column.weight, 3),
           "</td><td class=\"num\">", fixed(column.risk, 1), "</td><td>", grade_badge(risk),
           "</td></tr>");
  }
  out += "</tbody></table></section>\n";
}

// Unavailable components with why, then caveats on the computed ones.
void append_unavailable(std::string& out, const EvaluationResult& result) {
  std::vector<Component> all = {quality_headline(result), privacy_headline(result)};
  for (const auto& group : {quality_components(result), privacy_components(result)}) {
    all.insert(all.end(), group.begin(), group.end());
  }
  std::string unavailable, caveats;
  for (const Component& component : all) {
    const Score& score = *component.score;
    const std::string notes = score.notes.empty() ? "no reason recorded" : score.notes;
    if (!score.available()) {
      append(unavailable, "<li><strong>", component.title, "</strong>: ", html_escape(notes),
             "</li>");
    } else if (!score.notes.empty()) {
      append(caveats, "<li><strong>", component.title, "</strong>: ", html_escape(notes), "</li>");
    }
  }
  out += "<section id=\"unavailable\"><h2>Unavailable components</h2>";
  out +=
      unavailable.empty() ? "<p>Every component was computed.</p>" : "<ul>" + unavailable + "</ul>";
  if (!caveats.empty()) append(out, "<h3>Caveats</h3><ul>", caveats, "</ul>");
  out += "</section>\n";
}

void append_notes(std::string& out, const std::vector<std::string>& notes) {
  if (notes.empty()) return;
  out += "<section id=\"notes\"><h2>Notes</h2><ul>";
  for (const std::string& note : notes) append(out, "<li>", html_escape(note), "</li>");
  out += "</ul></section>\n";
}

void append_footer(std::string& out, const ReportContext& context) {
  append(out, "<footer>Generated by nss_hpc ", html_escape(context.version), " at ",
         html_escape(context.generated_at),
         ". A self-contained page: no script and nothing loaded from elsewhere.</footer>\n",
         "</main>\n</body>\n</html>\n");
}

}  // namespace

std::string report_html(const EvaluationResult& result, const ReportContext& context) {
  std::string out;
  append_head(out, context);
  append_header(out, context);
  append_headline_scores(out, result);
  append_meanings(out, result);
  append_privacy_line(out, context);
  const bool has_holdout = !context.holdout_path.empty() || result.statistics.holdout_rows > 0;
  append_statistics(out, result.statistics, has_holdout);
  append_columns(out, result);
  append_correlations(out, result.correlation);
  append_deep_structure(out, result.deep_structure);
  append_text(out, result);
  append_membership(out, result.membership);
  append_attribute(out, result.attribute);
  append_unavailable(out, result);
  append_notes(out, context.notes);
  append_footer(out, context);
  return out;
}

}  // namespace nss::evaluate
