// The PII entity vocabulary. The names are NeMo Safe Synthesizer's (its
// classify.entities and the three types its column classifier may give that
// it does not list by default), so reports and PII replay rows compare with
// NSS's; the redaction text is NSS's `<entity>`. The extras beyond NSS's
// list take NSS's regex tag where it has one (uuid, url) and otherwise
// Presidio's plain wording (date_of_birth, passport_number, drivers_license).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nss::pii {

enum class Entity {
  // NSS's 15 defaults, in NSS's order.
  kFirstName,
  kLastName,
  kName,
  kStreetAddress,
  kCity,
  kState,
  kPostcode,
  kAddress,
  kPhoneNumber,
  kFaxNumber,
  kEmail,
  kSsn,
  kNationalId,
  kTaxId,
  kCreditDebitCard,
  // Extras, detected only when asked for.
  kIban,
  kIpv4,
  kIpv6,
  kMacAddress,
  kUuid,
  kUrl,
  kDateOfBirth,
  kPassportNumber,
  kDriversLicense,
};

/// NSS's name of `entity`: "email", "credit_debit_card", ...
std::string_view entity_name(Entity entity);

/// The entity called `name` (exactly, as entity_name spells it), or nullopt.
std::optional<Entity> parse_entity(std::string_view name);

/// Every entity: the defaults, then the extras.
const std::vector<Entity>& all_entities();

/// NSS's default entities (its classify.entities): every entity but the extras.
const std::vector<Entity>& default_entities();

/// A comma-separated list of entity names (spaces around a name ignored,
/// repeats dropped), or "all" for every entity. An unknown or empty name is a
/// UsageError that lists the valid names.
std::vector<Entity> parse_entity_list(std::string_view list);

/// Every entity's name, comma-separated, for messages that list the choices.
std::string entity_names();

/// What redaction writes in place of a value: "<email>".
std::string redaction(Entity entity);

}  // namespace nss::pii
