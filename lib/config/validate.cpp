// Value ranges and relations between keys. Everything that does not depend on
// the world size is checked here, before any rank does work.
#include <algorithm>
#include <cmath>
#include <set>

#include "config/load.h"
#include "config/problems.h"

namespace nss::config {
namespace {

class Checker {
 public:
  explicit Checker(Problems& problems) : problems_(problems) {}

  void require(bool ok, const std::string& path, const std::string& message,
               const std::string& hint = {}) {
    if (!ok) problems_.add(path, "", message, hint);
  }

  template <class T>
  void positive(T value, const std::string& path) {
    require(value > 0, path, "must be > 0, got " + text(value));
  }

  template <class T>
  void non_negative(T value, const std::string& path) {
    require(value >= 0, path, "must be >= 0, got " + text(value));
  }

  void fraction(double value, const std::string& path) {
    require(value > 0 && value <= 1, path, "must be in (0, 1], got " + text(value));
  }

  static std::string text(double value) {
    std::string s = std::to_string(value);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }
  static std::string text(std::int64_t value) { return std::to_string(value); }

 private:
  Problems& problems_;
};

void check_model(const ModelConfig& m, Checker& c) {
  c.positive(m.hidden_size, "model.hidden_size");
  c.positive(m.intermediate_size, "model.intermediate_size");
  c.positive(m.num_hidden_layers, "model.num_hidden_layers");
  c.positive(m.num_attention_heads, "model.num_attention_heads");
  c.positive(m.num_key_value_heads, "model.num_key_value_heads");
  c.positive(m.head_dim, "model.head_dim");
  c.positive(m.vocab_size, "model.vocab_size");
  c.positive(m.max_position_embeddings, "model.max_position_embeddings");
  c.positive(m.rms_norm_eps, "model.rms_norm_eps");
  c.positive(m.rope_theta, "model.rope_theta");
  if (m.num_attention_heads > 0 && m.num_key_value_heads > 0)
    c.require(m.num_attention_heads % m.num_key_value_heads == 0, "model.num_key_value_heads",
              "must divide num_attention_heads (" + std::to_string(m.num_attention_heads) +
                  "), got " + std::to_string(m.num_key_value_heads),
              "grouped-query attention shares each key/value head among an equal number of "
              "query heads");
  c.require(m.head_dim % 2 == 0, "model.head_dim",
            "must be even for rotary embeddings, got " + std::to_string(m.head_dim));
  const auto& rope = m.rope_scaling;
  if (rope.type != RopeScaling::kNone)
    c.require(rope.factor >= 1, "model.rope_scaling.factor",
              "must be >= 1 when scaling is on, got " + std::to_string(rope.factor));
  if (rope.type == RopeScaling::kLlama3) {
    c.positive(rope.low_freq_factor, "model.rope_scaling.low_freq_factor");
    c.require(rope.high_freq_factor > rope.low_freq_factor, "model.rope_scaling.high_freq_factor",
              "must be greater than low_freq_factor");
    c.positive(rope.original_max_position_embeddings,
               "model.rope_scaling.original_max_position_embeddings");
  }
}

void check_training(const TrainingConfig& t, Checker& c) {
  c.positive(t.global_batch_size, "training.global_batch_size");
  c.positive(t.micro_batch_size, "training.micro_batch_size");
  c.positive(t.max_steps, "training.max_steps");
  c.positive(t.lr, "training.lr");
  c.non_negative(t.min_lr, "training.min_lr");
  if (t.lr > 0) c.require(t.min_lr <= t.lr, "training.min_lr", "must not exceed training.lr");
  c.non_negative(t.warmup_steps, "training.warmup_steps");
  c.non_negative(t.weight_decay, "training.weight_decay");
  c.require(t.beta1 >= 0 && t.beta1 < 1, "training.beta1", "must be in [0, 1)");
  c.require(t.beta2 >= 0 && t.beta2 < 1, "training.beta2", "must be in [0, 1)");
  c.positive(t.eps, "training.eps");
  c.non_negative(t.grad_clip, "training.grad_clip");
  c.positive(t.max_skipped_steps, "training.max_skipped_steps");
  if (t.global_batch_size > 0 && t.micro_batch_size > 0)
    c.require(t.global_batch_size % t.micro_batch_size == 0, "training.micro_batch_size",
              "must divide global_batch_size (" + std::to_string(t.global_batch_size) + "), got " +
                  std::to_string(t.micro_batch_size));
  const auto& lora = t.lora;
  c.positive(lora.rank, "training.lora.rank");
  c.positive(lora.alpha, "training.lora.alpha");
  c.require(lora.dropout >= 0 && lora.dropout < 1, "training.lora.dropout", "must be in [0, 1)");
  c.require(!lora.targets.empty(), "training.lora.targets", "must name at least one projection");
  std::set<std::string> seen;
  static const std::set<std::string> kTargets = {"q_proj",    "k_proj",  "v_proj",   "o_proj",
                                                 "gate_proj", "up_proj", "down_proj"};
  for (const auto& target : lora.targets) {
    c.require(kTargets.count(target) > 0, "training.lora.targets",
              "unknown projection '" + target + "'",
              "use q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj or down_proj");
    c.require(seen.insert(target).second, "training.lora.targets",
              "'" + target + "' is listed twice");
  }
}

}  // namespace

void resolve_derived(Config& config) {
  auto& m = config.model;
  if (m.num_key_value_heads == 0) m.num_key_value_heads = m.num_attention_heads;
  if (m.head_dim == 0 && m.num_attention_heads > 0)
    m.head_dim = m.hidden_size / m.num_attention_heads;
  if (config.run.output_dir.empty()) config.run.output_dir = "runs/" + config.run.name;
  if (config.checkpoint.dir.empty()) config.checkpoint.dir = config.run.output_dir + "/checkpoints";
}

void validate(const Config& config) {
  Problems problems;
  check_values(config, problems);
  problems.throw_if_any();
}

void check_values(const Config& config, Problems& problems) {
  Checker c(problems);
  c.require(!config.run.name.empty(), "run.name", "must not be empty");
  c.require(config.run.name.find('/') == std::string::npos, "run.name", "must not contain '/'",
            "use run.output_dir to choose a location");
  c.non_negative(config.run.seed, "run.seed");
  check_model(config.model, c);

  const auto& d = config.data;
  c.require(!d.path.empty(), "data.path", "must name a token dataset",
            "build one with nss_prepare_data (docs/data.md)");
  c.positive(d.seq_len, "data.seq_len");
  c.require(d.seq_len <= config.model.max_position_embeddings, "data.seq_len",
            "exceeds model.max_position_embeddings (" +
                std::to_string(config.model.max_position_embeddings) + ")",
            "shorten data.seq_len or raise model.max_position_embeddings");
  c.non_negative(d.num_workers, "data.num_workers");
  c.positive(d.prefetch_factor, "data.prefetch_factor");

  const auto& e = config.eval;
  c.non_negative(e.interval_steps, "eval.interval_steps");
  c.positive(e.batches, "eval.batches");
  c.require(e.interval_steps == 0 || !e.path.empty(), "eval.path",
            "must name a held-out dataset when eval.interval_steps > 0",
            "set eval.path, or eval.interval_steps: 0 to disable validation");

  check_training(config.training, c);

  c.positive(config.parallel.collective_timeout_s, "parallel.collective_timeout_s");

  const auto& p = config.preflight;
  c.fraction(p.max_memory_fraction, "preflight.max_memory_fraction");
  c.fraction(p.host_memory_warn_fraction, "preflight.host_memory_warn_fraction");
  c.fraction(p.host_memory_fail_fraction, "preflight.host_memory_fail_fraction");
  c.require(p.host_memory_warn_fraction <= p.host_memory_fail_fraction,
            "preflight.host_memory_warn_fraction", "must not exceed host_memory_fail_fraction");
  c.positive(p.first_batch_timeout_s, "preflight.first_batch_timeout_s");
  c.require(p.synthetic_steps >= 2, "preflight.synthetic_steps",
            "must be >= 2 (the peak of the second optimizer step is the one that counts), got " +
                std::to_string(p.synthetic_steps));
  c.positive(p.verdict_timeout_s, "preflight.verdict_timeout_s");
  // Ranks wait for the slowest rank's dataset probe inside a watched collective.
  c.require(p.first_batch_timeout_s < config.parallel.collective_timeout_s,
            "preflight.first_batch_timeout_s",
            "must be below parallel.collective_timeout_s (" +
                c.text(config.parallel.collective_timeout_s) + ")",
            "the other ranks wait for the slowest dataset probe inside a collective, which "
            "the hang watchdog would end first; raise parallel.collective_timeout_s too");

  const auto& k = config.checkpoint;
  c.non_negative(k.interval_steps, "checkpoint.interval_steps");
  c.require(k.keep_last >= 1, "checkpoint.keep_last",
            "must be >= 1 (the newest committed step is always kept), got " +
                std::to_string(k.keep_last));
  c.require(!k.resume.empty(), "checkpoint.resume", "must be auto, never or a step directory");

  c.positive(config.logging.interval_steps, "logging.interval_steps");
}

}  // namespace nss::config
