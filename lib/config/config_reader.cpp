// YAML -> Config. Strict: unknown keys, duplicated keys, wrong types and
// malformed overrides are collected as problems and reported together.
#include <map>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "config/config_file.h"
#include "config/key_catalog.h"
#include "config/key_suggestion.h"
#include "config/load.h"
#include "config/model_presets.h"
#include "config/problems.h"
#include "config/value_codec.h"
#include "core/error.h"

namespace nss::config {
namespace {

// Where each key came from, so that errors point at a file position or at the
// --set argument that introduced it.
class Origins {
 public:
  Origins(std::string file) : file_(std::move(file)) {}

  void add_override(const std::string& path, const std::string& text) { overrides_[path] = text; }

  std::string where(const std::string& path, const YAML::Node& node) const {
    for (std::string prefix = path;;) {
      const auto it = overrides_.find(prefix);
      if (it != overrides_.end()) return "--set " + it->second;
      const auto dot = prefix.rfind('.');
      if (dot == std::string::npos) break;
      prefix.erase(dot);
    }
    const std::string mark = node.IsDefined() ? describe_mark(node.Mark()) : "";
    return mark.empty() ? file_ : file_ + ", " + mark;
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
  std::map<std::string, std::string> overrides_;
};

std::string valid_keys_of(const std::string& section) {
  std::string list;
  const std::string prefix = section.empty() ? "" : section + ".";
  for (const auto& key : key_catalog()) {
    if (key.path.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string rest = key.path.substr(prefix.size());
    if (rest.find('.') != std::string::npos) continue;
    list += (list.empty() ? "" : ", ") + rest;
  }
  return list;
}

class YamlReader {
 public:
  YamlReader(const YAML::Node& root, Problems& problems, const Origins& origins)
      : node_(root), problems_(problems), origins_(origins) {}

  // Ranges are checked with the other values (check_values), which find
  // where each key came from in `problems_`.
  template <class T>
  void field(const char* name, T& value, const char* /*doc*/, const Range<T>& = {}) {
    consumed_.insert(name);
    if (!node_.IsMap()) return;
    const YAML::Node child = node_[name];
    if (!child.IsDefined()) return;
    problems_.locate(join(name), origins_.where(join(name), child));
    if (auto error = ValueCodec<T>::read(child, value))
      problems_.add(join(name), origins_.where(join(name), child), error->message,
                    std::string("set it to ") + article(ValueCodec<T>::type_name()));
  }

  template <class S>
  void section(const char* name, S& value, const char* /*doc*/) {
    consumed_.insert(name);
    if (!node_.IsMap()) return;
    const YAML::Node child = node_[name];
    if (!child.IsDefined() || child.IsNull()) return;
    if (!child.IsMap()) {
      problems_.add(join(name), origins_.where(join(name), child),
                    "expected a mapping of keys, got " + describe_node(child),
                    "valid keys: " + valid_keys_of(join(name)));
      return;
    }
    YamlReader nested(child, problems_, origins_);
    nested.prefix_ = join(name);
    value.visit(nested);
    nested.report_unknown_keys();
  }

  /// Every key of this mapping that the schema did not visit is an error.
  void report_unknown_keys() {
    if (!node_.IsMap()) return;
    for (const auto& entry : node_) {
      const std::string key = entry.first.Scalar();
      if (consumed_.count(key)) continue;
      const std::string path = join(key.c_str());
      std::string message = "unknown key";
      if (auto suggestion = suggest_key(path)) message += "; did you mean '" + *suggestion + "'?";
      problems_.add(path, origins_.where(path, entry.first), message,
                    "valid keys in " +
                        (prefix_.empty() ? std::string("the top level") : "'" + prefix_ + "'") +
                        ": " + valid_keys_of(prefix_));
    }
  }

 private:
  static std::string article(const std::string& type) {
    if (type.rfind("one of", 0) == 0) return type;
    return (type[0] == 'a' || type[0] == 'i' ? "an " : "a ") + type;
  }

  std::string join(const char* name) const {
    return prefix_.empty() ? std::string(name) : prefix_ + "." + name;
  }

  const YAML::Node node_;
  Problems& problems_;
  const Origins& origins_;
  std::string prefix_;
  std::set<std::string> consumed_;
};

// YAML keeps one value of a key given twice in a mapping, and which one is
// an accident of the parser: every repeated key, at any depth, is a problem.
void report_duplicate_keys(const YAML::Node& node, const std::string& path, Problems& problems,
                           const Origins& origins) {
  if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i)
      report_duplicate_keys(node[i], path + "[" + std::to_string(i) + "]", problems, origins);
    return;
  }
  if (!node.IsMap()) return;
  std::map<std::string, YAML::Mark> first;
  for (const auto& entry : node) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "";
    const std::string key_path = path.empty() ? key : path + "." + key;
    if (entry.first.IsScalar()) {
      const auto [seen, fresh] = first.emplace(key, entry.first.Mark());
      if (!fresh)
        problems.add(key_path, origins.where(key_path, entry.first),
                     "duplicate key: also given at " + describe_mark(seen->second),
                     "keep one of them: YAML would silently use only one value");
    }
    report_duplicate_keys(entry.second, key_path, problems, origins);
  }
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::stringstream stream(path);
  for (std::string part; std::getline(stream, part, '.');) parts.push_back(part);
  return parts;
}

// Applies "a.b.c=value" to the YAML tree; the value is typed like a YAML scalar.
void apply_override(YAML::Node& root, const std::string& text, Problems& problems,
                    Origins& origins) {
  const auto eq = text.find('=');
  const std::string key = eq == std::string::npos ? "" : text.substr(0, eq);
  const auto parts = split_path(key);
  bool well_formed = eq != std::string::npos && !key.empty() && !parts.empty();
  for (const auto& part : parts) well_formed = well_formed && !part.empty();
  if (!well_formed) {
    problems.add(text, "--set " + text, "malformed override",
                 "write --set section.key=value, e.g. --set training.lr=1e-4");
    return;
  }
  YAML::Node value;
  try {
    value = YAML::Load(text.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    problems.add(key, "--set " + text, "cannot parse the value: " + e.msg,
                 "quote strings that contain YAML syntax");
    return;
  }
  if (value.IsNull()) value = YAML::Node(std::string());
  YAML::Node cursor = root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node next = cursor[parts[i]];
    if (!next.IsDefined() || next.IsNull()) {
      cursor[parts[i]] = YAML::Node(YAML::NodeType::Map);
      next = cursor[parts[i]];
    } else if (!next.IsMap()) {
      std::string prefix;
      for (std::size_t j = 0; j <= i; ++j) prefix += (j ? "." : "") + parts[j];
      problems.add(key, "--set " + text, "'" + prefix + "' is a value, not a section",
                   "set '" + prefix + "' itself");
      return;
    }
    cursor.reset(next);
  }
  cursor[parts.back()] = value;
  origins.add_override(key, text);
}

void apply_preset(const YAML::Node& root, Config& config, Problems& problems,
                  const Origins& origins) {
  const YAML::Node model = root.IsMap() ? root["model"] : YAML::Node();
  if (!model.IsDefined() || !model.IsMap()) return;
  const YAML::Node preset = model["preset"];
  if (!preset.IsDefined() || !preset.IsScalar()) return;  // type errors are the reader's
  const std::string name = preset.Scalar();
  if (apply_model_preset(name, config.model)) return;
  std::string names, closest;
  std::size_t best = name.size();
  for (const auto& candidate : preset_names()) {
    names += (names.empty() ? "" : ", ") + candidate;
    const std::size_t distance = edit_distance(name, candidate);
    if (distance < best) best = distance, closest = candidate;
  }
  std::string message = "unknown preset '" + name + "'";
  if (!closest.empty() && best <= 3) message += "; did you mean '" + closest + "'?";
  problems.add("model.preset", origins.where("model.preset", preset), message, "presets: " + names);
}

// A family preset's layer plan follows an explicit model.num_hidden_layers
// (gemma3-1b at 2 layers, say) unless model.layer_types is given too.
void follow_preset_layer_plan(const YAML::Node& root, Config& config) {
  const YAML::Node model = root.IsMap() ? root["model"] : YAML::Node();
  if (!model.IsDefined() || !model.IsMap() || !model["preset"].IsDefined() ||
      !model["num_hidden_layers"].IsDefined() || model["layer_types"].IsDefined())
    return;
  const std::int64_t layers = config.model.num_hidden_layers;
  if (layers < 1 || layers > 1024) return;  // out of range: check_values says so
  config.model.layer_types = preset_layer_types(config.model.preset, layers);
}

Config read_tree(YAML::Node root, const std::string& origin,
                 const std::vector<std::string>& overrides) {
  Problems problems;
  Origins origins(origin);
  if (root.IsNull() || !root.IsDefined()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap())
    throw UsageError(
        "config",
        origin + ": the top level must be a mapping of sections, got " + describe_node(root),
        "start from configs/run.yaml");
  report_duplicate_keys(root, "", problems, origins);
  for (const auto& text : overrides) apply_override(root, text, problems, origins);

  Config config;
  apply_preset(root, config, problems, origins);
  YamlReader reader(root, problems, origins);
  config.visit(reader);
  reader.report_unknown_keys();
  follow_preset_layer_plan(root, config);
  // A key that did not read keeps its default, so the values can still be
  // checked: every problem of the file is reported at once.
  resolve_derived(config);
  check_values(config, problems);
  problems.throw_if_any();
  return config;
}

YAML::Node parse_yaml(const std::string& text, const std::string& origin) {
  try {
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw UsageError("config",
                     origin + ", " + describe_mark(e.mark) + ": cannot parse YAML: " + e.msg,
                     "fix the syntax at that position (indentation, ':' after keys, quoting)");
  }
}

}  // namespace

Config load_config(const ConfigSource& source) {
  const YAML::Node root = parse_yaml(read_config_file(source.path), source.path);
  // Most likely the wrong file, or one truncated: the defaults are asked for
  // with an explicit empty mapping.
  if (!root.IsDefined() || root.IsNull())
    throw UsageError("config",
                     "config file " + source.path + " has no keys (it is empty or only comments)",
                     "name the keys to change; a file holding just {} runs on the defaults");
  return read_tree(root, source.path, source.overrides);
}

Config parse_config_text(const std::string& yaml, const std::string& origin,
                         const std::vector<std::string>& overrides) {
  return read_tree(parse_yaml(yaml, origin), origin, overrides);
}

}  // namespace nss::config
