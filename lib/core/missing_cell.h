// Which table cells hold no value: pandas' default missing-value spellings,
// one owner for the tools that read tables (nss_evaluate's columns and the
// PII classifier's shares must agree on what a missing cell is).
#pragma once

#include <string_view>

namespace nss {

/// True for a cell pandas' read_csv reads as missing by default: "", "#N/A",
/// "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
/// "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null".
bool is_missing_cell(std::string_view cell);

}  // namespace nss
