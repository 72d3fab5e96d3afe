#include "config/value_codec.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace nss::config {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

CodecError expected(const char* type, const YAML::Node& node) {
  return {std::string("expected ") + type + ", got " + describe_node(node)};
}

}  // namespace

std::string describe_mark(const YAML::Mark& mark) {
  if (mark.is_null()) return "";
  return "line " + std::to_string(mark.line + 1) + ", column " + std::to_string(mark.column + 1);
}

std::string describe_node(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Null:
      return "nothing (null)";
    case YAML::NodeType::Scalar:
      return "'" + node.Scalar() + "'";
    default:
      return "an undefined value";
  }
}

std::optional<CodecError> ValueCodec<bool>::read(const YAML::Node& node, bool& out) {
  if (!node.IsScalar()) return expected("true or false", node);
  const std::string text = lower(node.Scalar());
  if (text == "true" || text == "yes" || text == "on") {
    out = true;
    return std::nullopt;
  }
  if (text == "false" || text == "no" || text == "off") {
    out = false;
    return std::nullopt;
  }
  return expected("true or false", node);
}

std::optional<CodecError> ValueCodec<std::int64_t>::read(const YAML::Node& node,
                                                         std::int64_t& out) {
  if (!node.IsScalar()) return expected("an integer", node);
  const std::string& text = node.Scalar();
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0') {
    // Accept integral values written in float notation ("1e3", "8.0").
    char* fend = nullptr;
    const double number = std::strtod(text.c_str(), &fend);
    if (!text.empty() && *fend == '\0' && std::isfinite(number) && number == std::floor(number) &&
        std::fabs(number) < 9.0e15) {
      out = static_cast<std::int64_t>(number);
      return std::nullopt;
    }
    return expected("an integer", node);
  }
  if (errno == ERANGE) return CodecError{"integer out of range: '" + text + "'"};
  out = value;
  return std::nullopt;
}

std::optional<CodecError> ValueCodec<double>::read(const YAML::Node& node, double& out) {
  if (!node.IsScalar()) return expected("a number", node);
  const std::string& text = node.Scalar();
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0') return expected("a number", node);
  if (!std::isfinite(value)) return CodecError{"expected a finite number, got '" + text + "'"};
  out = value;
  return std::nullopt;
}

std::optional<CodecError> ValueCodec<AutoNumber>::read(const YAML::Node& node, AutoNumber& out) {
  if (node.IsScalar() && names_choice(node.Scalar(), "auto")) {
    out.value.reset();
    return std::nullopt;
  }
  double number = 0;
  if (ValueCodec<double>::read(node, number)) return expected("a number or auto", node);
  out.value = number;
  return std::nullopt;
}

std::optional<CodecError> ValueCodec<ResumeSetting>::read(const YAML::Node& node,
                                                          ResumeSetting& out) {
  std::string text;
  if (ValueCodec<std::string>::read(node, text) ||
      text.find_first_not_of(" \t") == std::string::npos)
    return expected("auto, never or a step or checkpoint directory", node);
  out = ResumeSetting(text);
  return std::nullopt;
}

void ValueCodec<AutoNumber>::write(YAML::Emitter& out, const AutoNumber& value) {
  out << text(value);
}

std::string ValueCodec<AutoNumber>::text(const AutoNumber& value) {
  return value.value ? ValueCodec<double>::text(*value.value) : "auto";
}

void ValueCodec<double>::write(YAML::Emitter& out, double value) {
  out << text(value);
}

std::string ValueCodec<double>::text(double value) {
  // Shortest text that reads back to the same double.
  char buffer[64];
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof buffer, "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  std::string text = buffer;
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return text;
}

std::optional<CodecError> ValueCodec<std::string>::read(const YAML::Node& node, std::string& out) {
  if (node.IsNull()) {
    out.clear();
    return std::nullopt;
  }
  if (!node.IsScalar()) return expected("a string", node);
  out = node.Scalar();
  return std::nullopt;
}

std::optional<CodecError> ValueCodec<std::vector<std::string>>::read(
    const YAML::Node& node, std::vector<std::string>& out) {
  if (!node.IsSequence()) return expected("a list such as [q_proj, v_proj]", node);
  std::vector<std::string> values;
  for (const auto& item : node) {
    if (!item.IsScalar()) return expected("a list of strings", node);
    values.push_back(item.Scalar());
  }
  out = std::move(values);
  return std::nullopt;
}

void ValueCodec<std::vector<std::string>>::write(YAML::Emitter& out,
                                                 const std::vector<std::string>& value) {
  out << YAML::Flow << YAML::BeginSeq;
  for (const auto& item : value) out << item;
  out << YAML::EndSeq;
}

std::string ValueCodec<std::vector<std::string>>::text(const std::vector<std::string>& value) {
  std::string text = "[";
  for (std::size_t i = 0; i < value.size(); ++i) text += (i ? ", " : "") + value[i];
  return text + "]";
}

}  // namespace nss::config
