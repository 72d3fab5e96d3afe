#include "pii/entity.h"

#include <algorithm>
#include <array>

#include "core/error.h"

namespace nss::pii {
namespace {

struct EntityInfo {
  Entity entity;
  std::string_view name;
  bool by_default;
};

// In the enum's order, so that entity_name indexes it.
constexpr std::array<EntityInfo, 24> kEntities = {{
    {Entity::kFirstName, "first_name", true},
    {Entity::kLastName, "last_name", true},
    {Entity::kName, "name", true},
    {Entity::kStreetAddress, "street_address", true},
    {Entity::kCity, "city", true},
    {Entity::kState, "state", true},
    {Entity::kPostcode, "postcode", true},
    {Entity::kAddress, "address", true},
    {Entity::kPhoneNumber, "phone_number", true},
    {Entity::kFaxNumber, "fax_number", true},
    {Entity::kEmail, "email", true},
    {Entity::kSsn, "ssn", true},
    {Entity::kNationalId, "national_id", true},
    {Entity::kTaxId, "tax_id", true},
    {Entity::kCreditDebitCard, "credit_debit_card", true},
    {Entity::kIban, "iban", false},
    {Entity::kIpv4, "ipv4", false},
    {Entity::kIpv6, "ipv6", false},
    {Entity::kMacAddress, "mac_address", false},
    {Entity::kUuid, "uuid", false},
    {Entity::kUrl, "url", false},
    {Entity::kDateOfBirth, "date_of_birth", false},
    {Entity::kPassportNumber, "passport_number", false},
    {Entity::kDriversLicense, "drivers_license", false},
}};

std::vector<Entity> entities_where(bool defaults_only) {
  std::vector<Entity> out;
  for (const EntityInfo& info : kEntities) {
    if (info.by_default || !defaults_only) out.push_back(info.entity);
  }
  return out;
}

std::string_view trim_spaces(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

}  // namespace

std::string_view entity_name(Entity entity) {
  return kEntities[static_cast<std::size_t>(entity)].name;
}

std::optional<Entity> parse_entity(std::string_view name) {
  for (const EntityInfo& info : kEntities) {
    if (info.name == name) return info.entity;
  }
  return std::nullopt;
}

const std::vector<Entity>& all_entities() {
  static const std::vector<Entity> all = entities_where(false);
  return all;
}

const std::vector<Entity>& default_entities() {
  static const std::vector<Entity> defaults = entities_where(true);
  return defaults;
}

std::vector<Entity> parse_entity_list(std::string_view list) {
  if (trim_spaces(list) == "all") return all_entities();
  std::vector<Entity> out;
  std::size_t begin = 0;
  while (begin <= list.size()) {
    const std::size_t comma = std::min(list.find(',', begin), list.size());
    const std::string_view name = trim_spaces(list.substr(begin, comma - begin));
    const std::optional<Entity> entity = parse_entity(name);
    if (!entity) {
      throw UsageError("pii",
                       (name.empty() ? std::string("empty PII entity name")
                                     : "unknown PII entity '" + std::string(name) + "'") +
                           " in the list '" + std::string(list) + "'",
                       "valid names: " + entity_names() + ", or all");
    }
    if (std::find(out.begin(), out.end(), *entity) == out.end()) out.push_back(*entity);
    begin = comma + 1;
  }
  return out;
}

std::string redaction(Entity entity) {
  return "<" + std::string(entity_name(entity)) + ">";
}

std::string entity_names() {
  std::string names;
  for (const EntityInfo& info : kEntities)
    names += (names.empty() ? "" : ", ") + std::string(info.name);
  return names;
}

}  // namespace nss::pii
