// A real key that also takes `auto`, where the program derives the value
// (privacy.delta); value_codec.h reads and writes it. Its bounds are checked
// with the relations between keys (validate.cpp).
#pragma once

#include <optional>

namespace nss::config {

struct AutoNumber {
  std::optional<double> value;  // nullopt: auto
};

}  // namespace nss::config
