// Products of user numbers with overflow checks: a product that leaves 64
// bits is reported as such, never wrapped into a negative or small number.
// Configuration checks (size_checks.h), the batch arithmetic and the memory
// model multiply configuration values through these.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace nss::config {

/// a x b, or nullopt when the product does not fit in int64.
inline std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) return std::nullopt;
  return product;
}

/// a + b, or nullopt when the sum does not fit in int64.
inline std::optional<std::int64_t> checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return std::nullopt;
  return sum;
}

/// A product of named factors (configuration keys), computed with overflow
/// checks, that can write itself out for an error message.
class NamedProduct {
 public:
  /// Multiplies by `value`, called `name` in messages.
  NamedProduct& times(const std::string& name, std::int64_t value);

  /// The product; nullopt once it has left int64.
  std::optional<std::int64_t> value() const { return value_; }

  /// Whether the product fits in int64 and is at most `limit`.
  bool at_most(std::int64_t limit) const { return value_ && *value_ <= limit; }

  /// "training.max_steps x training.global_batch_size".
  const std::string& names() const { return names_; }

  /// "100 x 8 = 800", or "... = more than 9223372036854775807" when it left int64.
  std::string equation() const;

 private:
  std::optional<std::int64_t> value_ = 1;
  std::string names_, numbers_;
};

}  // namespace nss::config
