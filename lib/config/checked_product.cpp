#include "config/checked_product.h"

#include <limits>

namespace nss::config {

NamedProduct& NamedProduct::times(const std::string& name, std::int64_t value) {
  if (value_) value_ = checked_mul(*value_, value);
  names_ += (names_.empty() ? "" : " x ") + name;
  numbers_ += (numbers_.empty() ? "" : " x ") + std::to_string(value);
  return *this;
}

std::string NamedProduct::equation() const {
  return numbers_ + " = " +
         (value_ ? std::to_string(*value_)
                 : "more than " + std::to_string(std::numeric_limits<std::int64_t>::max()));
}

}  // namespace nss::config
