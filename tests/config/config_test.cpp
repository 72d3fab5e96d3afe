#include <fstream>

#include <gtest/gtest.h>

#include "config/derived.h"
#include "config/key_catalog.h"
#include "config/key_suggestion.h"
#include "config/load.h"
#include "config/model_presets.h"
#include "core/error.h"
#include "core/fs.h"
#include "support/test_paths.h"

namespace nss::config {
namespace {

// Expects a UsageError whose text contains every fragment.
template <class Fn>
std::string expect_usage_error(Fn&& fn, std::initializer_list<const char*> fragments) {
  try {
    fn();
  } catch (const UsageError& e) {
    const std::string text = e.what();
    for (const char* fragment : fragments)
      EXPECT_NE(text.find(fragment), std::string::npos) << "missing '" << fragment << "' in:\n"
                                                        << text;
    return text;
  }
  ADD_FAILURE() << "no UsageError thrown";
  return "";
}

Config parse(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return parse_config_text(yaml, "test.yaml", overrides);
}

TEST(Config, DefaultsAreValidAndResolved) {
  const Config config = parse("");
  EXPECT_EQ(config.run.output_dir, "runs/default");
  EXPECT_EQ(config.checkpoint.dir, "runs/default/checkpoints");
  EXPECT_EQ(config.model.head_dim, 16);
  EXPECT_EQ(config.training.lr_schedule, LrSchedule::kCosine);
}

TEST(Config, EveryKeyRoundTripsThroughYaml) {
  // Change every value away from its default, write, read back, compare.
  Config config = parse(R"(
run: {name: rt, output_dir: /tmp/rt, seed: 7}
model: {preset: tiny, hidden_size: 96, intermediate_size: 256, num_hidden_layers: 3,
        num_attention_heads: 6, num_key_value_heads: 3, head_dim: 16, vocab_size: 300,
        max_position_embeddings: 512, rms_norm_eps: 1.0e-6, rope_theta: 50000.5,
        rope_scaling: {type: llama3, factor: 8, low_freq_factor: 1.5, high_freq_factor: 4.5,
                       original_max_position_embeddings: 256},
        tie_word_embeddings: true, from_pretrained: ""}
data: {path: /d/train.h5, seq_len: 64, num_workers: 3, prefetch_factor: 5}
eval: {path: /d/val.h5, interval_steps: 5, batches: 7}
training: {global_batch_size: 12, micro_batch_size: 3, max_steps: 9, lr: 0.002, min_lr: 0.0001,
           warmup_steps: 2, lr_schedule: linear, weight_decay: 0.05, beta1: 0.8, beta2: 0.99,
           eps: 1.0e-7, grad_clip: 0.5, dtype: bf16, activation_checkpointing: false,
           lora: {enabled: true, rank: 4, alpha: 8.5, dropout: 0.1, targets: [q_proj, down_proj]}}
parallel: {backend: mpi, collective_timeout_s: 30.5}
preflight: {enabled: false, max_memory_fraction: 0.7, host_memory_warn_fraction: 0.4,
            host_memory_fail_fraction: 0.6, first_batch_timeout_s: 5, synthetic_steps: 3,
            fail_on_warning: true, verdict_timeout_s: 12}
checkpoint: {dir: /ck, interval_steps: 3, keep_last: 2, async: true, resume: never,
             load_optimizer: false, fail_on_error: true}
logging: {interval_steps: 4, level: debug}
)");
  const std::string once = to_yaml(config, true);
  const Config again = parse(once);
  EXPECT_EQ(to_yaml(again, true), once);
  EXPECT_EQ(again.model.rope_scaling.type, RopeScaling::kLlama3);
  EXPECT_DOUBLE_EQ(again.model.rope_theta, 50000.5);
  EXPECT_EQ(again.training.lora.targets, (std::vector<std::string>{"q_proj", "down_proj"}));
  EXPECT_TRUE(again.checkpoint.async);
  EXPECT_EQ(again.logging.level, LogLevel::kDebug);
  // Every documented key appears in the written YAML.
  for (const auto& key : key_catalog()) {
    const auto dot = key.path.rfind('.');
    const std::string leaf = dot == std::string::npos ? key.path : key.path.substr(dot + 1);
    EXPECT_NE(once.find(leaf + ":"), std::string::npos) << key.path;
  }
}

TEST(Config, PresetThenExplicitKeysOverride) {
  const Config config = parse("model: {preset: llama-3.2-1b, num_hidden_layers: 2}");
  EXPECT_EQ(config.model.hidden_size, 2048);
  EXPECT_EQ(config.model.num_hidden_layers, 2);
  EXPECT_TRUE(config.model.tie_word_embeddings);
  EXPECT_EQ(config.model.rope_scaling.type, RopeScaling::kLlama3);
  for (const auto& name : preset_names()) {
    ModelConfig model;
    ASSERT_TRUE(apply_model_preset(name, model));
    EXPECT_EQ(model.num_attention_heads % model.num_key_value_heads, 0) << name;
  }
  ModelConfig model;
  apply_model_preset("llama-3.1-8b", model);
  EXPECT_FALSE(model.tie_word_embeddings);
  EXPECT_EQ(model.intermediate_size, 14336);
}

// A family preset scaled down keeps its layer rule; explicit layer types win.
TEST(Config, FamilyPresetsLayerPlanFollowsTheLayerCount) {
  const Config gemma = parse("model: {preset: gemma3-1b, num_hidden_layers: 7}");
  EXPECT_EQ(gemma.model.family, "gemma3");
  EXPECT_EQ(gemma.model.layer_types,
            (std::vector<std::string>{"sliding_attention", "sliding_attention", "sliding_attention",
                                      "sliding_attention", "sliding_attention", "full_attention",
                                      "sliding_attention"}));
  EXPECT_EQ(parse("model: {preset: gemma3-1b}").model.layer_types.size(), 26u);
  const Config smollm3 = parse("model: {preset: smollm3-3b, num_hidden_layers: 4}");
  EXPECT_EQ(smollm3.model.layer_types.back(), "full_attention_no_rope");
  const Config listed = parse(
      "model: {preset: gemma3-1b, num_hidden_layers: 2, layer_types: [full_attention, "
      "sliding_attention]}");
  EXPECT_EQ(listed.model.layer_types,
            (std::vector<std::string>{"full_attention", "sliding_attention"}));
  EXPECT_TRUE(parse("model: {preset: qwen3-0.6b, num_hidden_layers: 2}").model.layer_types.empty());
}

TEST(Config, OverridesAreTypedLikeYaml) {
  const Config config = parse("", {"training.lr=1e-4", "training.lora.targets=[v_proj]",
                                   "checkpoint.async=true", "run.name=x"});
  EXPECT_DOUBLE_EQ(config.training.lr, 1e-4);
  EXPECT_EQ(config.training.lora.targets, std::vector<std::string>{"v_proj"});
  EXPECT_TRUE(config.checkpoint.async);
  EXPECT_EQ(config.run.output_dir, "runs/x");
}

TEST(Config, UnknownKeySuggestsAliasAndNamesOrigin) {
  expect_usage_error([] { parse("", {"training.lerning_rate=0.1"}); },
                     {"training.lerning_rate", "unknown key", "did you mean 'training.lr'",
                      "--set training.lerning_rate=0.1"});
  expect_usage_error([] { parse("training:\n  learning_rate: 0.1\n"); },
                     {"training.learning_rate", "'training.lr'", "test.yaml, line 2, column 3"});
  expect_usage_error([] { parse("training:\n  batch_size: 4\n"); },
                     {"did you mean 'training.micro_batch_size'"});
  expect_usage_error([] { parse("trainng:\n  lr: 0.1\n"); }, {"did you mean 'training'"});
  expect_usage_error([] { parse("training:\n  seq_len: 64\n"); }, {"did you mean 'data.seq_len'"});
  expect_usage_error([] { parse("model:\n  num_layers: 4\n"); }, {"'model.num_hidden_layers'"});
}

TEST(Config, WrongTypesNameKeyAndExpectation) {
  expect_usage_error([] { parse("training:\n  lr: fast\n"); },
                     {"training.lr", "expected a number, got 'fast'", "line 2"});
  expect_usage_error([] { parse("training:\n  max_steps: 2.5\n"); },
                     {"training.max_steps", "expected an integer"});
  expect_usage_error([] { parse("checkpoint:\n  async: maybe\n"); },
                     {"checkpoint.async", "expected true or false"});
  expect_usage_error([] { parse("data: 5\n"); }, {"data", "expected a mapping"});
  expect_usage_error([] { parse("training:\n  lora:\n    targets: q_proj\n"); },
                     {"training.lora.targets", "expected a list"});
}

TEST(Config, ReportsEveryProblemAtOnce) {
  const std::string text = expect_usage_error(
      [] { parse("training: {lr: -1, max_steps: 0}\nlogging: {level: loud}\n"); },
      {"3 configuration problems", "training.lr: must be in (0, 10], got -1.0 (test.yaml, line 1",
       "training.max_steps: must be in [1, 1000000000000], got 0",
       "logging.level: must be one of"});
  (void)text;
}

// A key that takes one of a fixed set of names refuses any other, listing
// them (the learning-rate schedule's was refused by optim::LrSchedule before
// it became an enum of the configuration).
TEST(Config, ChoicesNameTheValidValues) {
  expect_usage_error([] { parse("training: {lr_schedule: step}"); },
                     {"training.lr_schedule: must be one of cosine, linear, constant, got 'step'"});
  expect_usage_error([] { parse("training: {dtype: fp16}"); },
                     {"training.dtype: must be one of auto, fp32, bf16, got 'fp16'"});
  expect_usage_error([] { parse("parallel: {backend: [mpi]}"); },
                     {"parallel.backend: must be one of auto, mpi, nccl, got a list"});
  EXPECT_EQ(parse("model: {rope_scaling: {type: linear, factor: 2}}").model.rope_scaling.type,
            RopeScaling::kLinear);
}

TEST(Config, OutOfRangeValues) {
  expect_usage_error([] { parse("training: {min_lr: 0.1, lr: 0.01}"); }, {"training.min_lr"});
  expect_usage_error([] { parse("model: {num_attention_heads: 4, num_key_value_heads: 3}"); },
                     {"model.num_key_value_heads", "must divide"});
  expect_usage_error([] { parse("preflight: {synthetic_steps: 1}"); },
                     {"preflight.synthetic_steps"});
  expect_usage_error([] { parse("checkpoint: {keep_last: 0}"); }, {"checkpoint.keep_last"});
  expect_usage_error([] { parse("training: {lora: {targets: [q_proj, qkv]}}"); },
                     {"unknown projection 'qkv'"});
  expect_usage_error([] { parse("model: {preset: llama-3.2-1bb}"); },
                     {"unknown preset", "did you mean 'llama-3.2-1b'"});
  expect_usage_error([] { parse("data: {seq_len: 4096}"); }, {"max_position_embeddings"});
  expect_usage_error([] { parse("eval: {interval_steps: 10}"); }, {"eval.path"});
  expect_usage_error(
      [] { parse("preflight: {first_batch_timeout_s: 700}"); },
      {"preflight.first_batch_timeout_s: must be below parallel.collective_timeout_s (600)"});
}

TEST(Config, MalformedInput) {
  expect_usage_error([] { parse("training:\n  lr: [1,\n"); }, {"cannot parse YAML", "test.yaml"});
  expect_usage_error([] { parse("- a\n- b\n"); }, {"top level must be a mapping"});
  expect_usage_error([] { parse("", {"training.lr"}); }, {"malformed override"});
  expect_usage_error([] { parse("training: {lr: 0.1}", {"training.lr.x=1"}); },
                     {"'training.lr' is a value, not a section"});
  expect_usage_error([] { parse("", {"training.lr.x=1"}); },
                     {"training.lr: expected a number, got a mapping"});
  expect_usage_error(
      [] {
        load_config({"/nonexistent/run.yaml", {}});
      },
      {"cannot read config file /nonexistent/run.yaml"});
}

TEST(Config, LoadsFromFile) {
  const std::string dir = nss::testing::scratch_dir("config");
  write_file_atomic(dir + "/c.yaml", "run:\n  name: filetest\n");
  const Config config = load_config({dir + "/c.yaml", {"training.max_steps=5"}});
  EXPECT_EQ(config.run.name, "filetest");
  EXPECT_EQ(config.training.max_steps, 5);
}

TEST(Layout, BatchArithmeticNamesNumbersAndChoices) {
  const Config config = parse("training: {global_batch_size: 8, micro_batch_size: 2}");
  EXPECT_NO_THROW(validate_layout(config, 1));
  EXPECT_NO_THROW(validate_layout(config, 4));
  EXPECT_EQ(accumulation_steps(config, 2), 2);
  expect_usage_error([&] { validate_layout(config, 3); },
                     {"global_batch_size=8", "2 x 3 = 6", "cannot be split evenly over 3 ranks",
                      "set global_batch_size to 6 or 12"});
  const Config twelve = parse("training: {global_batch_size: 12, micro_batch_size: 4}");
  expect_usage_error([&] { validate_layout(twelve, 2); },
                     {"micro_batch_size can be 1, 2, 3, 6", "8 or 16"});
}

TEST(Layout, DivisorsAscendInSqrtSteps) {
  EXPECT_EQ(divisors(1), (std::vector<std::int64_t>{1}));
  EXPECT_EQ(divisors(12), (std::vector<std::int64_t>{1, 2, 3, 4, 6, 12}));
  EXPECT_EQ(divisors(49), (std::vector<std::int64_t>{1, 7, 49}));
  EXPECT_EQ(divisors(std::int64_t{1} << 40).size(), 41u);  // a walk of 2^20 steps
}

// Hybrid sharding: groups of consecutive ranks that divide the world; the
// refusal names the values that would work.
TEST(Layout, ShardGroupSizeMustDivideTheRanks) {
  const Config config = parse(
      "parallel: {shard_group_size: 4}\ntraining: {global_batch_size: 48, micro_batch_size: 1}");
  EXPECT_NO_THROW(validate_layout(config, 4));
  EXPECT_NO_THROW(validate_layout(config, 8));
  EXPECT_EQ(shard_group_ranks(config.parallel, 8), 4);
  EXPECT_EQ(shard_group_ranks(parse("").parallel, 8), 8);  // 0: all ranks
  expect_usage_error([&] { validate_layout(config, 6); },
                     {"parallel.shard_group_size=4 does not divide the 6 ranks",
                      "shard_group_size can be 0 (all ranks) or 1, 2, 3, 6"});
  expect_usage_error([&] { validate_layout(config, 2); },
                     {"parallel.shard_group_size=4 exceeds the 2 ranks"});
  expect_usage_error([] { parse("parallel: {shard_group_size: -1}"); },
                     {"parallel.shard_group_size"});
  expect_usage_error([] { parse("parallel: {shard_group_size: two}"); },
                     {"parallel.shard_group_size"});
}

// The reshard policy against recompute: auto follows it; true without
// recompute cannot free what the kept graph holds.
TEST(Config, ReshardAfterForwardFollowsRecompute) {
  EXPECT_TRUE(reshard_after_forward(parse("")));
  EXPECT_FALSE(reshard_after_forward(parse("training: {activation_checkpointing: false}")));
  EXPECT_FALSE(reshard_after_forward(parse("training: {activation_checkpointing: none}")));
  EXPECT_FALSE(reshard_after_forward(parse("parallel: {reshard_after_forward: false}")));
  EXPECT_TRUE(reshard_after_forward(parse("parallel: {reshard_after_forward: true}")));
  expect_usage_error(
      [] {
        parse(
            "training: {activation_checkpointing: false}\n"
            "parallel: {reshard_after_forward: true}");
      },
      {"parallel.reshard_after_forward", "activation_checkpointing is none",
       "set reshard_after_forward: auto (or false), or activation_checkpointing: full or "
       "selective"});
  expect_usage_error([] { parse("parallel: {reshard_after_forward: sometimes}"); },
                     {"parallel.reshard_after_forward", "auto, true, false"});
  EXPECT_TRUE(reshard_after_forward(parse("training: {activation_checkpointing: selective}")));
}

// full|selective|none; the boolean spellings of before stay valid and are
// written back by name.
TEST(Config, ActivationCheckpointingTakesAModeAndTheOldBooleans) {
  const auto mode = [](const std::string& value) {
    return parse("training: {activation_checkpointing: " + value + "}")
        .training.activation_checkpointing;
  };
  EXPECT_EQ(parse("").training.activation_checkpointing, Recompute::kFull);
  EXPECT_EQ(mode("full"), Recompute::kFull);
  EXPECT_EQ(mode("selective"), Recompute::kSelective);
  EXPECT_EQ(mode("none"), Recompute::kNone);
  for (const char* yes : {"true", "True", "TRUE", "yes", "on"})
    EXPECT_EQ(mode(yes), Recompute::kFull);
  for (const char* no : {"false", "False", "no", "off"}) EXPECT_EQ(mode(no), Recompute::kNone);
  const Config selective = parse("training: {activation_checkpointing: selective}");
  EXPECT_NE(to_yaml(selective, true).find("activation_checkpointing: \"selective\""),
            std::string::npos);
  EXPECT_EQ(parse(to_yaml(parse("training: {activation_checkpointing: false}"), true))
                .training.activation_checkpointing,
            Recompute::kNone);
  expect_usage_error([] { parse("training: {activation_checkpointing: partial}"); },
                     {"training.activation_checkpointing", "full, selective, none", "partial"});
  expect_usage_error([] { parse("training: {activation_checkpointing: 1}"); },
                     {"training.activation_checkpointing", "full, selective, none"});
  expect_usage_error([] { parse("training: {activation_checkpointing: [full]}"); },
                     {"training.activation_checkpointing"});
}

// One parser reads every choice key, in the file and through --set alike:
// blanks around a name are ignored, case is not; only keys with an on and an
// off choice take YAML's booleans.
TEST(Config, EveryChoiceKeyReadsItsNamesTheSameWay) {
  for (const char* value : {"BF16", "\" bf16 \"", "Bf16"}) {
    EXPECT_EQ(parse(std::string("training: {dtype: ") + value + "}").training.dtype,
              ComputeDtype::kBf16)
        << value;
  }
  EXPECT_EQ(parse("", {"training.dtype=bf16 "}).training.dtype, ComputeDtype::kBf16);
  EXPECT_EQ(parse("", {"training.dtype=\"bf16 \""}).training.dtype, ComputeDtype::kBf16);
  EXPECT_EQ(parse("training: {activation_checkpointing: \"selective \"}")
                .training.activation_checkpointing,
            Recompute::kSelective);
  const auto reshard = [](const std::string& value) {
    return parse("parallel: {reshard_after_forward: " + value + "}").parallel.reshard_after_forward;
  };
  for (const char* yes : {"true", "TRUE", "True", "yes", "on", "\" true\""})
    EXPECT_EQ(reshard(yes), ReshardPolicy::kTrue) << yes;
  for (const char* no : {"false", "FALSE", "no", "Off"})
    EXPECT_EQ(reshard(no), ReshardPolicy::kFalse) << no;
  EXPECT_EQ(reshard("AUTO"), ReshardPolicy::kAuto);
  EXPECT_EQ(parse("", {"parallel.reshard_after_forward=yes"}).parallel.reshard_after_forward,
            ReshardPolicy::kTrue);
  expect_usage_error([] { parse("training: {lr_schedule: yes}"); },
                     {"training.lr_schedule: must be one of cosine, linear, constant"});
  expect_usage_error([] { parse("parallel: {reshard_after_forward: 1}"); },
                     {"parallel.reshard_after_forward: must be one of auto, true, false"});
  expect_usage_error([] { parse("training: {dtype: \"bf 16\"}"); }, {"training.dtype"});
}

// checkpoint.resume is typed: its two names read as every choice does, any
// other text is a directory, nothing is an error.
TEST(Config, ResumeIsAutoNeverOrADirectory) {
  EXPECT_TRUE(parse("").checkpoint.resume.automatic());
  EXPECT_TRUE(parse("checkpoint: {resume: AUTO}").checkpoint.resume.automatic());
  EXPECT_TRUE(parse("checkpoint: {resume: \" never \"}").checkpoint.resume.never());
  EXPECT_TRUE(parse("", {"checkpoint.resume=Never"}).checkpoint.resume.never());
  const Config path = parse("checkpoint: {resume: runs/a/checkpoints/step_00000010}");
  EXPECT_EQ(path.checkpoint.resume.mode(), ResumeSetting::Mode::kPath);
  EXPECT_EQ(path.checkpoint.resume.path(), "runs/a/checkpoints/step_00000010");
  EXPECT_NE(to_yaml(path, false).find("resume: \"runs/a/checkpoints/step_00000010\""),
            std::string::npos);
  EXPECT_EQ(parse("checkpoint: {resume: ./auto}").checkpoint.resume.path(), "./auto");
  for (const char* bad : {"\"\"", "\"  \"", "[a]", "{a: 1}"})
    expect_usage_error([&] { parse(std::string("checkpoint: {resume: ") + bad + "}"); },
                       {"checkpoint.resume", "auto, never or a step or checkpoint directory"});
  EXPECT_FALSE(parse("privacy: {delta: AUTO}").privacy.delta.value.has_value());
}

// DP-SGD clips per example: LoRA only, one example per row, never split;
// a Poisson batch's size varies, so the batch arithmetic does not apply.
TEST(Config, PrivacyNeedsLoraAndOneExamplePerRow) {
  const std::string lora = "training: {lora: {enabled: true}}\n";
  const std::string rows = "data: {packing: none}\n";
  expect_usage_error([&] { parse(rows + "privacy: {enabled: true}"); },
                     {"privacy.enabled", "training.lora.enabled is false"});
  expect_usage_error([&] { parse(lora + "privacy: {enabled: true}"); },
                     {"data.packing: must be none under privacy", "set data.packing: none"});
  expect_usage_error(
      [&] {
        parse(lora + "data: {packing: none, long_documents: split}\nprivacy: {enabled: true}");
      },
      {"data.long_documents", "double its sensitivity"});
  expect_usage_error([&] { parse(lora + rows + "privacy: {enabled: true, target_epsilon: 0}"); },
                     {"privacy.target_epsilon", "nothing sets the noise"});
  expect_usage_error([&] { parse(lora + rows + "privacy: {enabled: true, delta: 1}"); },
                     {"privacy.delta: must be in (0, 1) or auto, got 1"});
  expect_usage_error([&] { parse(lora + rows + "privacy: {enabled: true, delta: 0}"); },
                     {"privacy.delta: must be in (0, 1) or auto, got 0"});
  expect_usage_error([&] { parse(lora + rows + "privacy: {enabled: true, delta: often}"); },
                     {"privacy.delta", "a number or auto"});
  EXPECT_FALSE(parse(lora + rows + "privacy: {enabled: true, delta: auto}").privacy.delta.value);
  EXPECT_EQ(parse(lora + rows + "privacy: {enabled: true, delta: 1e-6}").privacy.delta.value, 1e-6);
  expect_usage_error([&] { parse(lora + rows + "privacy: {enabled: true, accountant: gdp}"); },
                     {"privacy.accountant: must be one of prv, rdp"});
  const Config poisson =
      parse(rows +
            "training: {lora: {enabled: true}, global_batch_size: 7, micro_batch_size: 2}\n"
            "privacy: {enabled: true}");
  EXPECT_TRUE(poisson_batches(poisson));
  EXPECT_NO_THROW(validate_layout(poisson, 3));
  expect_usage_error(
      [&] {
        parse(rows +
              "training: {lora: {enabled: true}, global_batch_size: 7, micro_batch_size: 2}\n"
              "privacy: {enabled: true, sampling: shuffle}");
      },
      {"training.micro_batch_size: must divide global_batch_size (7)"});
}

TEST(KeySuggestion, EditDistanceAndThresholds) {
  EXPECT_EQ(edit_distance("lr", "lr"), 0u);
  EXPECT_EQ(edit_distance("lerning_rate", "learning_rate"), 1u);
  EXPECT_EQ(edit_distance("ab", "ba"), 1u);
  EXPECT_EQ(suggest_key("training.lerning_rate"), "training.lr");
  EXPECT_EQ(suggest_key("training.max_step"), "training.max_steps");
  EXPECT_FALSE(suggest_key("model.zzzzzzzz").has_value());
}

TEST(KeyCatalog, CoversTheDesignContract) {
  // The keys DESIGN.md promises; docs/configuration.md documents them all.
  const char* required[] = {"run.name",
                            "run.output_dir",
                            "run.seed",
                            "model.preset",
                            "model.from_pretrained",
                            "model.hidden_size",
                            "model.intermediate_size",
                            "model.num_hidden_layers",
                            "model.num_attention_heads",
                            "model.num_key_value_heads",
                            "model.head_dim",
                            "model.vocab_size",
                            "model.max_position_embeddings",
                            "model.rms_norm_eps",
                            "model.rope_theta",
                            "model.rope_scaling",
                            "model.tie_word_embeddings",
                            "data.path",
                            "data.seq_len",
                            "data.num_workers",
                            "data.prefetch_factor",
                            "eval.path",
                            "eval.interval_steps",
                            "eval.batches",
                            "training.global_batch_size",
                            "training.micro_batch_size",
                            "training.max_steps",
                            "training.lr",
                            "training.min_lr",
                            "training.warmup_steps",
                            "training.lr_schedule",
                            "training.weight_decay",
                            "training.beta1",
                            "training.beta2",
                            "training.eps",
                            "training.grad_clip",
                            "training.dtype",
                            "training.activation_checkpointing",
                            "training.lora.enabled",
                            "training.lora.rank",
                            "training.lora.alpha",
                            "training.lora.dropout",
                            "training.lora.targets",
                            "parallel.backend",
                            "parallel.collective_timeout_s",
                            "preflight.enabled",
                            "preflight.max_memory_fraction",
                            "preflight.host_memory_warn_fraction",
                            "preflight.host_memory_fail_fraction",
                            "preflight.first_batch_timeout_s",
                            "preflight.synthetic_steps",
                            "preflight.fail_on_warning",
                            "preflight.verdict_timeout_s",
                            "checkpoint.dir",
                            "checkpoint.interval_steps",
                            "checkpoint.keep_last",
                            "checkpoint.async",
                            "checkpoint.resume",
                            "checkpoint.load_optimizer",
                            "checkpoint.fail_on_error",
                            "checkpoint.hdf5_file_locking",
                            "logging.interval_steps",
                            "logging.level"};
  const std::string docs =
      read_text_file(nss::testing::source_dir() + "/docs/configuration.md", "test");
  for (const char* path : required) {
    bool found = false;
    for (const auto& key : key_catalog()) found = found || key.path == path;
    EXPECT_TRUE(found) << path;
  }
  for (const auto& key : key_catalog())
    EXPECT_NE(docs.find("`" + key.path + "`"), std::string::npos)
        << key.path << " is missing from docs/configuration.md";
}

}  // namespace
}  // namespace nss::config
