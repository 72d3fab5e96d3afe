// How each config value type is read from and written to YAML. Reading is
// strict: an integer key rejects 2.5, a bool rejects "maybe", a string rejects
// a mapping; the error text names the expected type and what was found.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "config/auto_number.h"
#include "config/choices.h"
#include "config/resume_setting.h"

namespace nss::config {

/// A failed conversion: what was expected, for the caller to attach the key path.
struct CodecError {
  std::string message;
};

template <class T, class = void>
struct ValueCodec;

template <>
struct ValueCodec<bool> {
  static const char* type_name() { return "bool"; }
  static std::optional<CodecError> read(const YAML::Node& node, bool& out);
  static void write(YAML::Emitter& out, bool value) { out << value; }
  static std::string text(bool value) { return value ? "true" : "false"; }
};

template <>
struct ValueCodec<std::int64_t> {
  static const char* type_name() { return "integer"; }
  static std::optional<CodecError> read(const YAML::Node& node, std::int64_t& out);
  static void write(YAML::Emitter& out, std::int64_t value) { out << value; }
  static std::string text(std::int64_t value) { return std::to_string(value); }
};

template <>
struct ValueCodec<double> {
  static const char* type_name() { return "number"; }
  static std::optional<CodecError> read(const YAML::Node& node, double& out);
  static void write(YAML::Emitter& out, double value);
  static std::string text(double value);
};

template <>
struct ValueCodec<AutoNumber> {
  static const char* type_name() { return "number or auto"; }
  static std::optional<CodecError> read(const YAML::Node& node, AutoNumber& out);
  static void write(YAML::Emitter& out, const AutoNumber& value);
  static std::string text(const AutoNumber& value);
};

template <>
struct ValueCodec<ResumeSetting> {
  static const char* type_name() { return "auto, never or a directory"; }
  static std::optional<CodecError> read(const YAML::Node& node, ResumeSetting& out);
  static void write(YAML::Emitter& out, const ResumeSetting& value) {
    out << YAML::DoubleQuoted << value.text();
  }
  static std::string text(const ResumeSetting& value) { return "\"" + value.text() + "\""; }
};

template <>
struct ValueCodec<std::string> {
  static const char* type_name() { return "string"; }
  static std::optional<CodecError> read(const YAML::Node& node, std::string& out);
  static void write(YAML::Emitter& out, const std::string& value) {
    out << YAML::DoubleQuoted << value;
  }
  static std::string text(const std::string& value) { return "\"" + value + "\""; }
};

template <>
struct ValueCodec<std::vector<std::string>> {
  static const char* type_name() { return "list of strings"; }
  static std::optional<CodecError> read(const YAML::Node& node, std::vector<std::string>& out);
  static void write(YAML::Emitter& out, const std::vector<std::string>& value);
  static std::string text(const std::vector<std::string>& value);
};

/// "line 3, column 5" style location of a node loaded from a file (1-based).
std::string describe_mark(const YAML::Mark& mark);

/// A scalar's text for error messages, or "a mapping"/"a list".
std::string describe_node(const YAML::Node& node);

/// A key whose value is one of a fixed set of names (choices.h), written as
/// the name in double quotes like any string.
template <class E>
struct ValueCodec<E, std::enable_if_t<is_choice_v<E>>> {
  static const char* type_name() {
    static const std::string name = "one of " + choice_list<E>() + choice_booleans_note<E>();
    return name.c_str();
  }
  static std::optional<CodecError> read(const YAML::Node& node, E& out) {
    const std::optional<E> value = node.IsScalar() ? choice_of<E>(node.Scalar()) : std::nullopt;
    if (!value)
      return CodecError{"must be one of " + choice_list<E>() + ", got " + describe_node(node)};
    out = *value;
    return std::nullopt;
  }
  static void write(YAML::Emitter& out, E value) {
    out << YAML::DoubleQuoted << choice_name(value);
  }
  static std::string text(E value) { return "\"" + std::string(choice_name(value)) + "\""; }
};

}  // namespace nss::config
