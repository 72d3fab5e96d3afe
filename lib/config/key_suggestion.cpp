#include "config/key_suggestion.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "config/key_catalog.h"

namespace nss::config {
namespace {

// Names used by other trainers and by Hugging Face, mapped to our keys.
const std::vector<std::pair<std::string, std::string>>& aliases() {
  static const std::vector<std::pair<std::string, std::string>> table = {
      {"learning_rate", "training.lr"},
      {"max_lr", "training.lr"},
      {"peak_lr", "training.lr"},
      {"min_learning_rate", "training.min_lr"},
      {"final_lr", "training.min_lr"},
      {"batch_size", "training.micro_batch_size"},
      {"per_device_train_batch_size", "training.micro_batch_size"},
      {"micro_batch", "training.micro_batch_size"},
      {"global_batch", "training.global_batch_size"},
      {"train_batch_size", "training.global_batch_size"},
      {"gradient_accumulation_steps", "training.global_batch_size"},
      {"steps", "training.max_steps"},
      {"num_steps", "training.max_steps"},
      {"train_steps", "training.max_steps"},
      {"total_steps", "training.max_steps"},
      {"warmup", "training.warmup_steps"},
      {"num_warmup_steps", "training.warmup_steps"},
      {"lr_scheduler", "training.lr_schedule"},
      {"lr_scheduler_type", "training.lr_schedule"},
      {"scheduler", "training.lr_schedule"},
      {"max_grad_norm", "training.grad_clip"},
      {"clip_grad_norm", "training.grad_clip"},
      {"gradient_clipping", "training.grad_clip"},
      {"adam_beta1", "training.beta1"},
      {"adam_beta2", "training.beta2"},
      {"adam_epsilon", "training.eps"},
      {"precision", "training.dtype"},
      {"mixed_precision", "training.dtype"},
      {"gradient_checkpointing", "training.activation_checkpointing"},
      {"lora_rank", "training.lora.rank"},
      {"r", "training.lora.rank"},
      {"lora_alpha", "training.lora.alpha"},
      {"lora_dropout", "training.lora.dropout"},
      {"target_modules", "training.lora.targets"},
      {"n_layers", "model.num_hidden_layers"},
      {"num_layers", "model.num_hidden_layers"},
      {"n_layer", "model.num_hidden_layers"},
      {"dim", "model.hidden_size"},
      {"d_model", "model.hidden_size"},
      {"n_embd", "model.hidden_size"},
      {"n_heads", "model.num_attention_heads"},
      {"n_head", "model.num_attention_heads"},
      {"num_heads", "model.num_attention_heads"},
      {"n_kv_heads", "model.num_key_value_heads"},
      {"num_kv_heads", "model.num_key_value_heads"},
      {"ffn_dim", "model.intermediate_size"},
      {"ffn_hidden_size", "model.intermediate_size"},
      {"tie_embeddings", "model.tie_word_embeddings"},
      {"rope_type", "model.rope_scaling.type"},
      {"norm_eps", "model.rms_norm_eps"},
      {"block_size", "data.seq_len"},
      {"context_length", "data.seq_len"},
      {"max_seq_len", "data.seq_len"},
      {"seq_length", "data.seq_len"},
      {"sequence_length", "data.seq_len"},
      {"dataset", "data.path"},
      {"data_path", "data.path"},
      {"train_data", "data.path"},
      {"workers", "data.num_workers"},
      {"dataloader_num_workers", "data.num_workers"},
      {"eval_interval", "eval.interval_steps"},
      {"eval_steps", "eval.interval_steps"},
      {"val_data", "eval.path"},
      {"save_interval", "checkpoint.interval_steps"},
      {"save_steps", "checkpoint.interval_steps"},
      {"checkpoint_interval", "checkpoint.interval_steps"},
      {"save_total_limit", "checkpoint.keep_last"},
      {"max_checkpoints", "checkpoint.keep_last"},
      {"resume_from_checkpoint", "checkpoint.resume"},
      {"log_interval", "logging.interval_steps"},
      {"logging_steps", "logging.interval_steps"},
      {"log_level", "logging.level"},
      {"out_dir", "run.output_dir"},
      {"output", "run.output_dir"},
      {"timeout", "parallel.collective_timeout_s"},
  };
  return table;
}

std::string leaf_of(const std::string& path) {
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

std::string parent_of(const std::string& path) {
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? std::string() : path.substr(0, dot);
}

}  // namespace

std::size_t edit_distance(const std::string& a, const std::string& b) {
  // Optimal string alignment distance: Levenshtein plus adjacent transpositions.
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

std::optional<std::string> suggest_key(const std::string& unknown_path) {
  const std::string leaf = leaf_of(unknown_path);
  const std::string parent = parent_of(unknown_path);
  const std::size_t tolerance = std::max<std::size_t>(1, leaf.size() / 3);

  // Score = edit distance of the leaf names; a key in another section costs one
  // more, so "training.seq_len" still finds "data.seq_len" but a same-section
  // key wins a tie. Aliases come first so that they win ties.
  std::optional<std::string> best;
  std::size_t best_score = tolerance + 1;
  auto consider = [&](const std::string& candidate_leaf, const std::string& target) {
    const std::size_t section_cost = parent_of(target) == parent ? 0 : 1;
    const std::size_t score = edit_distance(leaf, candidate_leaf) + section_cost;
    if (score < best_score) {
      best_score = score;
      best = target;
    }
  };
  for (const auto& [alias, target] : aliases()) consider(alias, target);
  for (const auto& key : key_catalog()) consider(leaf_of(key.path), key.path);
  if (best && *best == unknown_path) return std::nullopt;
  return best;
}

}  // namespace nss::config
