// A labelled test table for PII detection, generated deterministically (a
// fixed seed, no Faker): entity columns of real-format values under varied
// headers, decoy columns made to fool naive patterns (16-digit order ids
// that fail Luhn, Luhn-valid IMEIs, dates, version strings, 9-digit SKUs in
// SSN ranges, counts, hex ids, prices, tracking numbers, timestamps, ISBNs)
// and a free-text column with entities at known byte spans among decoys.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pii/entity.h"
#include "pii/word_lists.h"

namespace nss::pii {

struct LabelledSpan {
  std::size_t begin, end;
  Entity entity;
};

struct LabelledColumn {
  std::string header;
  std::optional<Entity> entity;  // nullopt: a decoy or the free-text column
  std::vector<std::string> cells;
  std::vector<std::vector<LabelledSpan>> spans;  // per cell, for free text only
};

/// `rows` cells in every column but the free-text one, which has 3·`rows`;
/// names and places from `lists`.
std::vector<LabelledColumn> labelled_table(std::size_t rows, const WordLists& lists);

}  // namespace nss::pii
