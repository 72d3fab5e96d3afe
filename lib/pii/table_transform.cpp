#include "pii/table_transform.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"
#include "core/missing_cell.h"
#include "pii/canonical.h"
#include "pii/cell_scanner.h"
#include "pii/header_hints.h"
#include "pii/keyed_hash.h"

namespace nss::pii {
namespace {

// One mode's replacement of a value or a span.
class Transform {
 public:
  Transform(PiiMode mode, const PiiKey* key, const WordLists& lists) : mode_(mode), key_(key) {
    if ((mode == PiiMode::kReplace || mode == PiiMode::kHash) && !key)
      throw InternalError("pii", "replace and hash need the PII key");
    if (mode == PiiMode::kReplace) surrogates_.emplace(*key, lists);
  }

  bool changes() const { return mode_ != PiiMode::kDetect; }

  std::string operator()(Entity entity, std::string_view value) {
    switch (mode_) {
      case PiiMode::kReplace:
        return surrogates_->surrogate(entity, value);
      case PiiMode::kHash:
        return keyed_hash(*key_, entity_name(entity), canonical_value(entity, value));
      case PiiMode::kRedact:
        return redaction(entity);
      case PiiMode::kDetect:
        break;
    }
    return std::string(value);
  }

  /// NSS's name of this mode's transform of a column or of spans in text.
  std::string function_name(bool spans) const {
    const char* base = mode_ == PiiMode::kReplace ? "fake"
                       : mode_ == PiiMode::kHash  ? "hash"
                                                  : "redact";
    return std::string(base) + (spans ? "_entities" : "");
  }

  std::map<Entity, SurrogateMap::Counts> counts() const {
    return surrogates_ ? surrogates_->counts() : std::map<Entity, SurrogateMap::Counts>{};
  }

 private:
  PiiMode mode_;
  const PiiKey* key_;
  std::optional<SurrogateMap> surrogates_;
};

struct ColumnPlan {
  ColumnAssignment assignment;
  bool kept = false;
  std::optional<CellScanner> scanner;  // columns without an entity
};

ColumnPlan plan_column(const std::string& header, const TableRows& rows, std::size_t c,
                       const PiiOptions& options, const ValueRules& rules) {
  ColumnPlan plan;
  std::vector<std::string_view> cells;
  for (const auto& row : rows)
    if (!is_missing_cell(row[c])) cells.push_back(row[c]);
  plan.assignment = classify_column(header, cells, options.classifier, rules);
  plan.kept = plan.assignment.evidence.source == "kept";
  if (!plan.assignment.entity && !plan.kept)
    plan.scanner.emplace(options.classifier.entities, tokenize_header(header));
  return plan;
}

bool has_letter(std::string_view cell) {
  return std::any_of(cell.begin(), cell.end(), [](char ch) {
    const auto byte = static_cast<unsigned char>(ch);
    return byte >= 0x80 || static_cast<unsigned>((byte | 0x20) - 'a') < 26u;
  });
}

// Adds the model's spans that overlap none of the recognizers' (a validated
// pattern is surer than a tagger), keeping each cell's spans in order.
void merge_spans(std::vector<Span>& spans, const std::vector<Span>& found) {
  const std::size_t recognized = spans.size();
  for (const Span& span : found) {
    const bool overlaps =
        std::any_of(spans.begin(), spans.begin() + static_cast<std::ptrdiff_t>(recognized),
                    [&](const Span& s) { return s.begin < span.end && span.begin < s.end; });
    if (!overlaps) spans.push_back(span);
  }
  if (spans.size() != recognized)
    std::sort(spans.begin(), spans.end(),
              [](const Span& a, const Span& b) { return a.begin < b.begin; });
}

// The model reads each distinct cell that has a letter once (a column of
// repeated categories costs one pass per category), in batches.
void add_model_spans(const TableRows& rows, std::size_t c, TextEntityModel& model,
                     std::vector<std::vector<Span>>& spans) {
  constexpr std::size_t kBatchCells = 64;
  std::unordered_map<std::string_view, std::vector<std::size_t>> rows_of;
  std::vector<std::string_view> cells;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const std::string_view cell = rows[r][c];
    if (is_missing_cell(cell) || !has_letter(cell)) continue;
    auto [it, fresh] = rows_of.try_emplace(cell);
    if (fresh) cells.push_back(cell);
    it->second.push_back(r);
  }
  for (std::size_t first = 0; first < cells.size(); first += kBatchCells) {
    const std::vector<std::string_view> batch(
        cells.begin() + static_cast<std::ptrdiff_t>(first),
        cells.begin() + static_cast<std::ptrdiff_t>(std::min(cells.size(), first + kBatchCells)));
    const std::vector<std::vector<Span>> found = model.find(batch);
    for (std::size_t i = 0; i < batch.size(); ++i)
      for (const std::size_t r : rows_of.at(batch[i])) merge_spans(spans[r], found[i]);
  }
}

// The spans of each cell of a column without an entity.
std::vector<std::vector<Span>> scan_column(const TableRows& rows, std::size_t c,
                                           const CellScanner& scanner, TextEntityModel* model) {
  std::vector<std::vector<Span>> spans(rows.size());
  for (std::size_t r = 0; r < rows.size(); ++r)
    if (!is_missing_cell(rows[r][c])) spans[r] = scanner.scan(rows[r][c]);
  if (model) add_model_spans(rows, c, *model, spans);
  return spans;
}

// Applies the plan to column c of `rows`; with `stats`, records what it finds.
void apply_column(TableRows& rows, std::size_t c, const ColumnPlan& plan, Transform& transform,
                  TextEntityModel* model, ColumnStatistics* stats) {
  std::map<Entity, std::unordered_set<std::string>> distinct;
  std::vector<std::vector<Span>> scanned;
  if (plan.scanner) scanned = scan_column(rows, c, *plan.scanner, model);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    std::string& cell = rows[r][c];
    if (plan.kept || is_missing_cell(cell)) continue;
    if (const auto entity = plan.assignment.entity) {
      if (stats) {
        ++stats->counts[*entity];
        distinct[*entity].insert(cell);
      }
      if (transform.changes()) cell = transform(*entity, cell);
      continue;
    }
    const std::vector<Span>& spans = scanned[r];
    if (stats) {
      ++stats->cells_scanned;
      stats->cells_with_detection += !spans.empty();
      for (const Span& span : spans) {
        ++stats->counts[span.entity];
        distinct[span.entity].insert(canonical_value(
            span.entity, std::string_view(cell).substr(span.begin, span.end - span.begin)));
      }
    }
    if (!transform.changes()) continue;
    for (auto span = spans.rbegin(); span != spans.rend(); ++span)  // right to left: offsets hold
      cell.replace(span->begin, span->end - span->begin,
                   transform(span->entity,
                             std::string_view(cell).substr(span->begin, span->end - span->begin)));
  }
  if (!stats) return;
  for (const auto& [entity, values] : distinct)
    stats->unique_counts[entity] = static_cast<std::int64_t>(values.size());
  if (transform.changes() && !stats->counts.empty())
    stats->transform_functions.insert(transform.function_name(!plan.assignment.entity));
}

}  // namespace

PiiMode parse_pii_mode(std::string_view name) {
  if (name == "detect") return PiiMode::kDetect;
  if (name == "replace") return PiiMode::kReplace;
  if (name == "hash") return PiiMode::kHash;
  if (name == "redact") return PiiMode::kRedact;
  throw UsageError("pii", "--pii " + std::string(name) + ": unknown mode",
                   "choose one of detect, replace, hash, redact");
}

std::string_view pii_mode_name(PiiMode mode) {
  switch (mode) {
    case PiiMode::kDetect:
      return "detect";
    case PiiMode::kReplace:
      return "replace";
    case PiiMode::kHash:
      return "hash";
    case PiiMode::kRedact:
      return "redact";
  }
  return "";
}

PiiResult transform_tables(const std::vector<std::string>& header, TableRows& training,
                           const std::vector<TableRows*>& others, const PiiOptions& options,
                           const PiiKey* key, const WordLists& lists) {
  const ValueRules rules(lists);
  Transform transform(options.mode, key, lists);
  PiiResult result;
  for (std::size_t c = 0; c < header.size(); ++c) {
    const ColumnPlan plan = plan_column(header[c], training, c, options, rules);
    ColumnStatistics stats;
    stats.name = header[c];
    stats.assigned_entity = plan.assignment.entity;
    stats.evidence = plan.assignment.evidence;
    apply_column(training, c, plan, transform, options.text_model, &stats);
    for (TableRows* other : others)
      apply_column(*other, c, plan, transform, options.text_model, nullptr);
    result.columns.push_back(std::move(stats));
  }
  result.surrogates = transform.counts();
  return result;
}

}  // namespace nss::pii
