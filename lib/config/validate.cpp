// Value ranges (declared by the schema, config.h), sizes (size_checks.h) and
// relations between keys. Everything that does not depend on the world size
// is checked here, before any rank does work.
#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "config/derived.h"
#include "config/load.h"
#include "config/problems.h"
#include "config/size_checks.h"
#include "config/value_codec.h"

namespace nss::config {
namespace {

class Checker {
 public:
  explicit Checker(Problems& problems) : problems_(problems) {}

  void require(bool ok, const std::string& path, const std::string& message,
               const std::string& hint = {}) {
    if (!ok) problems_.add(path, "", message, hint);
  }

  static std::string text(double value) {
    std::string s = std::to_string(value);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }

 private:
  Problems& problems_;
};

// Every number key within the range its schema field declares.
class RangeCheck {
 public:
  explicit RangeCheck(Problems& problems) : problems_(problems) {}

  template <class T>
  void field(const char* name, T& value, const char*, const Range<T>& range = {}) {
    if constexpr (has_range_v<T>) {
      if (range.contains(value)) return;
      problems_.add(join(name), "",
                    "must be in " + range.text() + ", got " + ValueCodec<T>::text(value));
      all_in_range_ = false;
    }
  }

  template <class S>
  void section(const char* name, S& value, const char*) {
    const std::string saved = prefix_;
    prefix_ = join(name);
    value.visit(*this);
    prefix_ = saved;
  }

  bool all_in_range() const { return all_in_range_; }

 private:
  std::string join(const char* name) const {
    return prefix_.empty() ? std::string(name) : prefix_ + "." + name;
  }

  Problems& problems_;
  std::string prefix_;
  bool all_in_range_ = true;
};

void check_model(const ModelConfig& m, Checker& c) {
  // head_dim 0 resolves to hidden_size / num_attention_heads, which can be 0.
  if (m.num_attention_heads > 0)
    c.require(m.head_dim != 0, "model.head_dim",
              "hidden_size / num_attention_heads is 0 (" + std::to_string(m.hidden_size) + " / " +
                  std::to_string(m.num_attention_heads) + ")",
              "set model.head_dim, or a hidden_size of at least num_attention_heads");
  if (m.num_key_value_heads > 0)
    c.require(m.num_attention_heads % m.num_key_value_heads == 0, "model.num_key_value_heads",
              "must divide num_attention_heads (" + std::to_string(m.num_attention_heads) +
                  "), got " + std::to_string(m.num_key_value_heads),
              "grouped-query attention shares each key/value head among an equal number of "
              "query heads");
  c.require(m.head_dim % 2 == 0, "model.head_dim",
            "must be even for rotary embeddings, got " + std::to_string(m.head_dim));
  const auto& rope = m.rope_scaling;
  if (rope.type == RopeScaling::kLlama3)
    c.require(rope.high_freq_factor > rope.low_freq_factor, "model.rope_scaling.high_freq_factor",
              "must be greater than low_freq_factor");
}

void check_training(const TrainingConfig& t, bool poisson_batches, Checker& c) {
  if (t.lr > 0) c.require(t.min_lr <= t.lr, "training.min_lr", "must not exceed training.lr");
  // A Poisson batch's size varies: global_batch_size is only its expectation.
  if (t.micro_batch_size > 0 && !poisson_batches)
    c.require(t.global_batch_size % t.micro_batch_size == 0, "training.micro_batch_size",
              "must divide global_batch_size (" + std::to_string(t.global_batch_size) + "), got " +
                  std::to_string(t.micro_batch_size));
  const auto& lora = t.lora;
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
  if (lora.quantize_base != QuantizeBase::kNone)
    c.require(lora.enabled, "training.lora.quantize_base",
              std::string("quantises the frozen base of a LoRA run, but training.lora.enabled is "
                          "false"),
              "set training.lora.enabled: true, or quantize_base: none to train the full model");
  if (lora.double_quant)
    c.require(lora.quantize_base == QuantizeBase::kNf4, "training.lora.double_quant",
              "quantises NF4 block scales, but training.lora.quantize_base is none",
              "set training.lora.quantize_base: nf4, or double_quant: false");
}

// Without activation checkpointing the backward needs the graph built in
// forward, which holds the unit's gathered parameters: they cannot be freed.
// QLoRA's NF4 blocks of 64 elements restart at each tensor: a tensor rank
// quantising its part gets the whole tensor's blocks when the part holds
// whole blocks (a column split's rows of in / T features, a row split's
// elements) and the scales are not quantised again (double quantisation's
// groups of 256 blocks and its mean span the parts).
void check_tensor_parallel_qlora(const Config& config, std::int64_t t, Checker& c) {
  const auto& m = config.model;
  const std::string size = "parallel.tensor_parallel_size " + std::to_string(t);
  c.require(!config.training.lora.double_quant, "training.lora.double_quant",
            "double quantisation is not supported with tensor parallelism (" + size + ")",
            "set training.lora.double_quant: false, or parallel.tensor_parallel_size: 1");
  const std::int64_t kv = m.num_key_value_heads > 0 ? m.num_key_value_heads : m.num_attention_heads;
  if (m.num_attention_heads % t != 0 || m.intermediate_size % t != 0 || (kv % t && t % kv))
    return;  // the tensor-parallel plan names the sizes that work
  const std::int64_t d = m.head_dim, h = m.hidden_size;
  const std::pair<const char*, std::int64_t> parts[] = {
      {"q_proj's rows", m.num_attention_heads / t * d * h},
      {"k_proj's and v_proj's rows", std::max<std::int64_t>(kv / t, 1) * d * h},
      {"gate_proj's and up_proj's rows", m.intermediate_size / t * h},
      {"o_proj's input features", m.num_attention_heads * d / t},
      {"down_proj's input features", m.intermediate_size / t}};
  for (const auto& [what, elements] : parts)
    c.require(elements % 64 == 0, "training.lora.quantize_base",
              std::string("nf4 with ") + size + ": a tensor rank's part of " + what + " (" +
                  std::to_string(elements) +
                  " elements) is not a whole number of 64-element NF4 blocks",
              "choose a tensor_parallel_size whose parts hold whole blocks, or quantize_base: "
              "none");
}

// What tensor parallelism would not compute exactly is refused, never
// approximated: QLoRA where a part of a weight would be quantised otherwise
// than the whole weight.
void check_tensor_parallel(const Config& config, Checker& c) {
  const std::int64_t t = config.parallel.tensor_parallel_size;
  if (t > 1 && config.training.lora.quantize_base == QuantizeBase::kNf4)
    check_tensor_parallel_qlora(config, t, c);
}

void check_parallel(const Config& config, Checker& c) {
  check_tensor_parallel(config, c);
  if (config.parallel.reshard_after_forward == ReshardPolicy::kTrue)
    c.require(recomputes(config), "parallel.reshard_after_forward",
              "is true, but training.activation_checkpointing is none: the graph kept for "
              "backward holds every unit's gathered parameters",
              "set reshard_after_forward: auto (or false), or activation_checkpointing: full "
              "or selective");
}

// DP-SGD clips each example's gradient: an example must be one row (no
// packing, no split), and only LoRA adapters have per-example norms.
void check_privacy(const Config& config, Checker& c) {
  const PrivacyConfig& p = config.privacy;
  if (!p.enabled) return;
  c.require(config.training.lora.enabled, "privacy.enabled",
            "DP-SGD trains LoRA adapters (per-example clipping of the full model is not "
            "supported), but training.lora.enabled is false",
            "set training.lora.enabled: true");
  c.require(config.data.packing == Packing::kNone, "data.packing",
            std::string("must be none under privacy (one example per row), got ") +
                choice_name(config.data.packing),
            "set data.packing: none");
  c.require(config.data.long_documents == LongDocuments::kTruncate, "data.long_documents",
            "must be truncate under privacy: a split example would be clipped once per piece "
            "and double its sensitivity",
            "set data.long_documents: truncate");
  if (p.delta.value)
    c.require(*p.delta.value > 0 && *p.delta.value < 1, "privacy.delta",
              "must be in (0, 1) or auto, got " + c.text(*p.delta.value),
              "delta is the probability that the guarantee fails: keep it well below 1 / n, or "
              "leave it auto (1 / n^1.2)");
  c.require(p.noise_multiplier > 0 || p.target_epsilon > 0, "privacy.target_epsilon",
            "is 0 and so is privacy.noise_multiplier: nothing sets the noise",
            "set target_epsilon (e.g. 8) to calibrate the noise, or a noise_multiplier");
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
  Config copy = config;  // the schema visitor takes fields by reference
  RangeCheck ranges(problems);
  copy.visit(ranges);
  // Products of values outside their ranges would only repeat those problems.
  if (ranges.all_in_range()) check_sizes(config, problems);

  Checker c(problems);
  c.require(!config.run.name.empty(), "run.name", "must not be empty");
  c.require(config.run.name.find('/') == std::string::npos, "run.name", "must not contain '/'",
            "use run.output_dir to choose a location");
  check_model(config.model, c);

  const auto& d = config.data;
  c.require(!d.path.empty(), "data.path", "must name a token dataset",
            "build one with nss_prepare_data (docs/data.md)");
  c.require(d.seq_len <= config.model.max_position_embeddings, "data.seq_len",
            "exceeds model.max_position_embeddings (" +
                std::to_string(config.model.max_position_embeddings) + ")",
            "shorten data.seq_len or raise model.max_position_embeddings");

  const auto& e = config.eval;
  c.require(e.interval_steps == 0 || !e.path.empty(), "eval.path",
            "must name a held-out dataset when eval.interval_steps > 0",
            "set eval.path, or eval.interval_steps: 0 to disable validation");

  check_training(config.training, poisson_batches(config), c);
  check_privacy(config, c);
  check_parallel(config, c);

  const auto& p = config.preflight;
  c.require(p.host_memory_warn_fraction <= p.host_memory_fail_fraction,
            "preflight.host_memory_warn_fraction", "must not exceed host_memory_fail_fraction");
  // Ranks wait for the slowest rank's dataset probe inside a watched collective.
  c.require(p.first_batch_timeout_s < config.parallel.collective_timeout_s,
            "preflight.first_batch_timeout_s",
            "must be below parallel.collective_timeout_s (" +
                c.text(config.parallel.collective_timeout_s) + ")",
            "the other ranks wait for the slowest dataset probe inside a collective, which "
            "the hang watchdog would end first; raise parallel.collective_timeout_s too");

  const auto& s = config.pipeline;
  c.require(s.holdout < 1 || s.holdout == std::floor(s.holdout), "pipeline.holdout",
            "must be a fraction below 1 or a whole count of rows", "e.g. 0.05 or 200");
  c.require(s.order_by.empty() || !s.group_by.empty(), "pipeline.order_by",
            "orders the rows inside a group: it needs pipeline.group_by",
            "set pipeline.group_by too, or drop pipeline.order_by");
}

}  // namespace nss::config
