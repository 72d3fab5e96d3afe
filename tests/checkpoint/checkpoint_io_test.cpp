// Save, load, verify and resume on one process (LocalCommunicator(1)): every
// dtype, non-finite refusal, corruption anywhere, fallback, pruning.
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sys/file.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "checkpoint/checkpoint_reader.h"
#include "checkpoint/commit.h"
#include "checkpoint/damage.h"
#include "checkpoint/load.h"
#include "checkpoint/rank_file_writer.h"
#include "checkpoint/save.h"
#include "checkpoint/step_directory.h"
#include "checkpoint/verify.h"
#include "comm/agreement.h"
#include "comm/local_communicator.h"
#include "core/fs.h"
#include "core/half.h"
#include "layout/sharded_state_layout.h"
#include "support/test_paths.h"
#include "synthetic_state.h"
#include "test_helpers.h"

namespace nss::checkpoint {
namespace {

namespace fs = std::filesystem;
using testing::RankState;

struct Fixture {
  std::string dir = testing::scratch_dir("ckpt_io");
  comm::LocalCommunicator comm{1};
  testing::SyntheticModel model = testing::synthetic_model();

  SaveRequest request(std::int64_t step) const {
    SaveRequest r;
    r.checkpoint_dir = dir;
    r.step = step;
    r.tensors = model.tensors;
    r.state = {{"step", step}, {"tokens_seen", step * 1000}};
    r.keep_last = 0;
    r.checksum_block_bytes = 256;  // many blocks per chunk even at tiny sizes
    return r;
  }
  SaveResult save(std::int64_t step) {
    RankState state = testing::make_rank_state(model, 0, 1);
    testing::fill_rank_state(state, step);
    return save_checkpoint(comm, request(step), state.buffers);
  }
  ~Fixture() { fs::remove_all(dir); }
};

template <class Fn>
comm::AgreedError agreed_error_of(Fn&& fn) {
  try {
    fn();
  } catch (const comm::AgreedError& e) {
    return e;
  }
  ADD_FAILURE() << "no AgreedError thrown";
  return comm::AgreedError(ExitCode::kOk, "", "", "");
}

// First chunk of `tensor` and the byte offset of its data in its rank file.
std::pair<std::string, std::uint64_t> locate(const std::string& step_dir, const std::string& tensor,
                                             std::uint64_t element) {
  const CheckpointIndex index = read_index(step_dir);
  const ChunkRecord& chunk = index.tensors.at(tensor).chunks.at(0);
  const std::string path = step_dir + "/" + chunk.file;
  return {path,
          testing::dataset_file_offset(path, chunk.dataset) + (chunk.dataset_offset + element) * 4};
}

TEST(CheckpointIo, RoundTripKeepsEveryBitAndThePadding) {
  Fixture f;
  const SaveResult saved = f.save(7);
  EXPECT_EQ(saved.step_dir, step_dir_path(f.dir, 7));
  EXPECT_GT(saved.bytes, 0u);
  EXPECT_EQ(read_latest(f.dir), 7);
  EXPECT_FALSE(fs::exists(saved.step_dir + ".tmp"));

  RankState loaded = testing::make_rank_state(f.model, 0, 1);
  const LoadResult result =
      load_checkpoint(f.comm, saved.step_dir, f.model.tensors, loaded.buffers, LoadOptions{});
  EXPECT_EQ(result.step, 7);
  EXPECT_EQ(result.saved_world_size, 1);
  EXPECT_EQ(result.state["tokens_seen"], 7000);
  EXPECT_EQ(testing::count_mismatches(loaded, 7), 0u);
  EXPECT_TRUE(verify_checkpoint(saved.step_dir).ok());
}

TEST(CheckpointIo, EveryDTypeRoundTrips) {
  Fixture f;
  const DType dtypes[] = {DType::kFloat32, DType::kFloat64, DType::kBFloat16, DType::kFloat16,
                          DType::kInt8,    DType::kUInt8,   DType::kInt16,    DType::kUInt16,
                          DType::kInt32,   DType::kUInt32,  DType::kInt64,    DType::kUInt64};
  std::vector<TensorSpec> tensors;
  std::vector<std::vector<unsigned char>> storage;
  std::vector<ShardBuffer> buffers;
  for (DType d : dtypes) {
    const std::string name = std::string("t.") + dtype_name(d);
    tensors.push_back({name, {3, 67}, d});
    std::vector<unsigned char> bytes(201 * dtype_size(d));
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i * 7 + 1);
    // Keep the floating types finite: clear the top exponent bit of every element.
    if (dtype_is_floating(d))
      for (std::size_t i = dtype_size(d) - 1; i < bytes.size(); i += dtype_size(d))
        bytes[i] &= 0x3f;
    storage.push_back(std::move(bytes));
  }
  for (std::size_t i = 0; i < tensors.size(); ++i)
    buffers.push_back({std::string("/b/") + dtype_name(dtypes[i]),
                       dtypes[i],
                       storage[i].data(),
                       201,
                       {{tensors[i].name, 0, 201, 0}}});
  SaveRequest r = f.request(1);
  r.tensors = tensors;
  save_checkpoint(f.comm, r, buffers);

  CheckpointReader reader(step_dir_path(f.dir, 1));
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    std::vector<unsigned char> back(storage[i].size());
    reader.read(tensors[i].name, 0, 201, back.data());
    EXPECT_EQ(back, storage[i]) << tensors[i].name;
    std::vector<unsigned char> middle(50 * dtype_size(dtypes[i]));
    reader.read(tensors[i].name, 100, 50, middle.data());
    EXPECT_EQ(0, std::memcmp(middle.data(), storage[i].data() + 100 * dtype_size(dtypes[i]),
                             middle.size()));
  }
}

// A matrix stored as column blocks (tensor parallelism's column parts, saved
// by their ranks) reads back row-major and as any other split into column
// blocks, in every range, and streams row-major; the step says version 2.
TEST(CheckpointIo, ColumnBlocksReadAsAnyViewOfTheMatrix) {
  Fixture f;
  constexpr std::int64_t kRows = 37, kColumns = 12;
  std::vector<float> matrix(kRows * kColumns);  // row-major, value = row * 100 + column
  for (std::int64_t r = 0; r < kRows; ++r)
    for (std::int64_t c = 0; c < kColumns; ++c) matrix[r * kColumns + c] = r * 100.0F + c;
  // Stored as 2 blocks of 6 columns: block b's [37, 6] after block b - 1's,
  // written as three pieces from one buffer.
  std::vector<float> stored;
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t r = 0; r < kRows; ++r)
      for (std::int64_t c = 0; c < 6; ++c) stored.push_back(matrix[r * kColumns + b * 6 + c]);
  SaveRequest r = f.request(1);
  r.tensors = {{"w", {kRows, kColumns}, DType::kFloat32, 2}};
  const std::uint64_t n = stored.size();
  save_checkpoint(f.comm, r,
                  {{"/w",
                    DType::kFloat32,
                    stored.data(),
                    n,
                    {{"w", 0, 100, 0}, {"w", 100, 200, 100}, {"w", 300, n - 300, 300}}}});
  CheckpointReader reader(step_dir_path(f.dir, 1));
  EXPECT_EQ(reader.index().tensors.at("w").column_blocks, 2);
  EXPECT_EQ(format_version(reader.index()), 2);
  for (const int blocks : {1, 2, 3, 4, 6, 12}) {
    const std::int64_t width = kColumns / blocks;
    for (int block = 0; block < blocks; ++block) {
      std::vector<float> want;
      for (std::int64_t row = 0; row < kRows; ++row)
        for (std::int64_t c = 0; c < width; ++c)
          want.push_back(matrix[row * kColumns + block * width + c]);
      for (const auto& [offset, count] : std::vector<std::pair<std::int64_t, std::int64_t>>{
               {0, kRows * width}, {5, 1}, {width - 1, 2 * width + 3}, {kRows * width - 7, 7}}) {
        std::vector<float> got(static_cast<std::size_t>(count));
        reader.read("w", static_cast<std::uint64_t>(offset), static_cast<std::uint64_t>(count),
                    got.data(), {blocks, block});
        EXPECT_EQ(got, std::vector<float>(want.begin() + offset, want.begin() + offset + count))
            << blocks << " blocks, block " << block << ", elements " << offset << "+" << count;
      }
    }
  }
  std::vector<float> streamed(matrix.size());
  reader.stream("w", 5 * kColumns * sizeof(float) + 4,
                [&](const void* data, std::uint64_t offset, std::uint64_t count) {
                  std::memcpy(streamed.data() + offset, data, count * sizeof(float));
                });
  EXPECT_EQ(streamed, matrix);
  std::vector<float> one(1);
  EXPECT_THROW(reader.read("w", 0, 1, one.data(), {5, 0}), CheckpointError);
  EXPECT_THROW(reader.read("w", kRows * 6, 1, one.data(), {2, 1}), CheckpointError);
}

TEST(CheckpointIo, NonFiniteValuesAreNeverCommitted) {
  const struct {
    DType dtype;
    std::vector<unsigned char> bad;  // little-endian bytes of one non-finite element
  } cases[] = {{DType::kFloat32, {0, 0, 0x80, 0x7f}},              // +inf
               {DType::kFloat32, {1, 0, 0xc0, 0x7f}},              // NaN
               {DType::kFloat64, {0, 0, 0, 0, 0, 0, 0xf0, 0xff}},  // -inf
               {DType::kBFloat16, {0xc1, 0x7f}},                   // NaN
               {DType::kFloat16, {0x00, 0x7c}}};                   // +inf
  for (const auto& c : cases) {
    Fixture f;
    const std::size_t es = dtype_size(c.dtype);
    std::vector<unsigned char> data(10 * es, 0);
    std::memcpy(data.data() + 6 * es, c.bad.data(), es);
    SaveRequest r = f.request(3);
    r.tensors = {{"w", {10}, c.dtype}};
    const std::vector<ShardBuffer> buffers = {{"/m", c.dtype, data.data(), 10, {{"w", 0, 10, 0}}}};
    const auto e = agreed_error_of([&] { save_checkpoint(f.comm, r, buffers); });
    EXPECT_EQ(e.code(), ExitCode::kCheckpoint) << dtype_name(c.dtype);
    EXPECT_NE(e.message().find("tensor w element 6"), std::string::npos) << e.message();
    EXPECT_TRUE(committed_steps(f.dir).empty());
    EXPECT_FALSE(fs::exists(step_dir_path(f.dir, 3) + ".tmp"));
    EXPECT_FALSE(read_latest(f.dir));
  }
}

TEST(CheckpointIo, ACommittedStepIsNeverOverwritten) {
  Fixture f;
  f.save(5);
  const auto before = fs::last_write_time(step_dir_path(f.dir, 5) + "/metadata.json");
  const auto e = agreed_error_of([&] { f.save(5); });
  EXPECT_EQ(e.code(), ExitCode::kCheckpoint);
  EXPECT_NE(e.message().find("never overwritten"), std::string::npos);
  EXPECT_EQ(before, fs::last_write_time(step_dir_path(f.dir, 5) + "/metadata.json"));
  EXPECT_TRUE(verify_checkpoint(step_dir_path(f.dir, 5)).ok());
}

TEST(CheckpointIo, LeftoversAreClearedAndKeepLastPrunesOldestNeverNewest) {
  Fixture f;
  fs::create_directories(step_dir_path(f.dir, 1) + ".tmp");
  std::ofstream(step_dir_path(f.dir, 1) + ".tmp/rank_00000.h5") << "partial";
  fs::create_directories(step_dir_path(f.dir, 0) + ".old");
  for (std::int64_t step : {10, 20, 30, 40}) {
    RankState state = testing::make_rank_state(f.model, 0, 1);
    testing::fill_rank_state(state, step);
    SaveRequest r = f.request(step);
    r.keep_last = 2;
    save_checkpoint(f.comm, r, state.buffers);
  }
  EXPECT_EQ(committed_steps(f.dir), (std::vector<std::int64_t>{40, 30}));
  EXPECT_TRUE(leftover_dirs(f.dir).empty());
  EXPECT_EQ(read_latest(f.dir), 40);

  // keep_last = 1 with a higher-numbered step present still keeps the step just saved.
  RankState state = testing::make_rank_state(f.model, 0, 1);
  testing::fill_rank_state(state, 35);
  SaveRequest r = f.request(35);
  r.keep_last = 1;
  save_checkpoint(f.comm, r, state.buffers);
  EXPECT_EQ(committed_steps(f.dir), (std::vector<std::int64_t>{40, 35}));
}

TEST(CheckpointIo, ReaderVerifiesEveryBlockItTouchesAndOnlyThose) {
  Fixture f;
  f.save(2);
  const std::string step_dir = step_dir_path(f.dir, 2);
  const std::string tensor = "model.embed_tokens.weight";     // 592 floats, 256-byte blocks
  const auto [path, offset] = locate(step_dir, tensor, 200);  // block 3 of the chunk
  testing::flip_byte(path, offset);

  CheckpointReader reader(step_dir);
  std::vector<float> out(592);
  reader.read(tensor, 0, 192, out.data());  // blocks 0-2: fine
  for (std::uint64_t i = 0; i < 192; ++i) EXPECT_EQ(out[i], testing::expected_value(tensor, i, 2));
  reader.read(tensor, 256, 100, out.data());  // blocks 4-5: fine
  try {
    reader.read(tensor, 199, 2, out.data());  // touches block 3 only partly: still verified
    FAIL();
  } catch (const CheckpointError& e) {
    const std::string what = e.message();
    EXPECT_NE(what.find("rank_00000.h5 dataset /model/unit_000 (tensor " + tensor),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("block 3 (bytes [768, 1024) of the chunk)"), std::string::npos) << what;
  }
  const VerifyReport report = verify_checkpoint(step_dir);
  ASSERT_EQ(report.problems.size(), 1u);
  EXPECT_NE(report.problems[0].find("block 3"), std::string::npos);
  EXPECT_NE(report.problems[0].find(tensor), std::string::npos);
}

TEST(CheckpointIo, ShapeOrDTypeMismatchIsACheckpointError) {
  Fixture f;
  f.save(1);
  testing::SyntheticShape wider;
  wider.hidden = 24;
  const auto other = testing::synthetic_model(wider);
  RankState state = testing::make_rank_state(other, 0, 1);
  const auto e = agreed_error_of([&] {
    load_checkpoint(f.comm, step_dir_path(f.dir, 1), other.tensors, state.buffers, LoadOptions{});
  });
  EXPECT_EQ(e.code(), ExitCode::kCheckpoint);
  EXPECT_NE(e.message().find("model.embed_tokens.weight is [37, 16] float32, this run expects "
                             "[37, 24] float32"),
            std::string::npos)
      << e.message();
}

TEST(CheckpointIo, LoadOptimizerFalseLeavesOptimizerPiecesAlone) {
  Fixture f;
  f.save(4);
  RankState state = testing::make_rank_state(f.model, 0, 1);
  testing::set_pieces(state, 0.5f);
  LoadOptions options;
  options.load_optimizer = false;
  load_checkpoint(f.comm, step_dir_path(f.dir, 4), f.model.tensors, state.buffers, options);
  EXPECT_EQ(testing::count_mismatches(state, 4, /*optimizer=*/false), 0u);
  for (const auto& buffer : state.buffers)
    for (const auto& piece : buffer.pieces) {
      if (layout::is_optimizer_state(piece.tensor)) {
        EXPECT_EQ(static_cast<const float*>(buffer.data)[piece.buffer_offset], 0.5f);
      }
    }

  // A model-only checkpoint loads with load_optimizer false, and says what to do otherwise.
  Fixture g;
  const auto model_only = testing::synthetic_model({}, /*with_optimizer=*/false);
  RankState small = testing::make_rank_state(model_only, 0, 1, false);
  testing::fill_rank_state(small, 9);
  SaveRequest r = g.request(9);
  r.tensors = model_only.tensors;
  save_checkpoint(g.comm, r, small.buffers);
  RankState full = testing::make_rank_state(g.model, 0, 1);
  load_checkpoint(g.comm, step_dir_path(g.dir, 9), g.model.tensors, full.buffers, options);
  EXPECT_EQ(testing::count_mismatches(full, 9, false), 0u);
  const auto e = agreed_error_of([&] {
    load_checkpoint(g.comm, step_dir_path(g.dir, 9), g.model.tensors, full.buffers, LoadOptions{});
  });
  EXPECT_NE(e.hint().find("checkpoint.load_optimizer: false"), std::string::npos);
}

// Damage done to the newest of three steps; resume must land on the previous one.
void expect_fallback(const std::function<void(const std::string& step_dir)>& damage,
                     const std::string& reason) {
  Fixture f;
  for (std::int64_t step : {1, 2, 3}) f.save(step);
  damage(step_dir_path(f.dir, 3));
  RankState state = testing::make_rank_state(f.model, 0, 1);
  const auto result =
      resume_checkpoint(f.comm, f.dir, "auto", f.model.tensors, state.buffers, LoadOptions{});
  ASSERT_TRUE(result);
  EXPECT_EQ(result->step, 2);
  ASSERT_EQ(result->rejected_steps.size(), 1u);
  EXPECT_NE(result->rejected_steps[0].find(reason), std::string::npos) << result->rejected_steps[0];
  EXPECT_EQ(testing::count_mismatches(state, 2), 0u);
  EXPECT_FALSE(verify_checkpoint(step_dir_path(f.dir, 3)).ok());
}

TEST(CheckpointIo, ResumeFallsBackPastAFlippedByte) {
  expect_fallback(
      [](const std::string& step_dir) {
        const auto [path, offset] = locate(step_dir, "model.layers.1.mlp.up_proj.weight", 300);
        testing::flip_byte(path, offset);
      },
      "checksum mismatch");
}

TEST(CheckpointIo, ResumeFallsBackPastAMissingRankFile) {
  expect_fallback([](const std::string& step_dir) { fs::remove(step_dir + "/rank_00000.h5"); },
                  "rank_00000.h5 is missing");
}

TEST(CheckpointIo, ResumeFallsBackPastATruncatedRankFile) {
  expect_fallback(
      [](const std::string& step_dir) {
        const std::string path = step_dir + "/rank_00000.h5";
        testing::truncate_file(path, fs::file_size(path) - 100);
      },
      "bytes, metadata.json records");
}

TEST(CheckpointIo, ResumeFallsBackPastATruncatedIndex) {
  expect_fallback(
      [](const std::string& step_dir) {
        const std::string path = step_dir + "/metadata.json";
        testing::truncate_file(path, fs::file_size(path) / 2);
      },
      "is not valid JSON");
}

// A step whose training state the caller refuses ends the resume at once,
// on every rank, before any buffer changes: older steps of the run are not
// tried. A state the caller cannot read is damage, passed like any other.
TEST(CheckpointIo, ARefusedStateEndsTheResumeWithoutFallback) {
  Fixture f;
  for (std::int64_t step : {1, 2}) f.save(step);
  RankState state = testing::make_rank_state(f.model, 0, 1);
  testing::fill_rank_state(state, 7);
  LoadOptions options;
  std::vector<std::int64_t> asked;
  options.accept_state = [&](const nlohmann::json& saved,
                             const std::string& step_dir) -> std::optional<Refusal> {
    asked.push_back(saved.at("step").get<std::int64_t>());
    return Refusal{step_dir + " belongs to another configuration", "start fresh"};
  };
  try {
    resume_checkpoint(f.comm, f.dir, "auto", f.model.tensors, state.buffers, options);
    FAIL() << "the refused step was loaded";
  } catch (const IncompatibleCheckpoint& e) {
    EXPECT_EQ(e.code(), ExitCode::kCheckpoint);
    EXPECT_NE(e.message().find("belongs to another configuration"), std::string::npos);
  }
  EXPECT_EQ(asked, std::vector<std::int64_t>{2});
  EXPECT_EQ(testing::count_mismatches(state, 7), 0u);

  options.accept_state = [&](const nlohmann::json&, const std::string&) -> std::optional<Refusal> {
    return std::nullopt;
  };
  auto result = resume_checkpoint(f.comm, f.dir, "auto", f.model.tensors, state.buffers, options);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->step, 2);

  // A state that cannot be read is damage: the resume falls back past it.
  options.accept_state = [&](const nlohmann::json& saved,
                             const std::string&) -> std::optional<Refusal> {
    if (saved.at("step") == 2) throw CheckpointError("test", "the state lacks a field");
    return std::nullopt;
  };
  result = resume_checkpoint(f.comm, f.dir, "auto", f.model.tensors, state.buffers, options);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->step, 1);
  ASSERT_EQ(result->rejected_steps.size(), 1u);
  EXPECT_NE(result->rejected_steps[0].find("lacks a field"), std::string::npos);
  EXPECT_TRUE(result->damaged_steps.empty()) << "a plain CheckpointError is not damage";
  options.accept_state = [&](const nlohmann::json& saved,
                             const std::string&) -> std::optional<Refusal> {
    if (saved.at("step") == 2) throw CheckpointDamage("test", "the state lacks a field");
    return std::nullopt;
  };
  result = resume_checkpoint(f.comm, f.dir, "auto", f.model.tensors, state.buffers, options);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->damaged_steps, std::vector<std::int64_t>{2});
}

// Damage (the files contradict their record) is told apart from a failure to
// read, which may be transient: only damage may be set aside.
TEST(CheckpointIo, ResumeTellsDamageFromUnreadableSteps) {
  Fixture f;
  for (std::int64_t step : {1, 2, 3}) f.save(step);
  RankState state = testing::make_rank_state(f.model, 0, 1);
  const std::string rank_file = step_dir_path(f.dir, 3) + "/rank_00000.h5";
  {  // a flipped byte in the data: a checksum mismatch
    std::fstream file(rank_file, std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(0, std::ios::end);
    const auto middle = static_cast<std::streamoff>(file.tellg()) / 2;
    char byte = 0;
    file.seekg(middle);
    file.read(&byte, 1);
    byte = static_cast<char>(byte ^ 0xFF);
    file.seekp(middle);
    file.write(&byte, 1);
  }
  {  // metadata.json naming another step
    const std::string index = step_dir_path(f.dir, 2) + "/metadata.json";
    std::string text = read_text_file(index, "test");
    const auto at = text.rfind("\"step\": 2");  // the top level, after "state"
    ASSERT_NE(at, std::string::npos);
    text.replace(at, std::strlen("\"step\": 2"), "\"step\": 7");
    std::ofstream(index) << text;
  }
  auto result = resume_checkpoint(f.comm, f.dir, "auto", f.model.tensors, state.buffers, {});
  ASSERT_TRUE(result);
  EXPECT_EQ(result->step, 1);
  EXPECT_EQ(result->damaged_steps, (std::vector<std::int64_t>{3, 2}));
  EXPECT_NE(result->rejected_steps[1].find("records step 7, but its directory is named for step 2"),
            std::string::npos)
      << result->rejected_steps[1];
  // A step the resume cannot open (a lock another process holds) is skipped, not damaged.
  f.save(4);
  const int held = ::open((step_dir_path(f.dir, 4) + "/rank_00000.h5").c_str(), O_RDONLY);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_EX), 0);
  result = resume_checkpoint(f.comm, f.dir, "auto", f.model.tensors, state.buffers, {});
  ::close(held);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->step, 1);
  EXPECT_EQ(result->damaged_steps, (std::vector<std::int64_t>{3, 2}));
  EXPECT_EQ(result->rejected_steps.size(), 3u);
}

TEST(CheckpointIo, ResumeModes) {
  Fixture f;
  RankState state = testing::make_rank_state(f.model, 0, 1);
  EXPECT_FALSE(resume_checkpoint(f.comm, f.dir, "auto", f.model.tensors, state.buffers, {}));
  EXPECT_FALSE(
      resume_checkpoint(f.comm, f.dir + "/absent", "auto", f.model.tensors, state.buffers, {}));
  f.save(1);
  f.save(2);
  EXPECT_FALSE(resume_checkpoint(f.comm, f.dir, "never", f.model.tensors, state.buffers, {}));
  // An explicit step directory loads that step (no fallback), a checkpoint directory resolves.
  auto result =
      resume_checkpoint(f.comm, f.dir, step_dir_path(f.dir, 1), f.model.tensors, state.buffers, {});
  ASSERT_TRUE(result);
  EXPECT_EQ(result->step, 1);
  result = resume_checkpoint(f.comm, "unused", f.dir, f.model.tensors, state.buffers, {});
  ASSERT_TRUE(result);
  EXPECT_EQ(result->step, 2);
  EXPECT_EQ(testing::count_mismatches(state, 2), 0u);

  auto e = agreed_error_of([&] {
    resume_checkpoint(f.comm, f.dir, f.dir + "/nowhere", f.model.tensors, state.buffers, {});
  });
  EXPECT_EQ(e.code(), ExitCode::kCheckpoint);
  EXPECT_NE(e.message().find("does not exist"), std::string::npos);

  // Every step damaged: exit 5 listing each reason.
  for (std::int64_t step : {1, 2}) fs::remove(step_dir_path(f.dir, step) + "/rank_00000.h5");
  e = agreed_error_of(
      [&] { resume_checkpoint(f.comm, f.dir, "auto", f.model.tensors, state.buffers, {}); });
  EXPECT_EQ(e.code(), ExitCode::kCheckpoint);
  EXPECT_NE(e.message().find("no committed step in " + f.dir + " can be loaded"),
            std::string::npos);
  EXPECT_NE(e.message().find("step_00000002: "), std::string::npos);
  EXPECT_NE(e.message().find("step_00000001: "), std::string::npos);
  EXPECT_NE(e.hint().find("nss_ckpt verify"), std::string::npos);
  EXPECT_EQ(e.hint().find("remove"), std::string::npos) << "advice that could delete good steps";
}

TEST(CheckpointIo, ADirectoryWithoutIndexIsNeverLoaded) {
  Fixture f;
  f.save(1);
  f.save(2);
  fs::remove(step_dir_path(f.dir, 2) + "/metadata.json");  // looks like an uncommitted step
  RankState state = testing::make_rank_state(f.model, 0, 1);
  const auto result = resume_checkpoint(f.comm, f.dir, "auto", f.model.tensors, state.buffers, {});
  ASSERT_TRUE(result);
  EXPECT_EQ(result->step, 1);
  EXPECT_TRUE(result->rejected_steps.empty());
}

}  // namespace
}  // namespace nss::checkpoint
