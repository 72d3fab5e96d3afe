// The Hugging Face hub cache: where it is (the variables in huggingface_hub's
// order), Org/Name[@revision] to a snapshot directory on a layout made here
// the way huggingface_hub makes it, and every missing or damaged piece a
// DataError (exit 4) naming it, the cache and the download command.
#include "hf/hub_cache.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.h"
#include "support/test_paths.h"

namespace nss::hf {
namespace {

namespace fs = std::filesystem;

const std::string kMain = "0123456789abcdef0123456789abcdef01234567";
const std::string kTag = "89abcdef0123456789abcdef0123456789abcdef";
const std::string kPullRequest = "fedcba9876543210fedcba9876543210fedcba98";
const std::string kUnnamed = "1111111111222222222233333333334444444444";

// Sets the cache variables for one test and restores them after.
class Environment {
 public:
  Environment() {
    for (const char* name : kNames)
      if (const char* value = getenv(name)) saved_[name] = value;
    for (const char* name : kNames) unsetenv(name);
  }
  ~Environment() {
    for (const char* name : kNames) unsetenv(name);
    for (const auto& [name, value] : saved_) setenv(name.c_str(), value.c_str(), 1);
  }
  void set(const char* name, const std::string& value) { setenv(name, value.c_str(), 1); }

 private:
  static constexpr const char* kNames[] = {"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE",
                                           "HF_HOME",      "XDG_CACHE_HOME",
                                           "HOME",         "NSS_TEST_PREFIX"};
  std::map<std::string, std::string> saved_;
};

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// A snapshot as huggingface_hub leaves it: the file in blobs/ under its
// hash, the snapshot entry a relative link to it.
void add_snapshot(const fs::path& repo, const std::string& commit, const std::string& blob) {
  write_file(repo / "blobs" / blob, R"({"model_type": "llama"})");
  fs::create_directories(repo / "snapshots" / commit);
  fs::create_symlink("../../blobs/" + blob, repo / "snapshots" / commit / "config.json");
}

// models--Org--Name with main, the tag v1, refs/pr/1 (downloaded as
// revision "refs/pr/1", so under refs/refs/pr/1) and one commit no ref names.
fs::path make_cache(const std::string& root) {
  const fs::path cache = fs::path(root) / "hub";
  const fs::path repo = cache / "models--Org--Name";
  add_snapshot(repo, kMain, "aaaa");
  add_snapshot(repo, kTag, "bbbb");
  add_snapshot(repo, kPullRequest, "cccc");
  add_snapshot(repo, kUnnamed, "dddd");
  write_file(repo / "refs" / "main", kMain);
  write_file(repo / "refs" / "v1", kTag);
  write_file(repo / "refs" / "refs" / "pr" / "1", kPullRequest);
  add_snapshot(cache / "models--gpt2", kMain, "eeee");
  write_file(cache / "models--gpt2" / "refs" / "main", kMain + "\n");
  return cache;
}

std::string snapshot(const fs::path& cache, const std::string& folder, const std::string& commit) {
  return (cache / folder / "snapshots" / commit).string();
}

// The DataError that resolving `reference` throws, or a failure.
std::string resolve_error(const std::string& reference) {
  try {
    resolve_model_directory(reference);
  } catch (const DataError& e) {
    return e.what();  // the message and the hint
  }
  ADD_FAILURE() << reference << " resolved";
  return "";
}

void expect_contains(const std::string& text, std::initializer_list<std::string> parts) {
  for (const auto& part : parts)
    EXPECT_NE(text.find(part), std::string::npos) << part << "\n" << text;
}

TEST(HubCacheLocation, VariablesInHuggingFaceHubsOrder) {
  Environment environment;
  environment.set("HOME", "/home/someone/");
  EXPECT_EQ(hub_cache_location().dir, "/home/someone/.cache/huggingface/hub");
  EXPECT_EQ(hub_cache_location().source, "default");
  environment.set("XDG_CACHE_HOME", "/xdg");
  EXPECT_EQ(hub_cache_location().dir, "/xdg/huggingface/hub");
  EXPECT_EQ(hub_cache_location().source, "XDG_CACHE_HOME");
  environment.set("HF_HOME", "/hf-home");
  EXPECT_EQ(hub_cache_location().dir, "/hf-home/hub");
  EXPECT_EQ(hub_cache_location().source, "HF_HOME");
  environment.set("HUGGINGFACE_HUB_CACHE", "/legacy");
  EXPECT_EQ(hub_cache_location().dir, "/legacy");
  environment.set("HF_HUB_CACHE", "/hub-cache");
  EXPECT_EQ(hub_cache_location().dir, "/hub-cache");
  EXPECT_EQ(hub_cache_location().source, "HF_HUB_CACHE");
  // An empty variable counts as unset.
  environment.set("HF_HUB_CACHE", "");
  EXPECT_EQ(hub_cache_location().source, "HUGGINGFACE_HUB_CACHE");
  expect_contains(describe_hub_cache(hub_cache_location()),
                  {"/legacy", "the old name of HF_HUB_CACHE"});
}

TEST(HubCacheLocation, TildeAndVariablesExpandAsPythonDoes) {
  Environment environment;
  environment.set("HOME", "/home/someone");
  environment.set("NSS_TEST_PREFIX", "/prefix");
  environment.set("HF_HUB_CACHE", "~/models");
  EXPECT_EQ(hub_cache_location().dir, "/home/someone/models");
  environment.set("HF_HUB_CACHE", "$NSS_TEST_PREFIX/a/${NSS_TEST_PREFIX}b/$NSS_UNSET_X/${}/$");
  EXPECT_EQ(hub_cache_location().dir, "/prefix/a//prefixb/$NSS_UNSET_X/${}/$");
  environment.set("HF_HUB_CACHE", "");
  environment.set("HF_HOME", "~/hf");
  EXPECT_EQ(hub_cache_location().dir, "/home/someone/hf/hub");
  environment.set("HF_HOME", "");
  environment.set("XDG_CACHE_HOME", "$NSS_TEST_PREFIX");
  EXPECT_EQ(hub_cache_location().dir, "/prefix/huggingface/hub");
}

TEST(HubReference, TheHubsIdRules) {
  const auto main = parse_hub_reference("HuggingFaceTB/SmolLM2-135M-Instruct");
  ASSERT_TRUE(main);
  EXPECT_EQ(main->repo_id, "HuggingFaceTB/SmolLM2-135M-Instruct");
  EXPECT_EQ(main->revision, "main");
  EXPECT_FALSE(main->revision_given);
  const auto pr = parse_hub_reference("Org/Name@refs/pr/1");
  ASSERT_TRUE(pr);
  EXPECT_EQ(pr->revision, "refs/pr/1");
  EXPECT_TRUE(pr->revision_given);
  EXPECT_TRUE(parse_hub_reference("gpt2"));
  EXPECT_TRUE(parse_hub_reference("Org/Name@"));  // the resolver names the empty revision
  for (const std::string& not_an_id : std::vector<std::string>{
           "", "../x/y", "./x", "/abs/path", "a/b/c", "-org/name", "org/name.", "a--b/c", "a/b..c",
           "org/name.git", "org/na me", "org/" + std::string(97, 'x'), std::string(97, 'x') + "/n"})
    EXPECT_FALSE(parse_hub_reference(not_an_id)) << not_an_id;
  EXPECT_TRUE(parse_hub_reference("org/" + std::string(96, 'x')));
}

class HubCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::scratch_dir("hub_cache");
    cache_ = make_cache(root_);
    environment_.set("HF_HUB_CACHE", cache_.string());
  }

  fs::path repo() const { return cache_ / "models--Org--Name"; }

  Environment environment_;
  std::string root_;
  fs::path cache_;
};

TEST_F(HubCacheTest, ByNameRefCommitAndSlashedRef) {
  EXPECT_EQ(resolve_model_directory("Org/Name"), snapshot(cache_, "models--Org--Name", kMain));
  EXPECT_EQ(resolve_model_directory("Org/Name@main"), snapshot(cache_, "models--Org--Name", kMain));
  EXPECT_EQ(resolve_model_directory("Org/Name@v1"), snapshot(cache_, "models--Org--Name", kTag));
  EXPECT_EQ(resolve_model_directory("Org/Name@refs/pr/1"),
            snapshot(cache_, "models--Org--Name", kPullRequest));
  EXPECT_EQ(resolve_model_directory("Org/Name@" + kUnnamed),
            snapshot(cache_, "models--Org--Name", kUnnamed));
  // No namespace; a ref written by hand with a newline.
  EXPECT_EQ(resolve_model_directory("gpt2"), snapshot(cache_, "models--gpt2", kMain));
}

TEST_F(HubCacheTest, HfHomeAndTheDefaultFindTheSameLayout) {
  environment_.set("HF_HUB_CACHE", "");
  environment_.set("HF_HOME", root_);
  EXPECT_EQ(resolve_model_directory("Org/Name@v1"), snapshot(cache_, "models--Org--Name", kTag));
  environment_.set("HF_HOME", "");
  fs::create_directories(fs::path(root_) / "home" / ".cache" / "huggingface");
  fs::rename(cache_, fs::path(root_) / "home" / ".cache" / "huggingface" / "hub");
  environment_.set("HOME", root_ + "/home");
  expect_contains(resolve_model_directory("Org/Name"),
                  {root_ + "/home/.cache/huggingface/hub/models--Org--Name/snapshots/" + kMain});
}

TEST_F(HubCacheTest, AnExistingDirectoryWins) {
  const fs::path previous = fs::current_path();
  fs::current_path(root_);
  fs::create_directories("Org/Name");
  const std::string resolved = resolve_model_directory("Org/Name");
  fs::current_path(previous);
  EXPECT_EQ(resolved, "Org/Name");
}

TEST_F(HubCacheTest, DescribesASnapshotByTheRefsThatNameIt) {
  const std::string main = snapshot(cache_, "models--Org--Name", kMain);
  EXPECT_EQ(describe_model_directory(main), "Org/Name (main) resolved in the Hugging Face cache " +
                                                cache_.string() + " to " + main);
  expect_contains(describe_model_directory(snapshot(cache_, "models--Org--Name", kPullRequest)),
                  {"Org/Name (refs/pr/1) resolved"});
  expect_contains(describe_model_directory(snapshot(cache_, "models--gpt2", kMain) + "/"),
                  {"gpt2 (main) resolved"});
  expect_contains(describe_model_directory(snapshot(cache_, "models--Org--Name", kUnnamed)),
                  {"Org/Name (commit " + kUnnamed + ") resolved"});
  EXPECT_EQ(describe_model_directory(root_), root_);
}

TEST_F(HubCacheTest, NotInTheCacheNamesTheCacheItsVariableAndTheDownload) {
  expect_contains(resolve_error("Other/Model"),
                  {"'Other/Model' is not a local directory, and the Hugging Face cache " +
                       cache_.string() + " (from HF_HUB_CACHE) has no models--Other--Model",
                   "`HF_HUB_CACHE=" + cache_.string() + " huggingface-cli download Other/Model`"});
  environment_.set("HF_HUB_CACHE", "");
  environment_.set("HF_HOME", root_);
  expect_contains(resolve_error("Other/Model@v2"),
                  {"(from HF_HOME: $HF_HOME/hub)", "`HF_HUB_CACHE=" + root_ +
                                                       "/hub huggingface-cli download Other/Model "
                                                       "--revision v2`"});
}

TEST_F(HubCacheTest, MissingRefsAndBadRevisions) {
  expect_contains(resolve_error("Org/Name@v9"),
                  {"has models--Org--Name but no ref file refs/v9", "main", "refs/pr/1",
                   "that revision was never downloaded", "download Org/Name --revision v9`"});
  expect_contains(resolve_error("Org/Name@0123456"), {"full 40-character hash"});
  expect_contains(resolve_error("Org/Name@"), {"'Org/Name@' names no revision after '@'"});
  for (const char* revision : {"../../x", "refs/../../x", "a//b", "v1/", "/v1", "a b"})
    expect_contains(resolve_error(std::string("Org/Name@") + revision), {"is not a revision"});
  expect_contains(resolve_error("../x/y"),
                  {"model directory ../x/y does not exist", "Org/Name[@revision]"});
}

TEST_F(HubCacheTest, DamagedRefsAndSnapshots) {
  write_file(repo() / "refs" / "main", "");
  expect_contains(resolve_error("Org/Name"),
                  {"refs/main is empty",
                   "delete " + (repo() / "refs" / "main").string() + ", then run `HF_HUB_CACHE="});
  write_file(repo() / "refs" / "main", "not a hash at all\n");
  expect_contains(resolve_error("Org/Name"), {"does not hold a 40-character commit hash"});
  fs::remove(repo() / "refs" / "main");
  ASSERT_EQ(mkfifo((repo() / "refs" / "main").c_str(), 0600), 0);
  expect_contains(resolve_error("Org/Name"), {"refs/main is not a regular file"});
  fs::remove(repo() / "refs" / "main");
  write_file(repo() / "refs" / "main", std::string(40, 'f'));
  expect_contains(resolve_error("Org/Name"),
                  {"snapshots/" + std::string(40, 'f') + " is missing (refs/main names it)"});
  write_file(repo() / "snapshots" / std::string(40, 'f'), "a file");
  expect_contains(resolve_error("Org/Name"), {" is not a directory (refs/main names it)"});
  fs::remove(repo() / "blobs" / "bbbb");
  expect_contains(resolve_error("Org/Name@v1"),
                  {kTag + "/config.json links to ../../blobs/bbbb, which is missing",
                   "download Org/Name --revision v1`"});
  fs::remove(repo() / "snapshots" / kPullRequest / "config.json");
  expect_contains(resolve_error("Org/Name@refs/pr/1"),
                  {kPullRequest + " has no config.json (refs/refs/pr/1 names it)"});
  expect_contains(resolve_error("Org/Name@" + std::string(40, 'e')),
                  {"snapshots/" + std::string(40, 'e') + " is missing (the commit given)"});
}

TEST_F(HubCacheTest, AbsurdlyLongNamesGiveShortMessages) {
  for (const std::string& reference : std::vector<std::string>{
           std::string(5000, 'x'), "Org/" + std::string(5000, 'x'),
           "Org/Name@" + std::string(5000, 'v'),
           "Org/Name@" + std::string(200, 'v') + "/" + std::string(300, 'w')}) {
    const std::string message = resolve_error(reference);
    EXPECT_LT(message.size(), 1200u) << message;
    expect_contains(message, {"characters)"});
  }
}

}  // namespace
}  // namespace nss::hf
