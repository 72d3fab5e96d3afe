#include "ner/entity_labels.h"

#include <algorithm>
#include <cctype>

namespace nss::ner {
namespace {

std::string lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

LabelTag label_tag(std::string_view label) {
  if (label.size() > 2 && (label[0] == 'B' || label[0] == 'I') && label[1] == '-')
    return {label[0] == 'B', std::string(label.substr(2))};
  return {false, std::string(label)};
}

std::optional<pii::Entity> entity_of_group(std::string_view group) {
  const std::string name = lowercase(group);
  if (name == "per" || name == "person") return pii::Entity::kName;
  if (name == "loc" || name == "location" || name == "gpe") return pii::Entity::kCity;
  return pii::parse_entity(name);
}

}  // namespace nss::ner
