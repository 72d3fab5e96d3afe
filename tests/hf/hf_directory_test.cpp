// Hugging Face directories: config.json <-> ModelConfig, sharded and single
// weight files, and the errors a user can run into (exit 4, or exit 2 for a
// YAML shape that contradicts config.json).
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "config/model_presets.h"
#include "core/error.h"
#include "core/fs.h"
#include "hf/hf_config.h"
#include "hf/hf_weights_writer.h"
#include "hf/pretrained_directory.h"
#include "hf/tokenizer_files.h"
#include "hf/weight_files.h"
#include "support/test_paths.h"

namespace nss::hf {
namespace {

namespace fs = std::filesystem;

// meta-llama/Llama-3.2-1B's config.json as published (abridged to the keys that matter).
constexpr const char* kLlama32Config = R"({
  "architectures": ["LlamaForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "bos_token_id": 128000, "eos_token_id": 128001, "head_dim": 64, "hidden_act": "silu",
  "hidden_size": 2048, "initializer_range": 0.02, "intermediate_size": 8192,
  "max_position_embeddings": 131072, "mlp_bias": false, "model_type": "llama",
  "num_attention_heads": 32, "num_hidden_layers": 16, "num_key_value_heads": 8,
  "pretraining_tp": 1, "rms_norm_eps": 1e-05,
  "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                   "original_max_position_embeddings": 8192, "rope_type": "llama3"},
  "rope_theta": 500000.0, "tie_word_embeddings": true, "torch_dtype": "bfloat16",
  "transformers_version": "4.45.0.dev0", "use_cache": true, "vocab_size": 128256})";

// TinyLlama's config.json: no head_dim, legacy rope_scaling null.
constexpr const char* kTinyLlamaConfig = R"({
  "architectures": ["LlamaForCausalLM"], "bos_token_id": 1, "eos_token_id": 2,
  "hidden_act": "silu", "hidden_size": 2048, "initializer_range": 0.02,
  "intermediate_size": 5632, "max_position_embeddings": 2048, "model_type": "llama",
  "num_attention_heads": 32, "num_hidden_layers": 22, "num_key_value_heads": 4,
  "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_scaling": null, "tie_word_embeddings": false,
  "torch_dtype": "bfloat16", "transformers_version": "4.35.0", "use_cache": true,
  "vocab_size": 32000})";

config::ModelConfig preset(const std::string& name) {
  config::ModelConfig m;
  EXPECT_TRUE(config::apply_model_preset(name, m));
  return m;
}

void expect_same_shape(const config::ModelConfig& a, const config::ModelConfig& b) {
  EXPECT_EQ(hf_config_json(a), hf_config_json(b));
}

void expect_data_error(const std::function<void()>& body, const std::string& problem) {
  try {
    body();
    FAIL() << "no error for " << problem;
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(problem), std::string::npos) << e.what();
  }
}

TEST(HfConfig, PublishedConfigsMatchPresets) {
  expect_same_shape(parse_hf_config(kLlama32Config, "llama"), preset("llama-3.2-1b"));
  expect_same_shape(parse_hf_config(kTinyLlamaConfig, "tinyllama"), preset("tinyllama-1.1b"));
}

TEST(HfConfig, RoundTripThroughJson) {
  for (const auto& name : config::preset_names()) {
    const config::ModelConfig m = preset(name);
    expect_same_shape(parse_hf_config(hf_config_json(m), name), m);
  }
  config::ModelConfig linear = preset("tiny");
  linear.rope_scaling.type = config::RopeScaling::kLinear;
  linear.rope_scaling.factor = 4;
  expect_same_shape(parse_hf_config(hf_config_json(linear), "linear"), linear);
}

TEST(HfConfig, DefaultsAndLegacyKeys) {
  const auto m = parse_hf_config(R"({"model_type": "llama", "hidden_size": 64,
      "num_attention_heads": 4, "rope_scaling": {"type": "linear", "factor": 2.0}})",
                                 "x");
  EXPECT_EQ(m.head_dim, 16);
  EXPECT_EQ(m.num_key_value_heads, 4);
  EXPECT_EQ(m.vocab_size, 32000);
  EXPECT_DOUBLE_EQ(m.rms_norm_eps, 1e-6);
  EXPECT_FALSE(m.tie_word_embeddings);
  EXPECT_EQ(m.rope_scaling.type, config::RopeScaling::kLinear);
  EXPECT_DOUBLE_EQ(m.rope_scaling.factor, 2.0);
  const auto d =
      parse_hf_config(R"({"model_type": "llama", "rope_scaling": {"rope_type": "default"}})", "y");
  EXPECT_EQ(d.rope_scaling.type, config::RopeScaling::kNone);
}

// Each family's keys as transformers writes them: the layer plan, biases,
// the local RoPE base and query scaling; written back, read the same.
TEST(HfConfig, FamiliesReadTheirKeys) {
  const auto qwen2 = parse_hf_config(R"({"architectures": ["Qwen2ForCausalLM"],
      "num_hidden_layers": 4, "use_sliding_window": true, "sliding_window": 64,
      "max_window_layers": 2})",
                                     "qwen2");
  EXPECT_EQ(qwen2.family, "qwen2");
  EXPECT_EQ(qwen2.sliding_window, 64);
  EXPECT_EQ(qwen2.layer_types,
            (std::vector<std::string>{"full_attention", "full_attention", "sliding_attention",
                                      "sliding_attention"}));
  const auto qwen2_full = parse_hf_config(
      R"({"model_type": "qwen2", "use_sliding_window": false, "sliding_window": 4096})", "q");
  EXPECT_TRUE(qwen2_full.layer_types.empty());
  EXPECT_EQ(qwen2_full.sliding_window, 0);  // no layer uses it
  const auto mistral_absent = parse_hf_config(R"({"model_type": "mistral",
      "num_hidden_layers": 2})",
                                              "m");
  EXPECT_EQ(mistral_absent.sliding_window, 4096);  // transformers' default
  EXPECT_EQ(mistral_absent.layer_types.size(), 2u);
  const auto mistral_null =
      parse_hf_config(R"({"model_type": "mistral", "sliding_window": null})", "m");
  EXPECT_TRUE(mistral_null.layer_types.empty());
  const auto gemma = parse_hf_config(R"({"model_type": "gemma3_text", "num_hidden_layers": 7,
      "sliding_window": 512, "sliding_window_pattern": 6, "rope_local_base_freq": 10000.0,
      "rope_theta": 1000000.0, "query_pre_attn_scalar": 256, "head_dim": 256,
      "hidden_activation": "gelu_pytorch_tanh", "final_logit_softcapping": null})",
                                     "gemma");
  EXPECT_EQ(gemma.family, "gemma3");
  EXPECT_EQ(gemma.layer_types[4], "sliding_attention");
  EXPECT_EQ(gemma.layer_types[5], "full_attention");
  EXPECT_EQ(gemma.layer_types[6], "sliding_attention");
  EXPECT_DOUBLE_EQ(gemma.rope_local_theta, 10000.0);
  EXPECT_DOUBLE_EQ(gemma.query_pre_attn_scalar, 256.0);
  const auto smollm3 = parse_hf_config(R"({"model_type": "smollm3", "num_hidden_layers": 4,
      "no_rope_layers": [1, 1, 1, 0], "sliding_window": null})",
                                       "s");
  EXPECT_EQ(smollm3.layer_types[3], "full_attention_no_rope");
  EXPECT_EQ(smollm3.layer_types[0], "full_attention");
  // Without no_rope_layers, as SmolLM3Config derives it: every interval-th layer unrotated.
  const auto smollm3_interval = parse_hf_config(R"({"model_type": "smollm3",
      "num_hidden_layers": 6, "no_rope_layer_interval": 3})",
                                                "s");
  EXPECT_EQ(
      smollm3_interval.layer_types,
      (std::vector<std::string>{"full_attention", "full_attention", "full_attention_no_rope",
                                "full_attention", "full_attention", "full_attention_no_rope"}));
  EXPECT_EQ(
      parse_hf_config(R"({"model_type": "smollm3", "num_hidden_layers": 4})", "s").layer_types[3],
      "full_attention_no_rope");
  for (const auto* m : {&qwen2, &mistral_absent, &gemma, &smollm3, &smollm3_interval}) {
    const auto back = parse_hf_config(hf_config_json(*m), "written");
    EXPECT_EQ(back.family, m->family);
    EXPECT_EQ(back.layer_types, m->layer_types) << m->family;
    EXPECT_EQ(back.sliding_window, m->sliding_window) << m->family;
    EXPECT_EQ(shape_differences(back, *m), std::vector<std::string>{}) << m->family;
  }
}

// What an export writes beyond the shape: the base's token ids (null without
// one), SmolLM3's RoPE list even when every layer rotates, an integer
// query_pre_attn_scalar where it is whole (transformers 5 types it int).
TEST(HfConfig, ExportKeysTransformers5Validates) {
  config::ModelConfig smollm3 = parse_hf_config(
      R"({"model_type": "smollm3", "num_hidden_layers": 2, "no_rope_layers": [1, 1]})", "s");
  const auto written = nlohmann::json::parse(
      hf_config_json(smollm3, "float32", {{"bos_token_id", "256"}, {"eos_token_id", "[1, 106]"}}));
  EXPECT_EQ(written["no_rope_layers"], nlohmann::json::parse("[1, 1]"));
  EXPECT_EQ(written["bos_token_id"], 256);
  EXPECT_EQ(written["eos_token_id"], nlohmann::json::parse("[1, 106]"));
  EXPECT_TRUE(written["pad_token_id"].is_null());
  const auto gemma = nlohmann::json::parse(hf_config_json(parse_hf_config(
      R"({"model_type": "gemma3_text", "query_pre_attn_scalar": 256, "head_dim": 256})", "g")));
  EXPECT_TRUE(gemma["query_pre_attn_scalar"].is_number_integer());
  EXPECT_EQ(gemma["query_pre_attn_scalar"], 256);
  EXPECT_TRUE(nlohmann::json::parse(hf_config_json(smollm3))["bos_token_id"].is_null());
}

TEST(HfConfig, TokenIdsReadFromThePretrainedDirectory) {
  const std::string dir = testing::scratch_dir("hf_token_ids");
  write_file_atomic(dir + "/config.json",
                    R"({"model_type": "gemma3_text", "bos_token_id": 2, "eos_token_id": [1, 106],
                        "pad_token_id": null})");
  const TokenIds ids = read_token_ids(dir);
  EXPECT_EQ(
      ids,
      (TokenIds{{"bos_token_id", "2"}, {"eos_token_id", "[1,106]"}, {"pad_token_id", "null"}}));
  EXPECT_TRUE(read_token_ids("").empty());
  std::string problem;
  EXPECT_TRUE(read_token_ids(dir + "/absent", &problem).empty());
  EXPECT_NE(problem.find(dir + "/absent/config.json"), std::string::npos) << problem;
  write_file_atomic(dir + "/config.json", "{not json");
  problem.clear();
  EXPECT_TRUE(read_token_ids(dir, &problem).empty());
  EXPECT_NE(problem.find("config.json: "), std::string::npos) << problem;
}

// transformers 5 writes "rope_parameters" instead of rope_theta and
// rope_scaling: one description, or one per layer type.
TEST(HfConfig, RopeParametersOfTransformers5) {
  const auto llama = parse_hf_config(R"({"model_type": "llama", "rope_parameters": {
      "rope_theta": 500000.0, "rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0,
      "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}})",
                                     "llama");
  EXPECT_DOUBLE_EQ(llama.rope_theta, 500000.0);
  EXPECT_EQ(llama.rope_scaling.type, config::RopeScaling::kLlama3);
  EXPECT_DOUBLE_EQ(llama.rope_scaling.factor, 32.0);
  const auto smollm3 = parse_hf_config(
      R"({"model_type": "smollm3", "rope_parameters": {"rope_theta": 2000000.0, "rope_type": "default"}})",
      "smollm3");
  EXPECT_DOUBLE_EQ(smollm3.rope_theta, 2000000.0);
  EXPECT_EQ(smollm3.rope_scaling.type, config::RopeScaling::kNone);
  const auto gemma = parse_hf_config(R"({"model_type": "gemma3_text", "num_hidden_layers": 2,
      "sliding_window": 8, "layer_types": ["sliding_attention", "full_attention"],
      "rope_parameters": {"full_attention": {"rope_theta": 1000000.0, "rope_type": "linear",
                                             "factor": 8.0},
                          "sliding_attention": {"rope_theta": 10000.0, "rope_type": "default"}}})",
                                     "gemma");
  EXPECT_DOUBLE_EQ(gemma.rope_theta, 1000000.0);
  EXPECT_EQ(gemma.rope_scaling.type, config::RopeScaling::kLinear);
  EXPECT_DOUBLE_EQ(gemma.rope_local_theta, 10000.0);
  const auto parse = [](const std::string& text) {
    return [text] { parse_hf_config(text, "cfg.json"); };
  };
  expect_data_error(parse(R"({"model_type": "gemma3_text", "rope_parameters": {
      "chunked_attention": {"rope_theta": 1.0, "rope_type": "default"}}})"),
                    "layer type 'chunked_attention'");
  expect_data_error(parse(R"({"model_type": "llama", "rope_parameters": {"rope_theta": 1.0,
      "rope_type": "yarn", "factor": 4.0}})"),
                    "type 'yarn'");
}

TEST(HfConfig, Errors) {
  auto parse = [](const std::string& text) {
    return [text] { parse_hf_config(text, "cfg.json"); };
  };
  expect_data_error(parse(R"({"architectures": ["GPT2LMHeadModel"]})"),
                    "nss_hpc implements LlamaForCausalLM, Qwen2ForCausalLM");
  expect_data_error(parse(R"({"model_type": "gemma3_text", "final_logit_softcapping": 30.0})"),
                    "logit softcapping is not implemented");
  expect_data_error(parse(R"({"model_type": "gemma3_text", "hidden_activation": "gelu"})"),
                    "Gemma3ForCausalLM computes \"gelu_pytorch_tanh\"");
  expect_data_error(parse(R"({"model_type": "mistral", "attention_bias": true})"),
                    "MistralForCausalLM has no such biases");
  expect_data_error(parse(R"({"model_type": "smollm3", "num_hidden_layers": 2,
                              "no_rope_layers": [1, 2]})"),
                    "no_rope_layers");
  expect_data_error(parse(R"({"model_type": "qwen3", "num_hidden_layers": 2,
                              "layer_types": ["full_attention", "chunked_attention"]})"),
                    "chunked_attention");
  expect_data_error(parse(R"({"model_type": "gpt2"})"), "model_type");
  expect_data_error(parse(R"({"model_type": "llama", "hidden_act": "gelu"})"), "hidden_act");
  expect_data_error(
      parse(R"({"model_type": "llama", "rope_scaling": {"rope_type": "yarn", "factor": 4}})"),
      "type 'yarn'");
  expect_data_error(
      parse(R"({"model_type": "llama", "rope_scaling": {"rope_type": "llama3", "factor": 8}})"),
      "low_freq_factor");
  expect_data_error(parse(R"({"model_type": "llama", "hidden_size": "big"})"),
                    "\"hidden_size\" must be an integer");
  expect_data_error(
      parse(R"({"model_type": "llama", "num_attention_heads": 6, "num_key_value_heads": 4})"),
      "must divide num_attention_heads");
  expect_data_error(parse("{not json"), "cfg.json is not valid JSON");
}

SafetensorsTensor declare(const std::string& name, std::vector<std::int64_t> shape) {
  SafetensorsTensor t;
  t.name = name;
  t.dtype = DType::kFloat32;
  t.shape = std::move(shape);
  return t;
}

// Writes tensors a [4,4], b [8], c [2,3] filled with offset + index.
void write_weights(const std::string& dir, std::uint64_t max_shard_bytes) {
  const std::vector<SafetensorsTensor> tensors = {declare("a", {4, 4}), declare("b", {8}),
                                                  declare("c", {2, 3})};
  HfWeightsWriter writer(dir, tensors, max_shard_bytes);
  float base = 0;
  for (const auto& t : tensors) {
    std::vector<float> values(static_cast<std::size_t>(t.numel()));
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = base + static_cast<float>(i);
    writer.write(t.name, 0, t.numel(), values.data(), DType::kFloat32);
    base += 100;
  }
  writer.commit();
  write_file_atomic(dir + "/config.json", hf_config_json(preset("tiny")));
}

void expect_weights(const PretrainedDirectory& d) {
  float out[3];
  d.read_float32("b", 5, 3, out);
  EXPECT_EQ(out[0], 105);
  EXPECT_EQ(out[2], 107);
  d.read_float32("c", 3, 3, out);
  EXPECT_EQ(out[0], 203);
  d.require_tensor("a", {4, 4});
  EXPECT_EQ(d.tensor_names(), (std::vector<std::string>{"a", "b", "c"}));
}

TEST(HfDirectory, ShardedAndSingleFile) {
  const std::string dir = testing::scratch_dir("hf_sharded");
  write_weights(dir, 64);  // a (64 bytes) | b (32) + c (24)
  EXPECT_TRUE(fs::exists(dir + "/model-00001-of-00002.safetensors"));
  EXPECT_TRUE(fs::exists(dir + "/model-00002-of-00002.safetensors"));
  EXPECT_TRUE(fs::exists(dir + "/model.safetensors.index.json"));
  EXPECT_FALSE(fs::exists(dir + "/model.safetensors"));
  const auto sharded = PretrainedDirectory::open(dir);
  EXPECT_EQ(sharded->weight_files().size(), 3u);
  expect_weights(*sharded);

  write_weights(dir, kDefaultMaxShardBytes);  // rewriting unsharded removes the shards
  EXPECT_TRUE(fs::exists(dir + "/model.safetensors"));
  EXPECT_FALSE(fs::exists(dir + "/model.safetensors.index.json"));
  EXPECT_FALSE(fs::exists(dir + "/model-00001-of-00002.safetensors"));
  const auto single = PretrainedDirectory::open(dir);
  EXPECT_EQ(single->weight_files(), std::vector<std::string>{"model.safetensors"});
  expect_weights(*single);
  expect_data_error(
      [&] {
        single->require_tensor("a", {4, 5});
      },
      "has shape [4, 4] but config.json implies [4, 5]");
  expect_data_error([&] { single->require_tensor("lm_head.weight", {1}); },
                    "has no tensor 'lm_head.weight'");
}

TEST(HfDirectory, DirectoryErrors) {
  const std::string dir = testing::scratch_dir("hf_dir_errors");
  auto open = [](const std::string& d) { return [d] { PretrainedDirectory::open(d); }; };
  expect_data_error(open("meta-llama/Llama-3.2-1B"),
                    "huggingface-cli download meta-llama/Llama-3.2-1B");
  expect_data_error(open(dir + "/absent"), "does not exist");
  write_file_atomic(dir + "/file", "x");
  expect_data_error(open(dir + "/file"), "is not a directory");
  expect_data_error(open(dir), "has no config.json");
  write_file_atomic(dir + "/config.json", hf_config_json(preset("tiny")));
  expect_data_error(open(dir), "has neither model.safetensors nor model.safetensors.index.json");
  write_file_atomic(dir + "/pytorch_model.bin", "x");
  expect_data_error(open(dir), "pickle weights");
}

TEST(HfDirectory, IndexErrors) {
  const std::string dir = testing::scratch_dir("hf_index_errors");
  write_weights(dir, 64);
  auto open = [dir] { PretrainedDirectory::open(dir); };
  const std::string index = dir + "/model.safetensors.index.json";
  write_file_atomic(index, R"({"weight_map": {"a": "model-00001-of-00002.safetensors",
                                              "zz": "model-00002-of-00002.safetensors"}})");
  expect_data_error(
      open, "places 'zz' in model-00002-of-00002.safetensors, but that file has no such tensor");
  write_file_atomic(index, R"({"weight_map": {"a": "model-00001-of-00003.safetensors"}})");
  expect_data_error(open, "model-00001-of-00003.safetensors is missing");
  write_file_atomic(index, R"({"weight_map": {"a": "../model-00001-of-00002.safetensors"}})");
  expect_data_error(open, "which is not a file in the directory");
  write_file_atomic(index, R"({"metadata": {}})");
  expect_data_error(open, "has no \"weight_map\"");
  write_file_atomic(index, "{");
  expect_data_error(open, "is not valid JSON");
  // A corrupt shard is reported with its own path.
  write_file_atomic(index, R"({"weight_map": {"a": "model-00001-of-00002.safetensors"}})");
  fs::resize_file(dir + "/model-00001-of-00002.safetensors", 100);
  expect_data_error(open, "model-00001-of-00002.safetensors: truncated");
}

TEST(HfConfig, PretrainedShapeResolution) {
  const std::string dir = testing::scratch_dir("hf_resolve");
  write_file_atomic(dir + "/config.json", kTinyLlamaConfig);

  config::ModelConfig untouched;  // tiny preset defaults, nothing set explicitly
  untouched.from_pretrained = dir;
  const auto resolved = resolve_pretrained_shape(untouched);
  expect_same_shape(resolved, preset("tinyllama-1.1b"));
  EXPECT_EQ(resolved.from_pretrained, dir);
  // A relative directory is stored absolute: checkpoints and exported
  // adapters (base_model_name_or_path) name it from any working directory.
  config::ModelConfig relative;
  relative.from_pretrained = fs::relative(dir).string();
  const auto absolute = resolve_pretrained_shape(relative).from_pretrained;
  EXPECT_TRUE(fs::path(absolute).is_absolute()) << absolute;
  EXPECT_TRUE(fs::equivalent(absolute, dir)) << absolute;

  config::ModelConfig agreeing = preset("tinyllama-1.1b");
  agreeing.from_pretrained = dir;
  EXPECT_NO_THROW(resolve_pretrained_shape(agreeing));

  config::ModelConfig explicit_key;
  explicit_key.from_pretrained = dir;
  explicit_key.hidden_size = 128;
  try {
    resolve_pretrained_shape(explicit_key);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("model.hidden_size"), std::string::npos) << e.what();
  }
  config::ModelConfig other_preset = preset("smollm2-135m");
  other_preset.from_pretrained = dir;
  EXPECT_THROW(resolve_pretrained_shape(other_preset), UsageError);
}

// A float32 round trip of a float key is the same model (relative 1e-6); the
// file's value is the one trained; beyond the tolerance the key disagrees.
TEST(HfConfig, FloatKeysAgreeWithinARelativeMillionth) {
  const std::string dir = testing::scratch_dir("hf_resolve_float");
  std::string text = kTinyLlamaConfig;
  const std::string eps = "\"rms_norm_eps\": 1e-05";
  text.replace(text.find(eps), eps.size(), "\"rms_norm_eps\": 9.999999747378752e-06");
  write_file_atomic(dir + "/config.json", text);

  config::ModelConfig agreeing = preset("tinyllama-1.1b");
  agreeing.from_pretrained = dir;
  agreeing.rope_theta = 10000.00001;
  EXPECT_TRUE(shape_differences(agreeing, read_hf_config(dir + "/config.json")).empty());
  const auto resolved = resolve_pretrained_shape(agreeing);
  EXPECT_EQ(resolved.rms_norm_eps, 9.999999747378752e-06);
  EXPECT_EQ(resolved.rope_theta, 10000.0);

  config::ModelConfig beyond = agreeing;
  beyond.rope_theta = 10000.1;
  EXPECT_EQ(shape_differences(beyond, resolved),
            std::vector<std::string>{"rope_theta 10000.1 vs 10000"});
  EXPECT_THROW(resolve_pretrained_shape(beyond), UsageError);
}

// Present files are copied byte for byte; absent optional ones are skipped;
// a missing tokenizer.json, a file that cannot be read and a directory that
// is gone are each reported by name, never skipped silently.
TEST(TokenizerFiles, CopiedWhenPresentAndReportedWhenNot) {
  const std::string source = testing::scratch_dir("tokenizer_source");
  const std::string target = testing::scratch_dir("tokenizer_target");
  const std::string tokenizer = std::string(R"({"model": {"type": "BPE"}})") + '\0' + "\xff";
  write_file_atomic(source + "/tokenizer.json", tokenizer);
  write_file_atomic(source + "/special_tokens_map.json", R"({"eos_token": "</s>"})");
  EXPECT_TRUE(copy_tokenizer_files(source, target).empty());
  EXPECT_EQ(read_text_file(target + "/tokenizer.json", "test"), tokenizer);
  EXPECT_EQ(read_text_file(target + "/special_tokens_map.json", "test"),
            R"({"eos_token": "</s>"})");
  EXPECT_FALSE(fs::exists(target + "/tokenizer_config.json"));
  EXPECT_FALSE(fs::exists(target + "/generation_config.json"));

  fs::remove(source + "/tokenizer.json");
  fs::create_directory(source + "/tokenizer_config.json");
  const std::string other = testing::scratch_dir("tokenizer_other");
  EXPECT_EQ(copy_tokenizer_files(source, other),
            (std::vector<std::string>{source + "/tokenizer.json does not exist",
                                      source + "/tokenizer_config.json is not a regular file"}));
  EXPECT_TRUE(fs::exists(other + "/special_tokens_map.json"));

  remove_tree(source);
  const auto gone = copy_tokenizer_files(source, other);
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0], source +
                         " is not a directory: tokenizer.json, tokenizer_config.json, "
                         "special_tokens_map.json, generation_config.json not copied from it");
}

}  // namespace
}  // namespace nss::hf
