// A configuration section as a JSON object with the YAML keys and values, for
// records that store settings next to their data (a checkpoint's training
// state stores the model shape and the LoRA settings a resume must match).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/choices.h"
#include "config/value_codec.h"
#include "config/value_range.h"

namespace nss::config {
namespace detail {

class JsonWriter {
 public:
  template <class T>
  void field(const char* name, T& value, const char*, const Range<T>& = {}) {
    if constexpr (is_choice_v<T>)
      out[name] = choice_name(value);
    else if constexpr (std::is_same_v<T, AutoNumber>)
      out[name] = value.value ? nlohmann::json(*value.value) : nlohmann::json("auto");
    else
      out[name] = value;
  }
  template <class S>
  void section(const char* name, S& value, const char*) {
    JsonWriter inner;
    value.visit(inner);
    out[name] = std::move(inner.out);
  }
  nlohmann::json out = nlohmann::json::object();
};

}  // namespace detail

/// `section`'s keys and values as JSON (nested sections as nested objects).
template <class Section>
nlohmann::json section_json(const Section& section) {
  Section copy = section;  // the schema visitor takes fields by reference
  detail::JsonWriter writer;
  copy.visit(writer);
  return std::move(writer.out);
}

}  // namespace nss::config
