// Decoding speed for scripts/bench/decode_throughput.sh: greedy decoding of
// `new` tokens after random prompts of `prompt` tokens, batch `batch`, on the
// CPU in fp32 — with the KV cache, or recomputing every sequence from its
// first token at each step (a fresh prefill), which is what decoding costs
// without one. Prints {"mode", "batch", "prompt", "new", "prefill_s",
// "decode_s", "tokens_per_s"}: new tokens of all sequences per second of
// decoding, prefill excluded.
#include <chrono>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "config/model_presets.h"
#include "core/error.h"
#include "generate/decoder.h"
#include "model/initial_weights.h"
#include "model/llama_model.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

nss::model::LlamaModel open_model(const std::string& dir, const std::string& preset) {
  if (!dir.empty()) return nss::model::load_pretrained_model(dir, {}, torch::kFloat32);
  nss::config::ModelConfig config;
  if (!nss::config::apply_model_preset(preset, config))
    throw nss::UsageError("bench", "unknown preset '" + preset + "'");
  nss::model::LlamaModel model(config, {}, torch::kFloat32);
  model.load(nss::model::InitialWeights(config, {}, 1));
  return model;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"decoding throughput, cached or recomputed"};
  std::string dir, preset = "smollm2-135m", mode = "cached";
  std::int64_t batch = 1, prompt = 32, new_tokens = 16;
  int threads = 1;
  app.add_option("--model", dir, "Hugging Face directory (default: random weights of --preset)");
  app.add_option("--preset", preset, "model.preset for random weights");
  app.add_option("--mode", mode, "cached or recompute")
      ->check(CLI::IsMember({"cached", "recompute"}));
  app.add_option("--batch", batch)->check(CLI::PositiveNumber);
  app.add_option("--prompt", prompt)->check(CLI::PositiveNumber);
  app.add_option("--new", new_tokens)->check(CLI::PositiveNumber);
  app.add_option("--threads", threads)->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  torch::set_num_threads(threads);
  const nss::model::LlamaModel model = open_model(dir, preset);
  torch::manual_seed(0);
  const torch::Tensor drawn =
      torch::randint(model.config().vocab_size, {batch, prompt}, torch::kInt64);
  std::vector<std::vector<std::int64_t>> sequences;
  for (std::int64_t b = 0; b < batch; ++b)
    sequences.emplace_back(drawn[b].data_ptr<std::int64_t>(),
                           drawn[b].data_ptr<std::int64_t>() + prompt);

  std::vector<std::int64_t> rows;
  for (std::int64_t b = 0; b < batch; ++b) rows.push_back(b);
  const std::vector<bool> running(static_cast<std::size_t>(batch), true);
  const std::int64_t capacity = prompt + new_tokens + 1;
  nss::generate::Decoder decoder(model, batch, capacity);
  const bool cached = mode == "cached";
  auto start = Clock::now();
  torch::Tensor logits = decoder.start(rows, sequences);
  const double prefill_s = seconds_since(start);
  start = Clock::now();
  for (std::int64_t step = 0; step < new_tokens; ++step) {
    const torch::Tensor next = logits.argmax(-1);
    std::vector<std::int64_t> tokens;
    for (std::int64_t b = 0; b < batch; ++b) {
      tokens.push_back(next[b].item<std::int64_t>());
      sequences[static_cast<std::size_t>(b)].push_back(tokens.back());
    }
    logits = cached ? decoder.step(tokens, running)
                    : nss::generate::Decoder(model, batch, capacity).start(rows, sequences);
  }
  const double decode_s = seconds_since(start);
  std::cout << nlohmann::json{{"mode", mode},
                              {"batch", batch},
                              {"prompt", prompt},
                              {"new", new_tokens},
                              {"prefill_s", prefill_s},
                              {"decode_s", decode_s},
                              {"tokens_per_s", static_cast<double>(batch * new_tokens) / decode_s}}
                   .dump()
            << "\n";
  return 0;
}
