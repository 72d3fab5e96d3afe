#include "core/missing_cell.h"

#include <algorithm>
#include <array>

namespace nss {

bool is_missing_cell(std::string_view cell) {
  static constexpr std::array<std::string_view, 19> kSpellings = {
      "",     "#N/A",   "#N/A N/A", "#NA",  "-1.#IND", "-1.#QNAN", "-NaN",
      "-nan", "1.#IND", "1.#QNAN",  "<NA>", "N/A",     "NA",       "NULL",
      "NaN",  "None",   "n/a",      "nan",  "null"};
  return std::find(kSpellings.begin(), kSpellings.end(), cell) != kSpellings.end();
}

}  // namespace nss
