#include "config/key_catalog.h"

#include "config/config.h"
#include "config/value_codec.h"

namespace nss::config {
namespace {

class CatalogBuilder {
 public:
  explicit CatalogBuilder(std::vector<KeyInfo>& out) : out_(out) {}

  template <class T>
  void field(const char* name, T& value, const char* doc, const Range<T>& range = {}) {
    std::string range_text;
    if constexpr (has_range_v<T>) range_text = range.text();
    out_.push_back({join(name), ValueCodec<T>::type_name(), ValueCodec<T>::text(value), range_text,
                    doc, false});
  }

  template <class S>
  void section(const char* name, S& value, const char* doc) {
    out_.push_back({join(name), "section", "", "", doc, true});
    const std::string saved = prefix_;
    prefix_ = join(name);
    value.visit(*this);
    prefix_ = saved;
  }

 private:
  std::string join(const char* name) const {
    return prefix_.empty() ? std::string(name) : prefix_ + "." + name;
  }

  std::vector<KeyInfo>& out_;
  std::string prefix_;
};

}  // namespace

const std::vector<KeyInfo>& key_catalog() {
  static const std::vector<KeyInfo> catalog = [] {
    std::vector<KeyInfo> keys;
    Config defaults;
    CatalogBuilder builder(keys);
    defaults.visit(builder);
    return keys;
  }();
  return catalog;
}

std::string key_catalog_markdown() {
  std::string text;
  for (const auto& key : key_catalog()) {
    if (key.is_section) {
      text += "\n### `" + key.path + "`\n\n" + key.doc + "\n\n";
      text += "| key | type | default | range | meaning |\n|---|---|---|---|---|\n";
      continue;
    }
    text += "| `" + key.path + "` | " + key.type + " | `" + key.default_value + "` | " +
            (key.range.empty() ? "" : "`" + key.range + "`") + " | " + key.doc + " |\n";
  }
  return text;
}

}  // namespace nss::config
