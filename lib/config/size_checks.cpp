#include "config/size_checks.h"

#include <limits>
#include <optional>

#include "config/problems.h"

namespace nss::config {
namespace {

// A count that turns empty (nullopt) once it leaves int64, and stays so.
using Count = std::optional<std::int64_t>;

Count times(Count a, Count b) {
  return a && b ? checked_mul(*a, *b) : std::nullopt;
}

Count plus(Count a, Count b) {
  return a && b ? checked_add(*a, *b) : std::nullopt;
}

std::string text(Count count) {
  return count ? std::to_string(*count) : "more than 2^63 - 1";
}

// model::parameter_count_formula with overflow checks: the preflight compares
// that one with the built model; this one runs before anything is built.
Count parameters(const ModelConfig& m, const LoraConfig& lora) {
  const Count h = m.hidden_size, i = m.intermediate_size;
  const Count q = times(m.num_attention_heads, m.head_dim);
  const Count kv = times(m.num_key_value_heads, m.head_dim);
  // q, k, v, o; gate, up, down; two norms.
  Count block = times(h, plus(plus(times(2, q), times(2, kv)), plus(times(3, i), 2)));
  if (lora.enabled) {
    // A rank-r adapter on an [out, in] projection adds r x (in + out).
    for (const auto& target : lora.targets) {
      Count sides = 0;
      if (target == "q_proj" || target == "o_proj") sides = plus(h, q);
      if (target == "k_proj" || target == "v_proj") sides = plus(h, kv);
      if (target == "gate_proj" || target == "up_proj" || target == "down_proj") sides = plus(h, i);
      block = plus(block, times(lora.rank, sides));
    }
  }
  const Count embeddings = times(times(m.vocab_size, h), m.tie_word_embeddings ? 1 : 2);
  return plus(plus(embeddings, h), times(m.num_hidden_layers, block));
}

// "2^44 (17592186044416)".
std::string power_text(int exponent) {
  return "2^" + std::to_string(exponent) + " (" + std::to_string(std::int64_t{1} << exponent) + ")";
}

// `limit_text` names `limit` in the message; a product beyond 64 bits says so itself.
void check_product(const NamedProduct& product, std::int64_t limit, const std::string& limit_text,
                   const std::string& what, const std::string& hint, Problems& problems) {
  if (product.at_most(limit)) return;
  problems.add(product.names(), "",
               product.equation() + " " + what + (product.value() ? ", above " + limit_text : ""),
               hint);
}

}  // namespace

std::vector<MicroBatchTensor> micro_batch_tensors(const Config& config,
                                                  std::int64_t micro_batch_size) {
  const auto& m = config.model;
  const std::int64_t seq = config.data.seq_len;
  const auto tokens = [&] {
    return NamedProduct()
        .times("training.micro_batch_size", micro_batch_size)
        .times("data.seq_len", seq);
  };
  const std::string shorter = "lower training.micro_batch_size or data.seq_len";
  return {
      {"hidden states", tokens().times("model.hidden_size", m.hidden_size), shorter},
      {"attention outputs",
       tokens()
           .times("model.num_attention_heads", m.num_attention_heads)
           .times("model.head_dim", m.head_dim),
       shorter},
      {"MLP activations", tokens().times("model.intermediate_size", m.intermediate_size), shorter},
      {"logits", tokens().times("model.vocab_size", m.vocab_size), shorter},
      {"attention scores",
       tokens()
           .times("model.num_attention_heads", m.num_attention_heads)
           .times("data.seq_len", seq),
       "shorten data.seq_len (the scores grow with its square) or lower "
       "training.micro_batch_size"},
  };
}

bool micro_batch_fits(const Config& config, std::int64_t micro_batch_size) {
  for (const auto& tensor : micro_batch_tensors(config, micro_batch_size))
    if (!tensor.elements.at_most(kMaxTensorElements)) return false;
  return true;
}

void check_sizes(const Config& config, Problems& problems) {
  const auto& t = config.training;
  const std::int64_t seq = config.data.seq_len;
  constexpr std::int64_t kMaxCount = std::numeric_limits<std::int64_t>::max();
  const std::string tensor_limit = power_text(44) + ": 64 TiB in fp32, beyond any rank's memory";

  const Count params = parameters(config.model, t.lora);
  if (!params || *params > kMaxTensorElements)
    problems.add("model", "",
                 "the shape has " + text(params) + " parameters, above " + tensor_limit,
                 "lower model.num_hidden_layers, hidden_size, intermediate_size, vocab_size or "
                 "the attention heads" +
                     std::string(t.lora.enabled ? ", or training.lora.rank" : ""));

  check_product(NamedProduct()
                    .times("training.global_batch_size", t.global_batch_size)
                    .times("(data.seq_len + 1)", seq + 1),
                kMaxStepTokens, power_text(36), "tokens per optimizer step",
                "lower training.global_batch_size or data.seq_len", problems);
  check_product(NamedProduct()
                    .times("training.max_steps", t.max_steps)
                    .times("training.global_batch_size", t.global_batch_size)
                    .times("data.seq_len", seq),
                kMaxCount, "", "tokens to train on", "lower training.max_steps", problems);
  check_product(NamedProduct()
                    .times("eval.batches", config.eval.batches)
                    .times("training.global_batch_size", t.global_batch_size)
                    .times("(data.seq_len + 1)", seq + 1),
                kMaxCount, "", "tokens per validation", "lower eval.batches", problems);
  for (const auto& tensor : micro_batch_tensors(config, t.micro_batch_size))
    check_product(tensor.elements, kMaxTensorElements, tensor_limit,
                  "elements of " + tensor.what + " in one micro-batch", tensor.hint, problems);
}

}  // namespace nss::config
