// Golden tests: our model against two independent Python implementations of
// Hugging Face's LlamaForCausalLM (NumPy float64, and plain PyTorch float64),
// both reading the safetensors directory our writer produced; then loading
// that directory back (F32, BF16, sharded) reproduces the model.
#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "config/model_presets.h"
#include "core/error.h"
#include "core/fs.h"
#include "hf/hf_config.h"
#include "hf/hf_weights_writer.h"
#include "model/initial_weights.h"
#include "model/llama_model.h"
#include "model/param_spec.h"
#include "support/test_paths.h"

namespace nss::model {
namespace {

struct GoldenCase {
  std::string name;
  config::ModelConfig model;
  config::LoraConfig lora;
};

config::ModelConfig small() {
  config::ModelConfig m;
  m.hidden_size = 32;
  m.intermediate_size = 48;
  m.num_hidden_layers = 2;
  m.num_attention_heads = 4;
  m.num_key_value_heads = 2;
  m.head_dim = 8;
  m.vocab_size = 61;
  m.max_position_embeddings = 256;
  return m;
}

std::vector<GoldenCase> golden_cases() {
  std::vector<GoldenCase> cases;
  cases.push_back({"untied_gqa", small(), {}});
  GoldenCase tied{"tied_mha_linear_rope", small(), {}};
  tied.model.tie_word_embeddings = true;
  tied.model.num_key_value_heads = 4;
  tied.model.rope_scaling.type = config::RopeScaling::kLinear;
  tied.model.rope_scaling.factor = 2;
  cases.push_back(tied);
  // head_dim 12 != hidden / heads; llama3 bands: wavelengths 6 and 29 kept, 135 smoothed,
  // 628 and up divided by the factor.
  GoldenCase llama3{"mqa_llama3_rope", small(), {}};
  llama3.model.num_key_value_heads = 1;
  llama3.model.head_dim = 12;
  llama3.model.rope_scaling = {config::RopeScaling::kLlama3, 8.0, 1.0, 4.0, 256};
  cases.push_back(llama3);
  GoldenCase lora{"tied_lora", small(), {}};
  lora.model.tie_word_embeddings = true;
  lora.lora.enabled = true;
  lora.lora.rank = 4;
  lora.lora.alpha = 8;
  lora.lora.targets = projection_names();
  cases.push_back(lora);
  return cases;
}

// Values that make every parameter matter: norms around 1, the rest large enough
// for non-trivial attention patterns, LoRA B non-zero.
void randomise(LlamaModel& model, std::uint64_t seed) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(seed);
  for (int unit = 0; unit < model.num_units(); ++unit)
    for (std::size_t i = 0; i < model.unit_specs(unit).size(); ++i) {
      torch::Tensor t = model.unit_tensors(unit)[i];
      if (model.unit_specs(unit)[i].role == ParamRole::kNorm)
        t.normal_(1.0, 0.1);
      else
        t.normal_(0.0, 0.2);
    }
}

void write_hf_directory(const LlamaModel& model, const std::string& dir, DType dtype,
                        std::uint64_t max_shard_bytes = hf::kDefaultMaxShardBytes) {
  std::vector<hf::SafetensorsTensor> tensors;
  for (int unit = 0; unit < model.num_units(); ++unit)
    for (const auto& spec : model.unit_specs(unit))
      tensors.push_back({spec.name, dtype, spec.shape});
  hf::HfWeightsWriter writer(dir, tensors, max_shard_bytes);
  for (int unit = 0; unit < model.num_units(); ++unit)
    for (std::size_t i = 0; i < model.unit_specs(unit).size(); ++i) {
      const torch::Tensor t = model.unit_tensors(unit)[i].detach().contiguous();
      writer.write(model.unit_specs(unit)[i].name, 0, t.numel(), t.data_ptr<float>(),
                   DType::kFloat32);
    }
  writer.commit();
  write_file_atomic(dir + "/config.json", hf::hf_config_json(model.config()));
}

struct Reference {
  std::vector<double> logits;
  double loss = 0;
};

bool python_has_torch() {
  static const bool has =
      std::system((std::string(std::getenv("NSS_PYTHON3")) + " -c 'import torch' >/dev/null 2>&1")
                      .c_str()) == 0;
  return has;
}

Reference run_reference(const std::string& script, const std::string& dir,
                        const torch::Tensor& inputs, const torch::Tensor& targets,
                        const config::LoraConfig& lora) {
  auto rows = [](const torch::Tensor& t) {
    nlohmann::json out = nlohmann::json::array();
    for (std::int64_t b = 0; b < t.size(0); ++b) {
      std::vector<std::int64_t> row(t[b].data_ptr<std::int64_t>(),
                                    t[b].data_ptr<std::int64_t>() + t.size(1));
      out.push_back(row);
    }
    return out;
  };
  write_file_atomic(dir + "/in.json",
                    nlohmann::json{{"tokens", rows(inputs)}, {"targets", rows(targets)}}.dump());
  std::string command = std::string(std::getenv("NSS_PYTHON3")) + " " + testing::source_dir() +
                        "/tests/model/" + script + " --model " + dir + " --input " + dir +
                        "/in.json --out " + dir + "/out.json";
  if (lora.enabled)
    command +=
        " --lora-alpha " + std::to_string(lora.alpha) + " --lora-rank " + std::to_string(lora.rank);
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  const auto out = nlohmann::json::parse(read_text_file(dir + "/out.json", "test"));
  return {out["logits"].get<std::vector<double>>(), out["loss"].get<double>()};
}

void expect_matches(const Reference& reference, const torch::Tensor& logits, double loss,
                    const std::string& what) {
  const torch::Tensor flat = logits.detach().to(torch::kFloat64).contiguous().view({-1});
  ASSERT_EQ(static_cast<std::size_t>(flat.numel()), reference.logits.size()) << what;
  const torch::Tensor expected = torch::from_blob(const_cast<double*>(reference.logits.data()),
                                                  {flat.numel()}, torch::kFloat64);
  EXPECT_LT((flat - expected).abs().max().item<double>(), 1e-5) << what;
  EXPECT_NEAR(loss, reference.loss, 1e-5) << what;
}

TEST(Golden, LogitsAndLossMatchIndependentImplementations) {
  for (const auto& c : golden_cases()) {
    const std::string dir = testing::scratch_dir("golden_" + c.name);
    LlamaModel model(c.model, c.lora, torch::kFloat32);
    randomise(model, 17);
    write_hf_directory(model, dir, DType::kFloat32);

    torch::manual_seed(3);
    const torch::Tensor tokens = torch::randint(c.model.vocab_size, {2, 13}, torch::kInt64);
    const torch::Tensor inputs = tokens.narrow(1, 0, 12).contiguous();
    const torch::Tensor targets = tokens.narrow(1, 1, 12).contiguous();
    torch::NoGradGuard no_grad;
    const torch::Tensor logits = model.logits(inputs);
    const double loss = model.loss(inputs, targets).item<double>();
    expect_matches(run_reference("llama_reference.py", dir, inputs, targets, c.lora), logits, loss,
                   c.name + " vs NumPy");
    if (python_has_torch())
      expect_matches(run_reference("llama_torch_reference.py", dir, inputs, targets, c.lora),
                     logits, loss, c.name + " vs PyTorch");
  }
}

LlamaModel load_pretrained(const std::string& dir) {
  return load_pretrained_model(dir, {}, torch::kFloat32);
}

TEST(Golden, PretrainedDirectoriesLoadBack) {
  for (const auto& c : golden_cases()) {
    if (c.lora.enabled) continue;
    LlamaModel model(c.model, c.lora, torch::kFloat32);
    randomise(model, 23);
    torch::manual_seed(4);
    const torch::Tensor tokens = torch::randint(c.model.vocab_size, {2, 10}, torch::kInt64);
    torch::NoGradGuard no_grad;
    const torch::Tensor logits = model.logits(tokens);

    const std::string single = testing::scratch_dir("load_f32_" + c.name);
    write_hf_directory(model, single, DType::kFloat32);
    EXPECT_TRUE(load_pretrained(single).logits(tokens).equal(logits)) << c.name;

    const std::string sharded = testing::scratch_dir("load_sharded_" + c.name);
    write_hf_directory(model, sharded, DType::kFloat32, 16 * 1024);
    ASSERT_TRUE(std::ifstream(sharded + "/model.safetensors.index.json").good());
    EXPECT_TRUE(load_pretrained(sharded).logits(tokens).equal(logits)) << c.name;

    const std::string bf16 = testing::scratch_dir("load_bf16_" + c.name);
    write_hf_directory(model, bf16, DType::kBFloat16);
    const LlamaModel loaded = load_pretrained(bf16);
    for (int unit = 0; unit < model.num_units(); ++unit)
      for (std::size_t i = 0; i < model.unit_specs(unit).size(); ++i)
        EXPECT_TRUE(loaded.unit_tensors(unit)[i].equal(
            model.unit_tensors(unit)[i].to(torch::kBFloat16).to(torch::kFloat32)))
            << model.unit_specs(unit)[i].name;
  }
}

TEST(Golden, PretrainedFilesThatDoNotFitConfigAreDataErrors) {
  LlamaModel model(small(), {}, torch::kFloat32);
  randomise(model, 1);
  const std::string dir = testing::scratch_dir("load_mismatch");
  write_hf_directory(model, dir, DType::kFloat32);
  config::ModelConfig wider = small();
  wider.intermediate_size = 64;
  write_file_atomic(dir + "/config.json", hf::hf_config_json(wider));
  wider.from_pretrained = dir;
  try {
    InitialWeights weights(wider, {}, 0);
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("has shape [48, 32] but config.json implies [64, 32]"),
              std::string::npos)
        << e.what();
  }
  config::ModelConfig tied = small();
  tied.tie_word_embeddings = false;
  write_file_atomic(dir + "/config.json", hf::hf_config_json(tied));
  tied.from_pretrained = dir;
  config::ModelConfig changed = tied;
  changed.hidden_size = 16;
  try {
    InitialWeights weights(changed, {}, 0);
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("hidden_size 16 vs 32"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nss::model
