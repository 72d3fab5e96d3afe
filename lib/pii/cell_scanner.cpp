#include "pii/cell_scanner.h"

#include <algorithm>

#include "pii/recognizers.h"

namespace nss::pii {
namespace {

bool wanted(const std::vector<Entity>& entities, Entity entity) {
  return std::find(entities.begin(), entities.end(), entity) != entities.end();
}

// Greedy by (score, length, earlier start): each span kept overlaps none kept before it.
std::vector<Span> without_overlaps(std::vector<Span> spans) {
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.end - a.begin != b.end - b.begin) return a.end - a.begin > b.end - b.begin;
    return a.begin < b.begin;
  });
  std::vector<Span> kept;
  for (const Span& span : spans) {
    const bool overlaps = std::any_of(kept.begin(), kept.end(), [&](const Span& k) {
      return span.begin < k.end && k.begin < span.end;
    });
    if (!overlaps) kept.push_back(span);
  }
  std::sort(kept.begin(), kept.end(),
            [](const Span& a, const Span& b) { return a.begin < b.begin; });
  return kept;
}

}  // namespace

CellScanner::CellScanner(std::vector<Entity> entities, std::vector<std::string> header_tokens)
    : entities_(std::move(entities)), header_tokens_(std::move(header_tokens)) {
  const std::vector<Recognizer>& all = recognizers();
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto& reports = all[i].entities;
    if (std::none_of(reports.begin(), reports.end(),
                     [&](Entity e) { return wanted(entities_, e); }))
      continue;
    active_.push_back(i);
    if (all[i].context && has_context({}, header_tokens_, *all[i].context))
      header_is_context_ = true;
  }
}

std::vector<Span> CellScanner::scan(std::string_view cell) const {
  const CellFeatures features = cell_features(cell);
  // A bare number is PII only through context, and a cell has none of its own.
  if (features.plain_number && !header_is_context_) return {};
  const std::vector<Recognizer>& all = recognizers();
  const ScanContext context{cell, header_tokens_};
  std::vector<Span> candidates;
  for (const std::size_t index : active_) {
    const Recognizer& recognizer = all[index];
    if (!recognizer.wants(features)) continue;
    for (const Match& match : recognizer.pattern.find_all(cell)) {
      const std::optional<Detection> found = recognizer.accept(match, context);
      if (found && wanted(entities_, found->entity))
        candidates.push_back({found->begin, found->end, found->entity, found->score});
    }
  }
  if (candidates.size() < 2) return candidates;
  return without_overlaps(std::move(candidates));
}

}  // namespace nss::pii
