// What a column's header says about its values: the header's tokens as NSS
// tokenizes field names, the entities whose hint terms it names, and the
// tokens that rule an entity out ("version" is no IP address column).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pii/entity.h"

namespace nss::pii {

/// NSS's tokenize_header: "_" as a separator, the words of (?!\d)\w+
/// (Unicode), each split at its camelCase boundaries ("homePhone",
/// "HTTPServer"), ASCII-lowercased.
std::vector<std::string> tokenize_header(std::string_view header);

/// The entities one of whose hint terms equals a token of `header`, a run of
/// consecutive tokens written together ("first_name" -> "firstname") or all
/// of them, in the vocabulary's order; vetoed entities left out.
std::vector<Entity> header_hints(std::string_view header);

/// Whether a token of `header` rules `entity` out (ver/version/release/build
/// for IP addresses; order/invoice/sku/isbn/upc/ean/imei/serial/tracking for
/// card numbers; status/statement for states; company/product/file/user/
/// host/domain/brand for person names: "username", "product_name").
bool header_vetoes(std::string_view header, Entity entity);

}  // namespace nss::pii
