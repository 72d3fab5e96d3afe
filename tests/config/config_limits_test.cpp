// The limits of a configuration: every number key's range (taken from the
// schema itself, not a hand-written list), the bounded products of several
// keys, the checked arithmetic behind them, and the configuration file's own
// shape (a regular file with keys, none of them twice).
#include <chrono>
#include <functional>
#include <limits>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include "config/checked_product.h"
#include "config/derived.h"
#include "config/key_catalog.h"
#include "config/load.h"
#include "config/size_checks.h"
#include "config/value_codec.h"
#include "core/error.h"
#include "core/fs.h"
#include "support/test_paths.h"

namespace nss::config {
namespace {

// The UsageError text of `fn`, or "" (with a failure) when it throws none.
std::string usage_error(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no UsageError thrown";
  return "";
}

Config parse(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return parse_config_text(yaml, "test.yaml", overrides);
}

// A number key of the schema: how to write a value of it, and values just
// outside its range (each as --set text and as the message spells it).
struct NumberKey {
  std::string path, range;
  std::vector<std::pair<std::string, std::string>> outside;  // {--set text, message text}
  std::function<bool()> default_in_range;
};

class NumberKeys {
 public:
  template <class T>
  void field(const char* name, T& value, const char*, const Range<T>& range = {}) {
    if constexpr (has_range_v<T>) {
      NumberKey key{join(name), range.text(), {}, [range, value] { return range.contains(value); }};
      for (const T v : outside(range)) key.outside.push_back({text(v), ValueCodec<T>::text(v)});
      keys.push_back(std::move(key));
    }
  }

  template <class S>
  void section(const char* name, S& value, const char*) {
    const std::string saved = prefix_;
    prefix_ = join(name);
    value.visit(*this);
    prefix_ = saved;
  }

  std::vector<NumberKey> keys;

 private:
  static std::vector<std::int64_t> outside(const Range<std::int64_t>& r) {
    std::vector<std::int64_t> values;
    if (r.min > std::numeric_limits<std::int64_t>::min()) values.push_back(r.min - 1);
    if (r.max < std::numeric_limits<std::int64_t>::max()) values.push_back(r.max + 1);
    return values;
  }
  static std::vector<double> outside(const Range<double>& r) {
    return {r.includes_min ? r.min - 1 : r.min, r.includes_max ? r.max * 2 + 1 : r.max};
  }
  static std::string text(std::int64_t v) { return std::to_string(v); }
  static std::string text(double v) { return ValueCodec<double>::text(v); }
  std::string join(const char* name) const {
    return prefix_.empty() ? std::string(name) : prefix_ + "." + name;
  }
  std::string prefix_;
};

std::vector<NumberKey> number_keys() {
  Config config;
  NumberKeys keys;
  config.visit(keys);
  return keys.keys;
}

TEST(Ranges, EveryNumberKeyHasOneAndItsDefaultIsInside) {
  const auto keys = number_keys();
  ASSERT_FALSE(keys.empty());
  for (const auto& key : keys) EXPECT_TRUE(key.default_in_range()) << key.path;
  std::size_t numbers = 0;
  for (const auto& info : key_catalog()) {
    if (info.type != "integer" && info.type != "number") continue;
    ++numbers;
    EXPECT_FALSE(info.range.empty()) << info.path;
  }
  EXPECT_EQ(numbers, keys.size());
}

TEST(Ranges, EveryNumberKeyRefusesValuesOutsideNamingKeyValueAndRange) {
  for (const auto& key : number_keys()) {
    ASSERT_FALSE(key.outside.empty()) << key.path;
    for (const auto& [set, shown] : key.outside) {
      const std::string text = usage_error([&] { parse("", {key.path + "=" + set}); });
      const std::string expected = key.path + ": must be in " + key.range + ", got " + shown;
      EXPECT_NE(text.find(expected), std::string::npos) << "missing '" << expected << "' in:\n"
                                                        << text;
      EXPECT_NE(text.find("--set " + key.path + "=" + set), std::string::npos) << text;
    }
  }
}

TEST(Ranges, AProblemInAFileNamesItsLine) {
  const std::string text =
      usage_error([] { parse("run:\n  name: x\ndata:\n  num_workers: 100000\n"); });
  EXPECT_NE(text.find("data.num_workers: must be in [0, 256], got 100000 (test.yaml, line 4"),
            std::string::npos)
      << text;
}

TEST(Ranges, TheReferenceListsEveryRangeAndIsUpToDate) {
  const std::string tables = key_catalog_markdown();
  EXPECT_NE(tables.find("| `data.num_workers` | integer | `1` | `[0, 256]` |"), std::string::npos)
      << tables;
  EXPECT_NE(tables.find("| `training.beta2` | number | `0.95` | `[0, 1)` |"), std::string::npos);
  // scripts/gen_config_reference.sh splices the tables in, stripped.
  std::string stripped = tables.substr(tables.find_first_not_of('\n'));
  stripped.erase(stripped.find_last_not_of('\n') + 1);
  const std::string docs =
      read_text_file(nss::testing::source_dir() + "/docs/configuration.md", "test");
  EXPECT_NE(docs.find(stripped), std::string::npos)
      << "docs/configuration.md is out of date: run scripts/gen_config_reference.sh";
}

TEST(CheckedProduct, MultipliesAndAddsWithinInt64Only) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  EXPECT_EQ(checked_mul(3037000499, 3037000499), 9223372030926249001);
  EXPECT_FALSE(checked_mul(3037000500, 3037000500));
  EXPECT_FALSE(checked_mul(kMin, -1));
  EXPECT_EQ(checked_mul(kMin, 1), kMin);
  EXPECT_EQ(checked_mul(0, kMax), 0);
  EXPECT_EQ(checked_add(kMax - 1, 1), kMax);
  EXPECT_FALSE(checked_add(kMax, 1));

  NamedProduct product;
  product.times("training.max_steps", 1'000'000'000'000).times("training.global_batch_size", 8);
  EXPECT_EQ(product.value(), 8'000'000'000'000);
  EXPECT_TRUE(product.at_most(8'000'000'000'000));
  EXPECT_FALSE(product.at_most(7'999'999'999'999));
  EXPECT_EQ(product.names(), "training.max_steps x training.global_batch_size");
  EXPECT_EQ(product.equation(), "1000000000000 x 8 = 8000000000000");
  product.times("data.seq_len", 10'000'000);  // stays empty once it has left int64
  EXPECT_FALSE(product.value());
  EXPECT_FALSE(product.times("x", 0).value());
  EXPECT_EQ(product.equation(), "1000000000000 x 8 x 10000000 x 0 = more than 9223372036854775807");
}

TEST(Sizes, ProductsBeyondTheirBoundsNameTheirKeys) {
  // Each key in range, the product not: tokens a run trains on beyond 64 bits.
  std::string text = usage_error([] {
    parse("", {"training.max_steps=1000000000000", "training.global_batch_size=16777216",
               "training.micro_batch_size=1", "data.seq_len=4096",
               "model.max_position_embeddings=4096"});
  });
  EXPECT_NE(text.find("training.max_steps x training.global_batch_size x data.seq_len: "
                      "1000000000000 x 16777216 x 4096 = more than 9223372036854775807 tokens "
                      "to train on"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("tokens per optimizer step, above 2^36"), std::string::npos) << text;

  text = usage_error([] {
    parse("", {"data.seq_len=1048576", "model.max_position_embeddings=1048576",
               "model.num_attention_heads=32", "model.num_key_value_heads=32"});
  });
  EXPECT_NE(text.find("training.micro_batch_size x data.seq_len x model.num_attention_heads x "
                      "data.seq_len: 2 x 1048576 x 32 x 1048576 = 70368744177664 elements of "
                      "attention scores in one micro-batch, above 2^44 (17592186044416)"),
            std::string::npos)
      << text;

  text = usage_error([] {
    parse(
        "model: {hidden_size: 65536, intermediate_size: 262144, num_hidden_layers: 1024,"
        " num_attention_heads: 1024, head_dim: 64}");
  });
  EXPECT_NE(text.find("model: the shape has 61589999124480 parameters, above 2^44"),
            std::string::npos)
      << text;

  text = usage_error([] {
    parse("", {"eval.batches=1000000", "training.global_batch_size=16777216",
               "training.micro_batch_size=1", "data.seq_len=1048576",
               "model.max_position_embeddings=1048576"});
  });
  EXPECT_NE(text.find("eval.batches x training.global_batch_size x (data.seq_len + 1)"),
            std::string::npos)
      << text;
}

TEST(Sizes, OutOfRangeValuesAreNotMultipliedAgain) {
  const std::string text = usage_error([] { parse("", {"model.hidden_size=1048576"}); });
  EXPECT_NE(text.find("model.hidden_size: must be in [1, 65536], got 1048576"), std::string::npos);
  EXPECT_EQ(text.find("parameters"), std::string::npos) << text;
}

TEST(Sizes, MicroBatchesBeyondTheTensorLimitAreFlagged) {
  const Config config = parse("", {"data.seq_len=1024", "model.max_position_embeddings=1024"});
  EXPECT_TRUE(micro_batch_fits(config, 2));
  // 2^25 sequences of 1024 tokens x 258 logits: above 2^44 elements.
  EXPECT_FALSE(micro_batch_fits(config, std::int64_t{1} << 25));
  EXPECT_FALSE(micro_batch_fits(config, std::numeric_limits<std::int64_t>::max()));
}

TEST(Derived, MicroBatchChoicesAreTheDivisorsAndFastForHugeBatches) {
  for (const std::int64_t global : {1, 2, 12, 36, 97, 360, 1024}) {
    const Config config = parse("", {"training.global_batch_size=" + std::to_string(global),
                                     "training.micro_batch_size=1"});
    std::vector<std::int64_t> expected;
    for (std::int64_t m = 1; m <= global; ++m)
      if (global % m == 0) expected.push_back(m);
    EXPECT_EQ(micro_batch_choices(config, 1), expected) << global;
  }
  // The walk takes sqrt(global) steps, not global.
  Config huge;
  huge.training.global_batch_size = std::int64_t{1} << 40;
  const auto start = std::chrono::steady_clock::now();
  const auto choices = micro_batch_choices(huge, 1);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  EXPECT_EQ(choices.size(), 41u);
  EXPECT_EQ(choices.back(), std::int64_t{1} << 40);
  EXPECT_EQ(accumulation_steps(huge, 2, std::numeric_limits<std::int64_t>::max()), 1);
}

TEST(ConfigFile, DuplicateKeysAtAnyDepthNameBothLines) {
  std::string text =
      usage_error([] { parse("training:\n  lr: 0.1\n  max_steps: 3\n  lr: 0.2\n"); });
  EXPECT_NE(text.find("training.lr: duplicate key: also given at line 2, column 3 (test.yaml, "
                      "line 4, column 3)"),
            std::string::npos)
      << text;
  text = usage_error([] { parse("run: {name: a}\nmodel: {preset: tiny}\nrun: {name: b}\n"); });
  EXPECT_NE(text.find("run: duplicate key: also given at line 1, column 1 (test.yaml, line 3"),
            std::string::npos)
      << text;
  text = usage_error([] { parse("model:\n  rope_scaling: {type: llama3, type: none}\n"); });
  EXPECT_NE(text.find("model.rope_scaling.type: duplicate key"), std::string::npos) << text;
}

class ConfigFileTest : public ::testing::Test {
 protected:
  std::string dir_ = nss::testing::scratch_dir("config_file");
};

TEST_F(ConfigFileTest, ADirectoryIsRefused) {
  const std::string text = usage_error([&] { load_config({dir_, {}}); });
  EXPECT_NE(text.find("config file " + dir_ + " is a directory, not a regular file"),
            std::string::npos)
      << text;
}

TEST_F(ConfigFileTest, AFifoIsRefusedWithoutWaitingForAWriter) {
  const std::string fifo = dir_ + "/run.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string text = usage_error([&] { load_config({fifo, {}}); });
  EXPECT_NE(text.find("is a FIFO, not a regular file"), std::string::npos) << text;
}

TEST_F(ConfigFileTest, ADeviceIsRefused) {
  const std::string text = usage_error([] { load_config({"/dev/null", {}}); });
  EXPECT_NE(text.find("config file /dev/null is a character device, not a regular file"),
            std::string::npos)
      << text;
}

TEST_F(ConfigFileTest, AFileWithoutKeysIsRefusedAndAnEmptyMappingIsTheDefaults) {
  for (const char* content : {"", "\n  \n", "# only a comment\n"}) {
    write_file_atomic(dir_ + "/empty.yaml", content);
    const std::string text = usage_error([&] { load_config({dir_ + "/empty.yaml", {}}); });
    EXPECT_NE(text.find("has no keys (it is empty or only comments)"), std::string::npos) << text;
  }
  write_file_atomic(dir_ + "/defaults.yaml", "{}\n");
  EXPECT_EQ(load_config({dir_ + "/defaults.yaml", {}}).run.name, "default");
}

TEST_F(ConfigFileTest, AFileTooLargeToBeAConfigurationIsRefused) {
  write_file_atomic(dir_ + "/big.yaml", std::string((1 << 20) + 1, '#'));
  const std::string text = usage_error([&] { load_config({dir_ + "/big.yaml", {}}); });
  EXPECT_NE(text.find("bytes, more than a configuration"), std::string::npos) << text;
}

}  // namespace
}  // namespace nss::config
