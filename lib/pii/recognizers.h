// The free-text recognizers of the cell scanner, as data: for each entity a
// pattern, what a cell must have for the pattern to be worth running (the
// prefilter that keeps plain cells cheap), and the acceptance rule: a
// validator (Luhn and the IIN table, mod 97, the SSN and ITIN ranges,
// Python's ipaddress, the Public Suffix List), a format strong enough on
// its own, or context words. Patterns and context terms follow Presidio's
// and NSS's recognizers, with stricter boundaries against look-alikes.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pii/context.h"
#include "pii/entity.h"
#include "pii/pattern.h"

namespace nss::pii {

/// What one pass over a cell's bytes tells the prefilter.
struct CellFeatures {
  std::size_t digits = 0, colons = 0, dashes = 0, dots = 0, slashes = 0;
  bool at_sign = false, uppercase = false, plus = false, web = false;  // web: "://" or "www."
  bool plain_number = false;  // digits with at most a leading "-" and one "."
};

CellFeatures cell_features(std::string_view cell);

/// What a recognizer sees besides its match.
struct ScanContext {
  std::string_view cell;
  const std::vector<std::string>& header_tokens;
};

/// An accepted span: byte offsets into the cell, its entity and score (1.0
/// validated, 0.9 a strong format, 0.8 accepted through context, 0.6 weak).
struct Detection {
  std::size_t begin = 0, end = 0;
  Entity entity = Entity::kEmail;
  double score = 0;
};

struct Recognizer {
  std::vector<Entity> entities;  // what it may report (phone numbers: phone or fax)
  Pattern pattern;
  bool (*wants)(const CellFeatures&);
  std::optional<Detection> (*accept)(const Match&, const ScanContext&);
  const ContextTerms* context;  // the terms that make it count, if it has any
};

/// Every recognizer, strongest formats first.
const std::vector<Recognizer>& recognizers();

}  // namespace nss::pii
