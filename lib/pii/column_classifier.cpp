#include "pii/column_classifier.h"

#include <algorithm>

#include "core/missing_cell.h"
#include "pii/header_hints.h"

namespace nss::pii {
namespace {

// Ties go to the first: validated formats before loose ones, column-context
// entities last.
constexpr Entity kTieOrder[] = {Entity::kIban,
                                Entity::kCreditDebitCard,
                                Entity::kEmail,
                                Entity::kTaxId,
                                Entity::kSsn,
                                Entity::kIpv6,
                                Entity::kIpv4,
                                Entity::kMacAddress,
                                Entity::kUuid,
                                Entity::kUrl,
                                Entity::kFaxNumber,
                                Entity::kPhoneNumber,
                                Entity::kAddress,
                                Entity::kStreetAddress,
                                Entity::kPostcode,
                                Entity::kState,
                                Entity::kName,
                                Entity::kFirstName,
                                Entity::kLastName,
                                Entity::kCity,
                                Entity::kNationalId,
                                Entity::kDateOfBirth,
                                Entity::kPassportNumber,
                                Entity::kDriversLicense};

// The least share an entity can be accepted with, hinted or not (> 1: never).
double least_share(Entity entity, bool hinted) {
  switch (entity) {
    case Entity::kName:
      return hinted ? 0.3 : 0.8;
    case Entity::kFirstName:
    case Entity::kLastName:
      return hinted ? 0.2 : 0.8;
    case Entity::kPostcode:
    case Entity::kCity:
    case Entity::kNationalId:
    case Entity::kDateOfBirth:
    case Entity::kPassportNumber:
    case Entity::kDriversLicense:
      return hinted ? 0.8 : 2.0;
    default:
      return hinted ? 0.5 : 0.8;
  }
}

bool is_person_name(Entity entity) {
  return entity == Entity::kName || entity == Entity::kFirstName || entity == Entity::kLastName;
}

// The non-missing cells, trimmed, at most kClassifierSample of them at
// evenly spaced indices (independent of any ordering of the rows).
std::vector<std::string_view> sampled(const std::vector<std::string_view>& cells) {
  std::vector<std::string_view> present;
  for (const std::string_view cell : cells)
    if (!is_missing_cell(cell)) present.push_back(trim_ascii(cell));
  if (present.size() <= kClassifierSample) return present;
  std::vector<std::string_view> out;
  for (std::size_t i = 0; i < kClassifierSample; ++i)
    out.push_back(present[i * present.size() / kClassifierSample]);
  return out;
}

struct Candidate {
  Entity entity;
  double share = 0, shape_share = 0;
};

// The shares of `entity` over `cells`, or nullopt as soon as the share
// cannot reach `least` any more (most candidates fail within a few cells).
std::optional<Candidate> measured(Entity entity, const std::vector<std::string_view>& cells,
                                  bool hinted, double least, const ValueRules& rules) {
  const double n = static_cast<double>(cells.size());
  const std::size_t allowed_misses = static_cast<std::size_t>((1.0 - least) * n + 1e-9);
  std::size_t hits = 0, misses = 0, shaped = 0;
  for (const std::string_view cell : cells) {
    if (rules.matches(entity, cell, hinted))
      ++hits;
    else if (++misses > allowed_misses)
      return std::nullopt;
    if (hinted && is_person_name(entity)) shaped += rules.name_shaped(entity, cell);
  }
  return Candidate{entity, hits / n, shaped / n};
}

bool accepted(const Candidate& c, bool hinted, std::size_t cells) {
  if (cells < 5) return hinted && c.share == 1.0;
  if (c.share >= 0.8 && least_share(c.entity, false) <= 0.8) return true;
  if (!hinted) return false;
  if (is_person_name(c.entity))
    return c.shape_share >= 0.9 && c.share >= least_share(c.entity, true);
  return c.share >= least_share(c.entity, true);
}

}  // namespace

ColumnAssignment classify_column(const std::string& header,
                                 const std::vector<std::string_view>& cells,
                                 const ClassifierOptions& options, const ValueRules& rules) {
  if (options.kept.count(header)) return {std::nullopt, {"kept", std::nullopt, 0, 0, 0}};
  const auto forced = options.forced.find(header);
  if (forced != options.forced.end()) return {forced->second, {"option", std::nullopt, 0, 0, 0}};

  const std::vector<std::string_view> sample = sampled(cells);
  const std::vector<Entity> hints = header_hints(header);
  const auto hinted_for = [&](Entity e) {
    return std::find(hints.begin(), hints.end(), e) != hints.end();
  };
  const bool fax_hint = hinted_for(Entity::kFaxNumber);
  std::optional<Candidate> best;
  bool best_hinted = false;
  for (const Entity entity : kTieOrder) {
    const auto& wanted = options.entities;
    if (std::find(wanted.begin(), wanted.end(), entity) == wanted.end() ||
        header_vetoes(header, entity) || sample.empty())
      continue;
    // Phone and fax numbers look alike: only the header tells a fax column.
    if ((entity == Entity::kFaxNumber) != fax_hint &&
        (entity == Entity::kFaxNumber || entity == Entity::kPhoneNumber))
      continue;
    const bool hinted = hinted_for(entity);
    const double least = sample.size() < 5 ? 1.0 : least_share(entity, hinted);
    if (least > 1.0) continue;
    const std::optional<Candidate> c = measured(entity, sample, hinted, least, rules);
    if (c && accepted(*c, hinted, sample.size()) && (!best || c->share > best->share)) {
      best = c;
      best_hinted = hinted;
    }
  }
  ColumnAssignment out;
  out.evidence.cells_checked = sample.size();
  out.evidence.header_hint = hints.empty() ? std::nullopt : std::optional<Entity>(hints.front());
  if (!best) {
    out.evidence.source = "scan";
    return out;
  }
  out.entity = best->entity;
  out.evidence.source =
      best_hinted && !accepted(*best, false, sample.size()) ? "header+values" : "values";
  if (best_hinted) out.evidence.header_hint = best->entity;
  out.evidence.share = best->share;
  out.evidence.shape_share = best->shape_share;
  return out;
}

}  // namespace nss::pii
