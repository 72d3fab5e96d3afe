// Preflight check data.pii (docs/preflight.md): whether personal data of a
// records table can reach the model — the token file's PII record (the mode
// nss_prepare_data --pii ran in, its report), or, for a table prepared
// without PII handling, a scan of the first rows of the original CSV when it
// is still readable.
#pragma once

#include <string>

#include "data/token_dataset.h"
#include "preflight/check.h"

namespace nss::preflight {

/// Rows of the original CSV scanned when no PII handling ran.
inline constexpr std::size_t kPiiSampleRows = 1000;

/// The check for the records training file `tokens` (configured as `key`):
/// passed when PII handling changed the cells, or found nothing; a warning
/// when it only detected (--pii detect) and found personal data, or when
/// none ran and the sample of the original CSV holds some; skipped when
/// there is nothing to scan (no source recorded, unreadable, or Faker's word
/// lists missing). Never fails: the data are the user's to train on.
Check pii_check(const std::string& key, const data::TokenDataset& tokens);

}  // namespace nss::preflight
