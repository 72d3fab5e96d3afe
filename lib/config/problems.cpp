#include "config/problems.h"

#include "core/error.h"

namespace nss::config {

void Problems::add(std::string path, std::string where, std::string message, std::string hint) {
  if (where.empty()) {
    const auto origin = origins_.find(path);
    if (origin != origins_.end()) where = origin->second;
  }
  items_.push_back({std::move(path), std::move(where), std::move(message), std::move(hint)});
}

void Problems::throw_if_any() const {
  if (items_.empty()) return;
  auto line = [](const Item& item) {
    std::string text = item.path + ": " + item.message;
    if (!item.where.empty()) text += " (" + item.where + ")";
    return text;
  };
  if (items_.size() == 1) throw UsageError("config", line(items_[0]), items_[0].hint);
  std::string message = std::to_string(items_.size()) + " configuration problems:";
  for (const auto& item : items_) {
    message += "\n  - " + line(item);
    if (!item.hint.empty()) message += "\n    hint: " + item.hint;
  }
  throw UsageError("config", message);
}

}  // namespace nss::config
