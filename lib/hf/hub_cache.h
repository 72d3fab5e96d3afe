// The local Hugging Face hub cache, read offline the way huggingface_hub
// reads it, so that `model.from_pretrained: Org/Name[@revision]` finds what
// `huggingface-cli download` put there. Nothing is ever downloaded.
//
// Layout (huggingface_hub's file_download.py):
//   <cache>/models--Org--Name/refs/<ref>          a commit hash (refs may hold slashes)
//   <cache>/models--Org--Name/snapshots/<commit>/  the files, linked into blobs/
#pragma once

#include <optional>
#include <string>

namespace nss::hf {

/// Where the hub cache is, and which variable chose it (for messages).
struct HubCacheLocation {
  std::string dir;
  /// "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME" or "default".
  std::string source;
};

/// huggingface_hub's constants.HF_HUB_CACHE: HF_HUB_CACHE, else the legacy
/// HUGGINGFACE_HUB_CACHE, else $HF_HOME/hub, else
/// $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub; `~` and
/// $VARIABLES in the values expanded. An empty variable counts as unset.
HubCacheLocation hub_cache_location();

/// "the Hugging Face cache DIR (from HF_HUB_CACHE)", for messages.
std::string describe_hub_cache(const HubCacheLocation& cache);

/// A model named the hub's way: "Org/Name" or "Name", optionally "@revision".
struct HubReference {
  std::string repo_id;
  std::string revision;  // "main" unless given
  bool revision_given = false;
};

/// `text` as a hub reference when its id part follows huggingface_hub's
/// validate_repo_id (letters, digits, '-', '_', '.'; at most one '/'; a name
/// of at most 96 characters), else nullopt. The revision is not checked here.
std::optional<HubReference> parse_hub_reference(const std::string& text);

/// The snapshot directory of `reference` in `cache`: refs/<revision> names
/// the commit, or the revision is a 40-character commit hash itself. Throws
/// DataError (exit 4) naming the reference, the cache and what is missing,
/// with the `huggingface-cli download` command that fetches it.
std::string find_cached_snapshot(const HubReference& reference, const HubCacheLocation& cache);

/// `from_pretrained` as a model directory: itself when it is an existing
/// directory (a local directory always wins), else its snapshot in the hub
/// cache. Throws DataError otherwise, naming both places it looked.
std::string resolve_model_directory(const std::string& from_pretrained);

/// For messages: "Org/Name (main) resolved in the Hugging Face cache CACHE
/// to DIR" when `dir` is a snapshot directory of a hub cache, else `dir`.
std::string describe_model_directory(const std::string& dir);

}  // namespace nss::hf
