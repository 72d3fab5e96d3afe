#include "hf/hub_cache.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <pwd.h>
#include <unistd.h>
#include <utility>
#include <vector>

#include "core/error.h"
#include "hf/weight_files.h"

namespace nss::hf {
namespace {

namespace fs = std::filesystem;

// huggingface_hub's REPO_ID_REGEX bounds the name; the namespace gets the
// same bound so that no id makes a folder name beyond a file system's 255.
constexpr std::size_t kMaxRepoNamePart = 96;
// Names longer than this are shown by their start and length: a message
// should fit a terminal, whatever was typed.
constexpr std::size_t kShownCharacters = 160;
// A ref file holds a 40-character hash; reading more is pointless and keeps
// a huge or endless file (a FIFO is refused before) from being read.
constexpr std::size_t kRefReadLimit = 256;

std::string shown(const std::string& text) {
  if (text.size() <= kShownCharacters) return text;
  return text.substr(0, kShownCharacters) + "... (" + std::to_string(text.size()) + " characters)";
}

std::optional<std::string> environment(const char* name) {
  const char* value = std::getenv(name);
  if (!value || !*value) return std::nullopt;
  return std::string(value);
}

// os.path.join for two parts.
std::string join(const std::string& a, const std::string& b) {
  if (a.empty() || (!b.empty() && b.front() == '/')) return b;
  return a.back() == '/' ? a + b : a + "/" + b;
}

// posixpath.expanduser: "~" and "~user" at the start; an unknown user stays.
std::string expand_user(const std::string& path) {
  if (path.empty() || path.front() != '~') return path;
  const std::size_t slash = path.find('/');
  const std::string user = path.substr(1, slash == std::string::npos ? slash : slash - 1);
  std::string home;
  // HOME wins even when empty, as in Python.
  if (const char* variable = std::getenv("HOME"); user.empty() && variable) {
    home = variable;
  } else {
    const passwd* entry = user.empty() ? getpwuid(getuid()) : getpwnam(user.c_str());
    if (!entry || !entry->pw_dir) return path;
    home = entry->pw_dir;
  }
  while (!home.empty() && home.back() == '/') home.pop_back();
  const std::string result = home + (slash == std::string::npos ? "" : path.substr(slash));
  return result.empty() ? "/" : result;
}

bool is_word_character(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// posixpath.expandvars: $NAME and ${NAME}; an unset variable stays as written.
std::string expand_variables(const std::string& text) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t end = i + 1;
    std::string name;
    if (text[i] == '$' && end < text.size() && text[end] == '{') {
      const std::size_t close = text.find('}', end);
      if (close != std::string::npos) {
        name = text.substr(end + 1, close - end - 1);
        end = close + 1;
      }
    } else if (text[i] == '$') {
      while (end < text.size() && is_word_character(text[end])) ++end;
      name = text.substr(i + 1, end - i - 1);
    }
    const char* value = name.empty() ? nullptr : std::getenv(name.c_str());
    if (!value) end = i + 1;
    out += value ? std::string(value) : text.substr(i, 1);
    i = end;
  }
  return out;
}

std::string expand(const std::string& path) {
  return expand_variables(expand_user(path));
}

bool valid_repo_part(const std::string& part) {
  if (part.empty() || part.size() > kMaxRepoNamePart) return false;
  if (!is_word_character(part.front()) || !is_word_character(part.back())) return false;
  for (const char c : part)
    if (!is_word_character(c) && c != '-' && c != '.') return false;
  return true;
}

bool is_lowercase_hex(const std::string& text) {
  for (const char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return !text.empty();
}

bool is_commit_hash(const std::string& text) {
  return text.size() == 40 && is_lowercase_hex(text);
}

bool ends_with(const std::string& text, const std::string& end) {
  return text.size() > end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

// A branch or tag name as git allows it (refs/pr/1 has slashes); in
// particular no component that starts with '.', so never a way out of refs/.
bool valid_revision(const std::string& revision) {
  std::size_t begin = 0;
  while (begin <= revision.size()) {
    const std::size_t slash = std::min(revision.find('/', begin), revision.size());
    const std::string component = revision.substr(begin, slash - begin);
    if (component.empty() || component.front() == '.') return false;
    for (const char c : component)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f ||
          std::string(" ~^:?*[\\").find(c) != std::string::npos)
        return false;
    begin = slash + 1;
  }
  return true;
}

std::string repo_folder(const HubReference& reference) {
  std::string folder = "models--" + reference.repo_id;
  const std::size_t slash = folder.find('/');
  if (slash != std::string::npos) folder.replace(slash, 1, "--");
  return folder;
}

std::string written(const HubReference& reference) {
  return shown(reference.repo_id + (reference.revision_given ? "@" + reference.revision : ""));
}

// The command that fills this cache: huggingface-cli honours HF_HUB_CACHE too.
std::string download_command(const HubReference& reference, const HubCacheLocation& cache) {
  const std::string revision = reference.revision_given && valid_revision(reference.revision)
                                   ? " --revision " + shown(reference.revision)
                                   : "";
  return "`HF_HUB_CACHE=" + shown(cache.dir) + " huggingface-cli download " + reference.repo_id +
         revision + "`";
}

std::string download_hint(const HubReference& reference, const HubCacheLocation& cache) {
  return "nss_hpc never downloads: run " + download_command(reference, cache) +
         " where there is internet access, or set HF_HUB_CACHE to a cache that holds the model, "
         "or point at a local model directory";
}

std::string repair_hint(const std::string& damaged, const HubReference& reference,
                        const HubCacheLocation& cache) {
  return "delete " + shown(damaged) + ", then run " + download_command(reference, cache) +
         " where there is internet access";
}

// The status of `path`. A failure other than "not there" (no permission, a
// name too long) is named as it is rather than reported as a missing piece.
fs::file_status status_of(const fs::path& path, const HubReference& reference,
                          const HubCacheLocation& cache) {
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (error && error != std::errc::no_such_file_or_directory && error != std::errc::not_a_directory)
    throw DataError("hf",
                    "'" + written(reference) + "': cannot read " + shown(path.string()) + " in " +
                        describe_hub_cache(cache) + ": " + error.message(),
                    download_hint(reference, cache));
  return status;
}

// The first bytes of a ref file: a hash is 40 characters.
std::string ref_content(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string content(kRefReadLimit, '\0');
  in.read(content.data(), static_cast<std::streamsize>(content.size()));
  content.resize(static_cast<std::size_t>(in.gcount()));
  return content;
}

// Every ref file under `refs` with its content, by name relative to it.
std::vector<std::pair<std::string, std::string>> read_refs(const fs::path& refs) {
  std::vector<std::pair<std::string, std::string>> found;
  std::error_code error, kind_error;
  for (fs::recursive_directory_iterator it(refs, error), end; !error && it != end;
       it.increment(error))
    if (it->is_regular_file(kind_error))
      found.emplace_back(it->path().lexically_relative(refs).string(), ref_content(it->path()));
  std::sort(found.begin(), found.end());
  return found;
}

// huggingface_hub writes the hash alone; a hand-edited ref may end in a newline.
std::string trimmed(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

std::string ref_names(const fs::path& refs) {
  std::string names;
  for (const auto& [name, content] : read_refs(refs)) names += (names.empty() ? "" : ", ") + name;
  return names.empty() ? "it holds no refs" : "its refs: " + shown(names);
}

std::string commit_of_ref(const fs::path& repo, const HubReference& reference,
                          const HubCacheLocation& cache) {
  const fs::path path = repo / "refs" / reference.revision;
  const std::string where = describe_hub_cache(cache);
  const fs::file_status status = status_of(path, reference, cache);
  if (fs::exists(status) && !fs::is_regular_file(status) && !fs::is_directory(status))
    throw DataError("hf",
                    "'" + written(reference) + "': " + shown(path.string()) +
                        " is not a regular file (a damaged cache: huggingface_hub writes the "
                        "commit into it)",
                    repair_hint(path.string(), reference, cache));
  if (!fs::is_regular_file(status)) {
    const bool short_hash = reference.revision.size() < 40 && is_lowercase_hex(reference.revision);
    throw DataError("hf",
                    "'" + written(reference) + "': " + where + " has " + repo.filename().string() +
                        " but no ref file refs/" + shown(reference.revision) + " (" +
                        ref_names(repo / "refs") + "): that revision was never downloaded" +
                        (short_hash ? "; a commit is named by its full 40-character hash" : ""),
                    download_hint(reference, cache));
  }
  const std::string content = trimmed(ref_content(path));
  if (!is_commit_hash(content))
    throw DataError(
        "hf",
        "'" + written(reference) + "': " + shown(path.string()) +
            (content.empty() ? " is empty" : " does not hold a 40-character commit hash") +
            " (a damaged cache: huggingface_hub writes the commit there)",
        repair_hint(path.string(), reference, cache));
  return content;
}

// The snapshot must be a directory with config.json, and no file nss_hpc
// reads may be a link to a blob that is gone (a cleaned-up or interrupted
// download): that would otherwise surface later as a file "missing".
void check_snapshot(const fs::path& snapshot, const std::string& via, const HubReference& reference,
                    const HubCacheLocation& cache) {
  const std::string name = "'" + written(reference) + "': ";
  const fs::file_status status = status_of(snapshot, reference, cache);
  if (!fs::exists(status))
    throw DataError("hf", name + shown(snapshot.string()) + " is missing (" + via + ")",
                    download_hint(reference, cache));
  if (!fs::is_directory(status))
    throw DataError("hf", name + shown(snapshot.string()) + " is not a directory (" + via + ")",
                    repair_hint(snapshot.string(), reference, cache));
  std::error_code error, link_error;
  for (fs::directory_iterator it(snapshot, error), end; !error && it != end; it.increment(error)) {
    const std::string file = it->path().filename().string();
    const bool read = ends_with(file, ".json") || ends_with(file, ".safetensors");
    if (read && it->is_symlink(link_error) && !fs::exists(status_of(it->path(), reference, cache)))
      throw DataError("hf",
                      name + shown(it->path().string()) + " links to " +
                          fs::read_symlink(it->path(), link_error).string() +
                          ", which is missing (a blob deleted or a download interrupted)",
                      download_hint(reference, cache));
  }
  if (error)
    throw DataError("hf", name + "cannot list " + shown(snapshot.string()) + ": " + error.message(),
                    download_hint(reference, cache));
  if (!fs::exists(status_of(snapshot / kConfigFile, reference, cache)))
    throw DataError("hf",
                    name + shown(snapshot.string()) + " has no " + kConfigFile + " (" + via +
                        "): the download left it out",
                    download_hint(reference, cache));
}

}  // namespace

HubCacheLocation hub_cache_location() {
  if (const auto value = environment("HF_HUB_CACHE")) return {expand(*value), "HF_HUB_CACHE"};
  if (const auto value = environment("HUGGINGFACE_HUB_CACHE"))
    return {expand(*value), "HUGGINGFACE_HUB_CACHE"};
  // HF_HOME (or its default) is expanded on its own, then again with /hub
  // joined, as constants.py does.
  if (const auto value = environment("HF_HOME"))
    return {expand(join(expand(*value), "hub")), "HF_HOME"};
  if (const auto value = environment("XDG_CACHE_HOME"))
    return {expand(join(expand(join(*value, "huggingface")), "hub")), "XDG_CACHE_HOME"};
  const std::string home = join(join(expand_user("~"), ".cache"), "huggingface");
  return {expand(join(expand(home), "hub")), "default"};
}

std::string describe_hub_cache(const HubCacheLocation& cache) {
  std::string origin;
  if (cache.source == "HF_HUB_CACHE")
    origin = "from HF_HUB_CACHE";
  else if (cache.source == "HUGGINGFACE_HUB_CACHE")
    origin = "from HUGGINGFACE_HUB_CACHE, the old name of HF_HUB_CACHE";
  else if (cache.source == "HF_HOME")
    origin = "from HF_HOME: $HF_HOME/hub";
  else if (cache.source == "XDG_CACHE_HOME")
    origin = "from XDG_CACHE_HOME: $XDG_CACHE_HOME/huggingface/hub";
  else
    origin = "the default: HF_HUB_CACHE, HF_HOME and XDG_CACHE_HOME are not set";
  return "the Hugging Face cache " + shown(cache.dir) + " (" + origin + ")";
}

std::optional<HubReference> parse_hub_reference(const std::string& text) {
  HubReference reference;
  const std::size_t at = text.find('@');
  reference.repo_id = text.substr(0, at);
  reference.revision_given = at != std::string::npos;
  reference.revision = reference.revision_given ? text.substr(at + 1) : "main";
  const std::size_t slash = reference.repo_id.find('/');
  const bool has_namespace = slash != std::string::npos;
  if (has_namespace && !valid_repo_part(reference.repo_id.substr(0, slash))) return std::nullopt;
  if (!valid_repo_part(has_namespace ? reference.repo_id.substr(slash + 1) : reference.repo_id))
    return std::nullopt;
  const std::string& id = reference.repo_id;
  if (id.find("--") != std::string::npos || id.find("..") != std::string::npos) return std::nullopt;
  if (id.size() >= 4 && id.compare(id.size() - 4, 4, ".git") == 0) return std::nullopt;
  return reference;
}

std::string find_cached_snapshot(const HubReference& reference, const HubCacheLocation& cache) {
  const std::string revision_forms = reference.repo_id + " for its main branch, or " +
                                     reference.repo_id +
                                     "@REVISION (a branch, a tag or a 40-character commit hash)";
  if (reference.revision_given && reference.revision.empty())
    throw DataError("hf", "'" + written(reference) + "' names no revision after '@'",
                    "write " + revision_forms);
  if (!valid_revision(reference.revision))
    throw DataError("hf",
                    "'" + written(reference) + "': '" + shown(reference.revision) +
                        "' is not a revision (a branch or tag name has no component that starts "
                        "with '.', no blank and none of ~^:?*[\\)",
                    "write " + revision_forms);
  const fs::path repo = fs::path(cache.dir) / repo_folder(reference);
  if (!fs::is_directory(status_of(repo, reference, cache)))
    throw DataError("hf",
                    "'" + written(reference) + "' is not a local directory, and " +
                        describe_hub_cache(cache) + " has no " + repo_folder(reference),
                    download_hint(reference, cache));
  if (is_commit_hash(reference.revision)) {
    check_snapshot(repo / "snapshots" / reference.revision, "the commit given", reference, cache);
    return (repo / "snapshots" / reference.revision).string();
  }
  const std::string commit = commit_of_ref(repo, reference, cache);
  const fs::path snapshot = repo / "snapshots" / commit;
  check_snapshot(snapshot, "refs/" + shown(reference.revision) + " names it", reference, cache);
  return snapshot.string();
}

std::string resolve_model_directory(const std::string& from_pretrained) {
  std::error_code error;
  const fs::file_status status = fs::status(from_pretrained, error);
  if (fs::is_directory(status)) return from_pretrained;
  if (fs::exists(status))
    throw DataError("hf", shown(from_pretrained) + " is not a directory",
                    "point at the directory that holds config.json and the .safetensors files");
  const auto reference = parse_hub_reference(from_pretrained);
  if (!reference)
    throw DataError("hf", "model directory " + shown(from_pretrained) + " does not exist",
                    "point at a local Hugging Face model directory (config.json + .safetensors), "
                    "or name a model in the Hugging Face cache as Org/Name[@revision]");
  return find_cached_snapshot(*reference, hub_cache_location());
}

std::string describe_model_directory(const std::string& dir) {
  fs::path snapshot = fs::path(dir).lexically_normal();
  if (!snapshot.has_filename()) snapshot = snapshot.parent_path();
  const fs::path repo = snapshot.parent_path().parent_path();
  const std::string commit = snapshot.filename().string();
  const std::string folder = repo.filename().string();
  if (!is_commit_hash(commit) || snapshot.parent_path().filename() != "snapshots" ||
      folder.rfind("models--", 0) != 0)
    return dir;
  std::string repo_id = folder.substr(8);
  const std::size_t separator = repo_id.find("--");
  if (separator != std::string::npos) repo_id.replace(separator, 2, "/");
  // The refs that name this commit: what a user wrote (main, a tag) rather
  // than the hash, when the directory came from a reference.
  std::string revisions;
  for (const auto& [name, content] : read_refs(repo / "refs"))
    if (trimmed(content) == commit) revisions += (revisions.empty() ? "" : ", ") + name;
  return repo_id + " (" + (revisions.empty() ? "commit " + commit : revisions) +
         ") resolved in the Hugging Face cache " + repo.parent_path().string() + " to " + dir;
}

}  // namespace nss::hf
