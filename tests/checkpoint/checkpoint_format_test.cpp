// The pieces of the format on their own: block checksums, metadata.json
// parsing and coverage, layout validation, step directory naming.
#include <filesystem>
#include <fstream>
#include <numeric>

#include <gtest/gtest.h>

#include "checkpoint/checksum.h"
#include "checkpoint/index.h"
#include "checkpoint/layout.h"
#include "checkpoint/step_directory.h"
#include "core/error.h"
#include "support/test_paths.h"

namespace nss::checkpoint {
namespace {

namespace fs = std::filesystem;

std::vector<char> pattern(std::size_t bytes) {
  std::vector<char> data(bytes);
  for (std::size_t i = 0; i < bytes; ++i) data[i] = static_cast<char>(i * 131 + (i >> 7));
  return data;
}

template <class Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Checksum, StreamedInAnyPiecesEqualsPerBlockDigests) {
  const auto data = pattern(1000);
  for (std::size_t step : {1u, 7u, 64u, 333u, 1000u}) {
    BlockChecksummer checksummer(128);
    for (std::size_t at = 0; at < data.size(); at += step)
      checksummer.update(data.data() + at, std::min(step, data.size() - at));
    const auto digests = checksummer.finish();
    ASSERT_EQ(digests.size(), 8u);  // 7 full blocks and a 104-byte tail
    for (std::size_t b = 0; b < 8; ++b)
      EXPECT_EQ(digests[b], checksum_hex(xxh3_64(data.data() + b * 128,
                                                 std::min<std::size_t>(128, 1000 - b * 128))));
  }
  EXPECT_EQ(checksum_block_count(1000, 128), 8u);
  EXPECT_EQ(checksum_block_count(1024, 128), 8u);
  EXPECT_EQ(checksum_hex(0x9f0c1e2d3b4a5968ull), "9f0c1e2d3b4a5968");
}

TEST(Checksum, VerifierNamesTheBadBlock) {
  auto data = pattern(1000);
  BlockChecksummer checksummer(128);
  checksummer.update(data.data(), data.size());
  const auto digests = checksummer.finish();
  {
    BlockVerifier verifier(128, 1000, digests, 0, "good");
    for (std::size_t at = 0; at < data.size(); at += 50)
      verifier.update(data.data() + at, std::min<std::size_t>(50, data.size() - at));
    EXPECT_TRUE(verifier.at_block_boundary());
  }
  data[3 * 128 + 5] ^= 1;
  const std::string error = error_of([&] {
    BlockVerifier verifier(128, 1000, digests, 0, "rank_00000.h5 /x");
    verifier.update(data.data(), data.size());
  });
  EXPECT_NE(error.find("checksum mismatch in rank_00000.h5 /x, block 3 (bytes [384, 512)"),
            std::string::npos)
      << error;
}

CheckpointIndex sample_index() {
  CheckpointIndex index;
  index.step = 100;
  index.world_size = 2;
  index.checksum_block_bytes = 64;
  index.state = {{"tokens_seen", 12345}, {"data", {{"epoch", 1}, {"cursor", 77}, {"seed", 3}}}};
  TensorRecord t{{4, 10}, DType::kFloat32, {}};
  t.chunks.push_back(
      {"rank_00000.h5", "/model/unit_000", 0, 0, 25, {"0000000000000001", "0000000000000002"}});
  t.chunks.push_back({"rank_00001.h5", "/model/unit_000", 3, 25, 15, {"0000000000000003"}});
  index.tensors["model.norm.weight"] = t;
  index.file_bytes = {{"rank_00000.h5", 4000}, {"rank_00001.h5", 4100}};
  return index;
}

TEST(Index, RoundTripsThroughMetadataJson) {
  const CheckpointIndex index = sample_index();
  const std::string text = index_to_text(index);
  const auto doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc["format"], "nss-dcp");
  EXPECT_EQ(doc["version"], 1);
  EXPECT_EQ(doc["checksum"], "xxh3_64");
  EXPECT_EQ(doc["files"]["rank_00001.h5"]["bytes"], 4100);
  const auto& chunk = doc["tensors"]["model.norm.weight"]["chunks"][1];
  EXPECT_EQ(chunk["dataset_offset"], 3);
  EXPECT_EQ(chunk["tensor_offset"], 25);
  EXPECT_EQ(chunk["length"], 15);

  const CheckpointIndex back = parse_index(text, "test");
  EXPECT_EQ(back.step, 100);
  EXPECT_EQ(back.world_size, 2);
  EXPECT_EQ(back.checksum_block_bytes, 64u);
  EXPECT_EQ(back.state, index.state);
  EXPECT_EQ(back.file_bytes, index.file_bytes);
  const auto& t = back.tensors.at("model.norm.weight");
  EXPECT_EQ(t.shape, (std::vector<std::int64_t>{4, 10}));
  ASSERT_EQ(t.chunks.size(), 2u);
  EXPECT_EQ(t.chunks[1].checksums, (std::vector<std::string>{"0000000000000003"}));
  EXPECT_TRUE(coverage_problems(back).empty());
}

TEST(Index, RejectsDamagedOrForeignMetadataNamingTheField) {
  const std::string text = index_to_text(sample_index());
  EXPECT_NE(error_of([&] {
              parse_index(text.substr(0, text.size() / 2), "m.json");
            }).find("m.json is not valid JSON"),
            std::string::npos);
  auto doc = nlohmann::json::parse(text);
  doc["version"] = 3;
  EXPECT_NE(error_of([&] { parse_index(doc.dump(), "m.json"); }).find("format version 3"),
            std::string::npos);
  // Version 2 adds column blocks, which must divide a matrix's columns.
  doc = nlohmann::json::parse(text);
  doc["version"] = 2;
  doc["tensors"]["model.norm.weight"]["column_blocks"] = 2;
  EXPECT_EQ(parse_index(doc.dump(), "m.json").tensors.at("model.norm.weight").column_blocks, 2);
  doc["tensors"]["model.norm.weight"]["column_blocks"] = 3;
  EXPECT_NE(error_of([&] {
              parse_index(doc.dump(), "m.json");
            }).find("tensors.model.norm.weight.column_blocks"),
            std::string::npos);
  doc = nlohmann::json::parse(text);
  doc["tensors"]["model.norm.weight"]["chunks"][0].erase("length");
  EXPECT_NE(error_of([&] {
              parse_index(doc.dump(), "m.json");
            }).find("field 'tensors.model.norm.weight.chunks[0].length' is missing"),
            std::string::npos);
  doc = nlohmann::json::parse(text);
  doc["tensors"]["model.norm.weight"]["chunks"][0]["file"] = "../evil.h5";
  EXPECT_NE(error_of([&] { parse_index(doc.dump(), "m.json"); }).find("plain file name"),
            std::string::npos);
  doc = nlohmann::json::parse(text);
  doc["files"].erase("rank_00001.h5");
  EXPECT_NE(
      error_of([&] { parse_index(doc.dump(), "m.json"); }).find("which 'files' does not list"),
      std::string::npos);
  // Every one of these is a checkpoint error (exit 5), never a crash.
  try {
    parse_index("{", "m.json");
    FAIL();
  } catch (const CheckpointError& e) {
    EXPECT_EQ(e.code(), ExitCode::kCheckpoint);
  }
}

TEST(Index, CoverageFindsGapsOverlapsAndChecksumCounts) {
  CheckpointIndex index = sample_index();
  auto& chunks = index.tensors["model.norm.weight"].chunks;
  chunks[1].tensor_offset = 26;
  chunks[1].length = 14;
  auto problems = coverage_problems(index);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("elements [25, 26) are in no chunk"), std::string::npos);

  index = sample_index();
  index.tensors["model.norm.weight"].chunks[1].tensor_offset = 24;
  problems = coverage_problems(index);
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems[0].find("overlaps"), std::string::npos);

  index = sample_index();
  index.tensors["model.norm.weight"].chunks[0].checksums.pop_back();
  problems = coverage_problems(index);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("has 1 checksums, its size needs 2"), std::string::npos);

  index = sample_index();
  index.tensors["model.norm.weight"].chunks.pop_back();
  problems = coverage_problems(index);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("elements [25, 40) are in no chunk"), std::string::npos);
}

TEST(Layout, ValidationNamesTheBadPiece) {
  const std::vector<TensorSpec> tensors = {
      {"a", {10}, DType::kFloat32}, {"b", {4, 4}, DType::kFloat32}, {"c", {3}, DType::kBFloat16}};
  std::vector<float> storage(32);
  auto buffers = [&](std::vector<Piece> pieces) {
    return std::vector<ShardBuffer>{
        {"/model/unit_000", DType::kFloat32, storage.data(), 32, std::move(pieces)}};
  };
  EXPECT_NO_THROW(validate_layout(tensors, buffers({{"a", 0, 10, 0}, {"b", 0, 16, 10}})));
  const auto check = [&](std::vector<Piece> pieces, const std::string& expected) {
    const std::string error = error_of([&] { validate_layout(tensors, buffers(pieces)); });
    EXPECT_NE(error.find(expected), std::string::npos) << error;
  };
  check({{"z", 0, 1, 0}}, "unknown tensor");
  check({{"c", 0, 3, 0}}, "tensor dtype bfloat16 differs from the buffer's float32");
  check({{"b", 0, 16, 20}}, "beyond the buffer's 32 elements");
  check({{"a", 5, 6, 0}}, "beyond the tensor's 10 elements");
  check({{"a", 0, 5, 0}, {"b", 0, 5, 4}}, "overlapping pieces at element 4");
  check({{"a", 0, 5, 0}, {"a", 4, 2, 10}}, "tensor a is held twice by this rank at element 4");
  check({{"a", 0, 0, 0}}, "empty piece");

  std::vector<ShardBuffer> twice = buffers({{"a", 0, 5, 0}});
  twice.push_back(twice[0]);
  twice[1].pieces = {{"a", 5, 5, 0}};
  EXPECT_NE(error_of([&] { validate_layout(tensors, twice); }).find("used by two buffers"),
            std::string::npos);
  EXPECT_EQ(piece_bytes(buffers({{"a", 0, 10, 0}, {"b", 0, 6, 10}})), 64u);
  EXPECT_NE(tensor_list_fingerprint(tensors), tensor_list_fingerprint({tensors[0], tensors[1]}));
}

TEST(StepDirectory, NamesListingLatestAndLeftovers) {
  EXPECT_EQ(step_dir_name(100), "step_00000100");
  EXPECT_EQ(rank_file_name(3), "rank_00003.h5");
  EXPECT_EQ(parse_step_dir_name("step_00000100"), 100);
  EXPECT_FALSE(parse_step_dir_name("step_00000100.tmp"));
  EXPECT_FALSE(parse_step_dir_name("latest"));

  const std::string dir = testing::scratch_dir("stepdir");
  for (const char* name : {"step_00000010", "step_00000030", "step_00000020", "step_00000040.tmp",
                           "step_00000005.old", "step_00000050"})
    fs::create_directories(fs::path(dir) / name);
  for (const char* name : {"step_00000010", "step_00000030", "step_00000020", "step_00000040.tmp"})
    std::ofstream(fs::path(dir) / name / "metadata.json") << "{}";
  // step_00000050 has no metadata.json: never committed.
  EXPECT_EQ(committed_steps(dir), (std::vector<std::int64_t>{30, 20, 10}));
  EXPECT_FALSE(read_latest(dir));
  write_latest(dir, 30);
  EXPECT_EQ(read_latest(dir), 30);
  const auto leftovers = leftover_dirs(dir);
  ASSERT_EQ(leftovers.size(), 2u);
  EXPECT_NE(leftovers[0].find("step_00000005.old"), std::string::npos);
  EXPECT_NE(leftovers[1].find("step_00000040.tmp"), std::string::npos);
  EXPECT_EQ(step_tmp_path(dir, 40), leftovers[1]);
  EXPECT_EQ(step_pruned_path(dir, 5), leftovers[0]);
  EXPECT_TRUE(is_step_directory(step_dir_path(dir, 30)));
  EXPECT_FALSE(is_step_directory(step_dir_path(dir, 50)));  // no metadata.json
  EXPECT_FALSE(is_step_directory(step_dir_path(dir, 30) + "/metadata.json"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace nss::checkpoint
