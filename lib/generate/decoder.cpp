#include "generate/decoder.h"

#include <algorithm>
#include <map>
#include <string>

#include <torch/torch.h>

#include "core/error.h"
#include "model/llama_functional.h"

namespace nss::generate {
namespace {

// Prompts kept for copying: enough for the samples of a few prompts in
// flight at once, little memory beside the cache.
constexpr std::size_t kKeptPrompts = 4;

// Attention of q [B, heads, S, D] over keys and values [B, kv_heads, T, D]
// without repeat_kv's copy of the whole cache at every step: the `groups`
// query heads that share a key/value head (head h reads h / groups) become
// rows of one [B, kv_heads, groups * S, D] query.
torch::Tensor grouped_attention(const torch::Tensor& q, const torch::Tensor& keys,
                                const torch::Tensor& values, const torch::Tensor& allowed,
                                std::int64_t groups, double scale) {
  const std::int64_t b = q.size(0), heads = q.size(1), s = q.size(2), d = q.size(3);
  const std::int64_t kv_heads = keys.size(1), t = keys.size(2);
  const torch::Tensor rows = q.reshape({b, kv_heads, groups * s, d});
  const torch::Tensor mask =
      s == 1 ? allowed
             : allowed.unsqueeze(2).expand({b, 1, groups, s, t}).reshape({b, 1, groups * s, t});
  return model::masked_attention(rows, keys, values, mask, scale).reshape({b, heads, s, d});
}

torch::Tensor row_indices(const std::vector<std::int64_t>& rows, torch::Device device) {
  return torch::tensor(rows, torch::kInt64).to(device);
}

KvCache cache_for(const model::LlamaModel& model, std::int64_t rows, std::int64_t capacity) {
  const config::ModelConfig& config = model.config();
  if (rows < 1 || capacity < 1 || capacity > config.max_position_embeddings)
    throw UsageError("generate",
                     "cannot decode " + std::to_string(rows) + " rows of " +
                         std::to_string(capacity) +
                         " tokens (prompt and new tokens) with a model of " +
                         std::to_string(config.max_position_embeddings) + " positions",
                     "shorten the prompt or ask for fewer new tokens");
  return KvCache(config.num_hidden_layers, rows, config.num_key_value_heads, capacity,
                 config.head_dim, model.unit_tensors(0).front().options().requires_grad(false));
}

}  // namespace

Decoder::Decoder(const model::LlamaModel& model, std::int64_t rows, std::int64_t capacity)
    : model_(model),
      cache_(cache_for(model, rows, capacity)),
      layers_(model.config(), capacity, model.unit_tensors(0).front().device()),
      lengths_(static_cast<std::size_t>(rows), 0) {}

void Decoder::check_token(std::int64_t token) const {
  if (token < 0 || token >= model_.config().vocab_size)
    throw UsageError("generate",
                     "token id " + std::to_string(token) +
                         " is outside the model's vocabulary of " +
                         std::to_string(model_.config().vocab_size),
                     "encode prompts with the model's own tokenizer");
}

void Decoder::check_prompt(std::int64_t row, const std::vector<std::int64_t>& prompt) const {
  NSS_ASSERT(row >= 0 && row < rows(), "generate", "start() in a row that is not there");
  if (prompt.empty())
    throw UsageError("generate", "a prompt is empty",
                     "start every prompt with at least one token (its BOS, say)");
  if (static_cast<std::int64_t>(prompt.size()) >= cache_.capacity())
    throw UsageError("generate",
                     "a prompt of " + std::to_string(prompt.size()) + " tokens leaves no room in " +
                         std::to_string(cache_.capacity()) + " positions",
                     "shorten the prompt or ask for fewer new tokens");
  for (const std::int64_t token : prompt) check_token(token);
}

torch::Tensor Decoder::start(const std::vector<std::int64_t>& rows,
                             const std::vector<std::vector<std::int64_t>>& prompts) {
  NSS_ASSERT(rows.size() == prompts.size(), "generate", "start() takes one row per prompt");
  if (prompts.empty()) throw UsageError("generate", "no prompts to decode");
  for (std::size_t i = 0; i < prompts.size(); ++i) check_prompt(rows[i], prompts[i]);
  std::vector<torch::Tensor> logits(prompts.size());
  // Kept prompts are copied; each other distinct prompt runs once and the
  // rest of its rows copy the row that ran it.
  std::vector<std::int64_t> run_rows;
  std::vector<std::vector<std::int64_t>> run;
  std::vector<std::size_t> source(prompts.size(), prompts.size());  // index into run
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    if (const KeptPrompt* prompt = kept(prompts[i])) {
      for (int layer = 0; layer < static_cast<int>(prompt->layers.size()); ++layer)
        cache_.copy_row(layer, rows[i], prompt->layers[static_cast<std::size_t>(layer)].first,
                        prompt->layers[static_cast<std::size_t>(layer)].second);
      logits[i] = prompt->logits;
      continue;
    }
    source[i] =
        static_cast<std::size_t>(std::find(run.begin(), run.end(), prompts[i]) - run.begin());
    if (source[i] == run.size()) {
      run_rows.push_back(rows[i]);
      run.push_back(prompts[i]);
    }
  }
  const torch::Tensor ran = run.empty() ? torch::Tensor() : run_prompts(run_rows, run);
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    if (source[i] < run.size()) {
      const std::int64_t from = run_rows[source[i]];
      if (from != rows[i])
        for (int layer = 0; layer < model_.config().num_hidden_layers; ++layer) {
          const auto [keys, values] =
              cache_.row(layer, from, static_cast<std::int64_t>(prompts[i].size()));
          cache_.copy_row(layer, rows[i], keys, values);
        }
      logits[i] = ran[static_cast<std::int64_t>(source[i])];
    }
    lengths_[static_cast<std::size_t>(rows[i])] = static_cast<std::int64_t>(prompts[i].size());
  }
  for (std::size_t i = 0; i < run.size(); ++i)
    keep(run_rows[i], run[i], ran[static_cast<std::int64_t>(i)]);
  return torch::stack(logits);
}

torch::Tensor Decoder::run_prompts(const std::vector<std::int64_t>& rows,
                                   const std::vector<std::vector<std::int64_t>>& prompts) {
  const torch::Device device = model_.unit_tensors(0).front().device();
  std::int64_t longest = 0;
  for (const auto& prompt : prompts)
    longest = std::max(longest, static_cast<std::int64_t>(prompt.size()));
  const auto count = static_cast<std::int64_t>(prompts.size());
  // Right padding: a real query reads only slots before it, never the
  // padding after its prompt; a padding query reads its prompt and is dropped.
  torch::Tensor tokens = torch::zeros({count, longest}, torch::kInt64);
  std::vector<std::int64_t> last;
  for (std::int64_t i = 0; i < count; ++i) {
    const auto& prompt = prompts[static_cast<std::size_t>(i)];
    tokens[i]
        .narrow(0, 0, static_cast<std::int64_t>(prompt.size()))
        .copy_(torch::tensor(prompt, torch::kInt64));
    last.push_back(static_cast<std::int64_t>(prompt.size()) - 1);
  }
  const torch::Tensor positions = torch::arange(longest, torch::kInt64)
                                      .unsqueeze(0)
                                      .expand({count, longest})
                                      .contiguous()
                                      .to(device);
  const torch::Tensor causal = torch::ones({longest, longest}, torch::kBool)
                                   .tril()
                                   .to(device)
                                   .view({1, 1, longest, longest});
  const torch::Tensor targets = row_indices(rows, device);
  const torch::Tensor hidden = forward(
      tokens.to(device), positions, causal,
      [&](std::int64_t window) {
        return causal.logical_and(model::sliding_window_mask(longest, longest, window, device));
      },
      [&](int layer, const torch::Tensor& keys, const torch::Tensor& values) {
        cache_.write_prompts(layer, targets, keys, values);
        return std::pair{keys, values};
      });
  const torch::Tensor index =
      row_indices(last, device).view({count, 1, 1}).expand({count, 1, hidden.size(2)});
  return logits_of(hidden.gather(1, index));
}

void Decoder::keep(std::int64_t row, const std::vector<std::int64_t>& tokens,
                   const torch::Tensor& logits) {
  KeptPrompt prompt{tokens, {}, logits.clone()};
  for (int layer = 0; layer < model_.config().num_hidden_layers; ++layer) {
    const auto [keys, values] = cache_.row(layer, row, static_cast<std::int64_t>(tokens.size()));
    prompt.layers.emplace_back(keys.clone(), values.clone());
  }
  if (kept_.size() == kKeptPrompts) kept_.pop_front();
  kept_.push_back(std::move(prompt));
}

const Decoder::KeptPrompt* Decoder::kept(const std::vector<std::int64_t>& tokens) const {
  for (const KeptPrompt& prompt : kept_)
    if (prompt.tokens == tokens) return &prompt;
  return nullptr;
}

torch::Tensor Decoder::step(const std::vector<std::int64_t>& tokens,
                            const std::vector<bool>& running) {
  NSS_ASSERT(static_cast<std::int64_t>(tokens.size()) == rows() &&
                 static_cast<std::int64_t>(running.size()) == rows(),
             "generate", "step() takes one token and one running flag per row");
  std::vector<std::int64_t> fed(tokens.size(), 0), slots(tokens.size(), 0);
  std::int64_t visible = 1;
  for (std::size_t r = 0; r < tokens.size(); ++r) {
    // An idle row reads and rewrites its slot 0: nothing reads that row
    // again before a start writes its prompt there.
    if (!running[r]) continue;
    if (lengths_[r] == 0) throw UsageError("generate", "step() in a row never started");
    if (lengths_[r] == cache_.capacity())
      throw UsageError("generate",
                       "no room for another token: all " + std::to_string(cache_.capacity()) +
                           " slots of row " + std::to_string(r) + " are used",
                       "give the decoder a larger capacity");
    check_token(tokens[r]);
    fed[r] = tokens[r];
    slots[r] = lengths_[r];
    visible = std::max(visible, slots[r] + 1);
  }
  const torch::Device device = model_.unit_tensors(0).front().device();
  const auto batch = rows();
  const torch::Tensor at = torch::tensor(slots, torch::kInt64).to(device).view({batch, 1});
  const torch::Tensor key_slots = torch::arange(visible, torch::kInt64).to(device).view({1, -1});
  const torch::Tensor allowed = (key_slots <= at).view({batch, 1, 1, visible});
  const torch::Tensor hidden = forward(
      torch::tensor(fed, torch::kInt64).to(device).view({batch, 1}), at, allowed,
      [&](std::int64_t window) {
        return allowed.logical_and((at - key_slots < window).view({batch, 1, 1, visible}));
      },
      [&](int layer, const torch::Tensor& keys, const torch::Tensor& values) {
        return cache_.write_step(layer, at.view({batch, 1, 1, 1}), keys, values, visible);
      });
  for (std::size_t r = 0; r < tokens.size(); ++r)
    if (running[r]) ++lengths_[r];
  return logits_of(hidden);
}

torch::Tensor Decoder::forward(const torch::Tensor& tokens, const torch::Tensor& positions,
                               const torch::Tensor& allowed,
                               const std::function<torch::Tensor(std::int64_t window)>& windowed,
                               const Attend& attend) {
  torch::NoGradGuard no_grad;
  const config::ModelConfig& config = model_.config();
  const std::int64_t groups = config.num_attention_heads / config.num_key_value_heads;
  const arch::Architecture& architecture = layers_.architecture();
  torch::Tensor hidden =
      model::embedding_forward(tokens, model_.unit_tensors(0).front(), architecture);
  const double scale = model::attention_scale(config, architecture);
  std::map<std::int64_t, torch::Tensor> masks;  // window -> allowed within it
  for (int layer = 0; layer < config.num_hidden_layers; ++layer) {
    const model::LayerPlan plan = layers_[layer];
    torch::Tensor& layer_allowed = masks[plan.window];
    if (!layer_allowed.defined())
      layer_allowed = plan.window <= 0 ? allowed : windowed(plan.window);
    const auto attention = [&](const torch::Tensor& q, const torch::Tensor& k,
                               const torch::Tensor& v) {
      const auto [keys, values] = attend(layer, k, v);
      return grouped_attention(q, keys, values, layer_allowed, groups, scale);
    };
    hidden = model::decoder_block_forward(hidden, model_.unit_tensors(layer + 1), config,
                                          model_.lora(), plan, nullptr, positions, attention);
  }
  return hidden;
}

torch::Tensor Decoder::logits_of(const torch::Tensor& last_hidden) const {
  return model::head_logits_forward(last_hidden,
                                    model_.unit_tensors(model_.num_units() - 1).front(),
                                    model_.lm_head_weight(), model_.config())
      .squeeze(1)
      .to(torch::kFloat32);
}

}  // namespace nss::generate
