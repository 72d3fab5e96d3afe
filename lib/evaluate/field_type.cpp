#include "evaluate/field_type.h"

#include <algorithm>
#include <unordered_set>
#include <vector>

namespace nss::evaluate {

FieldType describe_field(const Column& column) {
  std::size_t present = 0;
  if (column.numeric()) {
    std::vector<double> values;
    values.reserve(column.rows());
    for (std::size_t r = 0; r < column.rows(); ++r)
      if (!column.is_missing(r)) values.push_back(column.numbers[r]);
    if (values.empty()) return FieldType::kEmpty;
    std::sort(values.begin(), values.end());
    const auto distinct =
        static_cast<std::size_t>(std::unique(values.begin(), values.end()) - values.begin());
    if (distinct == 2) return FieldType::kBinary;
    if (column.dtype == Dtype::kFloat64) return FieldType::kNumeric;
    return distinct <= 10 && values.front() >= 0 ? FieldType::kCategorical : FieldType::kNumeric;
  }
  std::unordered_set<std::string> distinct;
  std::size_t spaces = 0;
  for (std::size_t r = 0; r < column.rows(); ++r) {
    if (column.is_missing(r)) continue;
    ++present;
    distinct.insert(column.texts[r]);
    spaces +=
        static_cast<std::size_t>(std::count(column.texts[r].begin(), column.texts[r].end(), ' '));
  }
  if (present == 0) return FieldType::kEmpty;
  if (distinct.size() == 2) return FieldType::kBinary;
  const double repeated =
      static_cast<double>(present - distinct.size()) / static_cast<double>(present);
  if (repeated >= 0.9 || (repeated >= 0.7 && present <= 50)) return FieldType::kCategorical;
  if (static_cast<double>(spaces) / static_cast<double>(present) > 2) return FieldType::kText;
  return FieldType::kOther;
}

const char* field_type_name(FieldType type) {
  switch (type) {
    case FieldType::kEmpty:
      return "empty";
    case FieldType::kNumeric:
      return "numeric";
    case FieldType::kCategorical:
      return "categorical";
    case FieldType::kText:
      return "text";
    case FieldType::kOther:
      return "other";
    case FieldType::kBinary:
      return "binary";
  }
  return "other";
}

}  // namespace nss::evaluate
