// Config -> YAML (config.resolved.yaml, --print-config, broadcast to ranks).
#include <yaml-cpp/yaml.h>

#include "config/load.h"
#include "config/value_codec.h"

namespace nss::config {
namespace {

class YamlWriter {
 public:
  YamlWriter(YAML::Emitter& out, bool with_comments) : out_(out), with_comments_(with_comments) {}

  template <class T>
  void field(const char* name, T& value, const char* doc, const Range<T>& = {}) {
    out_ << YAML::Key << name << YAML::Value;
    ValueCodec<T>::write(out_, value);
    if (with_comments_) out_ << YAML::Comment(doc);
  }

  template <class S>
  void section(const char* name, S& value, const char* doc) {
    out_ << YAML::Key << name;
    if (with_comments_) out_ << YAML::Comment(doc);
    out_ << YAML::Value << YAML::BeginMap;
    value.visit(*this);
    out_ << YAML::EndMap;
  }

 private:
  YAML::Emitter& out_;
  bool with_comments_;
};

}  // namespace

std::string to_yaml(const Config& config, bool with_comments) {
  Config copy = config;  // the schema visitor takes fields by reference
  YAML::Emitter out;
  out.SetIndent(2);
  out << YAML::BeginMap;
  YamlWriter writer(out, with_comments);
  copy.visit(writer);
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace nss::config
