// safetensors: writer -> reader round trips, slice reads, conversions, and
// every malformed-file error the reader must report (DataError, exit 4).
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/half.h"
#include "hf/safetensors_file.h"
#include "hf/safetensors_writer.h"
#include "support/test_paths.h"

namespace nss::hf {
namespace {

std::vector<float> iota_values(std::int64_t n, float scale = 0.25f) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(i) - 3.0f;
  return v;
}

SafetensorsTensor declare(const std::string& name, DType dtype, std::vector<std::int64_t> shape) {
  SafetensorsTensor t;
  t.name = name;
  t.dtype = dtype;
  t.shape = std::move(shape);
  return t;
}

// A file made of a given header text and data bytes, for malformed inputs.
std::string raw_file(const std::string& dir, const std::string& header, std::size_t data_bytes,
                     std::uint64_t declared_length = UINT64_MAX) {
  const std::string path = dir + "/raw.safetensors";
  std::ofstream out(path, std::ios::binary);
  const std::uint64_t length = declared_length == UINT64_MAX ? header.size() : declared_length;
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((length >> (8 * i)) & 0xff));
  out << header << std::string(data_bytes, '\0');
  return path;
}

// Expects DataError naming `path` and containing `problem`.
void expect_data_error(const std::string& path, const std::string& problem) {
  try {
    SafetensorsFile::open(path);
    FAIL() << "no error for " << problem;
  } catch (const DataError& e) {
    EXPECT_NE(e.message().find(path), std::string::npos) << e.what();
    EXPECT_NE(e.message().find(problem), std::string::npos) << e.what();
  }
}

TEST(Safetensors, RoundTripWithSlicesAndConversions) {
  const std::string dir = testing::scratch_dir("st_roundtrip");
  const std::string path = dir + "/w.safetensors";
  const auto a = iota_values(5 * 7);
  const auto b = iota_values(3 * 4, 0.5f);
  const auto c = iota_values(9, 0.125f);
  {
    SafetensorsWriter writer(
        path, {declare("b16", DType::kBFloat16, {3, 4}), declare("f32", DType::kFloat32, {5, 7}),
               declare("f16", DType::kFloat16, {9})});
    // Out of order and piece by piece.
    writer.write("f32", 20, 15, a.data() + 20, DType::kFloat32);
    writer.write("b16", 0, 12, b.data(), DType::kFloat32);
    writer.write("f16", 4, 5, c.data() + 4, DType::kFloat32);
    writer.write("f32", 0, 20, a.data(), DType::kFloat32);
    writer.write("f16", 0, 4, c.data(), DType::kFloat32);
    EXPECT_FALSE(std::filesystem::exists(path));
    writer.commit();
  }
  ASSERT_TRUE(std::filesystem::exists(path));
  const auto file = SafetensorsFile::open(path);
  EXPECT_EQ(file->metadata().at("format"), "pt");
  ASSERT_EQ(file->tensors().size(), 3u);
  for (const auto& t : file->tensors())
    EXPECT_EQ(t.begin % dtype_size(t.dtype), 0u) << t.name << " is unaligned";
  EXPECT_EQ(file->tensor("f32").shape, (std::vector<std::int64_t>{5, 7}));

  std::vector<float> whole(35), part(11);
  file->read_float32("f32", 0, 35, whole.data());
  EXPECT_EQ(whole, a);
  file->read_float32("f32", 13, 11, part.data());
  EXPECT_TRUE(std::equal(part.begin(), part.end(), a.begin() + 13));

  std::vector<float> b_back(12), c_back(9);
  file->read_float32("b16", 0, 12, b_back.data());
  file->read_float32("f16", 0, 9, c_back.data());
  for (int i = 0; i < 12; ++i) EXPECT_EQ(b_back[i], bf16_to_float(float_to_bf16(b[i])));
  for (int i = 0; i < 9; ++i) EXPECT_EQ(c_back[i], f16_to_float(float_to_f16(c[i])));

  // The data section starts 8-byte aligned, like the reference writer's.
  std::ifstream in(path, std::ios::binary);
  std::uint64_t length = 0;
  in.read(reinterpret_cast<char*>(&length), 8);
  EXPECT_EQ(length % 8, 0u);
}

TEST(Safetensors, WriterRejectsIncompleteAndRepeatedWritesAndLeavesNoFile) {
  const std::string dir = testing::scratch_dir("st_incomplete");
  const std::string path = dir + "/w.safetensors";
  const auto v = iota_values(10);
  {
    SafetensorsWriter writer(path, {declare("x", DType::kFloat32, {10})});
    writer.write("x", 0, 6, v.data(), DType::kFloat32);
    EXPECT_THROW(writer.write("x", 5, 2, v.data(), DType::kFloat32), InternalError);
    EXPECT_THROW(writer.write("x", 8, 4, v.data(), DType::kFloat32), InternalError);
    EXPECT_THROW(writer.write("y", 0, 1, v.data(), DType::kFloat32), InternalError);
    EXPECT_THROW(writer.commit(), InternalError);
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(std::filesystem::is_empty(dir)) << "temporary file left behind";
}

TEST(Safetensors, IntegerTensorsAreStoredButNotReadAsWeights) {
  const std::string dir = testing::scratch_dir("st_int");
  const std::string path = dir + "/w.safetensors";
  const std::vector<std::int64_t> ids = {1, 2, 3};
  {
    SafetensorsWriter writer(path, {declare("ids", DType::kInt64, {3})});
    writer.write("ids", 0, 3, ids.data(), DType::kInt64);
    writer.commit();
  }
  const auto file = SafetensorsFile::open(path);
  std::int64_t back[3];
  std::memcpy(back, file->bytes(file->tensor("ids")), sizeof back);
  EXPECT_EQ(back[2], 3);
  float out[3];
  EXPECT_THROW(file->read_float32("ids", 0, 3, out), DataError);
  EXPECT_THROW(file->tensor("missing"), DataError);
  EXPECT_THROW(file->read_float32("ids", 2, 2, out), InternalError);
}

TEST(SafetensorsErrors, MissingEmptyAndNonRegularFiles) {
  const std::string dir = testing::scratch_dir("st_missing");
  expect_data_error(dir + "/absent.safetensors", "No such file");
  expect_data_error(dir, "not a regular file");
  std::ofstream(dir + "/empty.safetensors").close();
  expect_data_error(dir + "/empty.safetensors", "truncated");
}

TEST(SafetensorsErrors, HeaderLength) {
  const std::string dir = testing::scratch_dir("st_header_len");
  {
    const std::string path = dir + "/short.safetensors";
    std::ofstream(path, std::ios::binary) << "abc";
    expect_data_error(path, "truncated");
  }
  expect_data_error(raw_file(dir, "{}", 0, 1000), "truncated: the header claims 1000");
  expect_data_error(raw_file(dir, "{}", 0, std::uint64_t{1} << 40), "exceeds the limit");
  expect_data_error(raw_file(dir, "{\"a\": ", 0), "not valid JSON");
  expect_data_error(raw_file(dir, "[1, 2]", 0), "must be a JSON object");
}

TEST(SafetensorsErrors, TensorEntries) {
  const std::string dir = testing::scratch_dir("st_entries");
  expect_data_error(
      raw_file(dir, R"({"w": {"dtype": "Q4", "shape": [2], "data_offsets": [0, 2]}})", 2),
      "unsupported dtype 'Q4'");
  expect_data_error(
      raw_file(dir, R"({"w": {"dtype": "F32", "shape": [2, -1], "data_offsets": [0, 8]}})", 8),
      "shape entries must be non-negative integers");
  expect_data_error(raw_file(dir, R"({"w": {"dtype": "F32", "data_offsets": [0, 8]}})", 8),
                    "missing or non-array \"shape\"");
  expect_data_error(raw_file(dir, R"({"w": {"dtype": "F32", "shape": [2]}})", 8),
                    "\"data_offsets\" must be [begin, end]");
  expect_data_error(
      raw_file(dir, R"({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})", 8),
      "needs 12 bytes but data_offsets span 8");
  expect_data_error(
      raw_file(dir, R"({"w": {"dtype": "F32", "shape": [0], "data_offsets": [8, 0]}})", 8),
      "end before they begin");
  expect_data_error(
      raw_file(dir, R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [-4, 4]}})", 8),
      "non-negative integers");
  expect_data_error(raw_file(dir, R"({"__metadata__": {"format": 1}})", 0),
                    "entry 'format' must be a string");
}

TEST(SafetensorsErrors, DataLayout) {
  const std::string dir = testing::scratch_dir("st_layout");
  expect_data_error(
      raw_file(dir, R"({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})", 8),
      "truncated or offsets out of range: tensor 'w' ends at data byte 16");
  expect_data_error(raw_file(dir, R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                      "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
                             12),
                    "overlap");
  expect_data_error(raw_file(dir, R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                                      "b": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]}})",
                             12),
                    "belong to no tensor");
  expect_data_error(
      raw_file(dir, R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})", 12),
      "trailing bytes");
  expect_data_error(raw_file(dir, R"({"a": {"dtype": "BF16", "shape": [1], "data_offsets": [0, 2]},
                                      "b": {"dtype": "F32", "shape": [1], "data_offsets": [2, 6]}})",
                             6),
                    "unaligned");
}

}  // namespace
}  // namespace nss::hf
