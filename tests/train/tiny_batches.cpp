#include "tiny_batches.h"

#include <torch/torch.h>

#include "model/param_spec.h"
#include "model/tensor_parallel_params.h"

namespace nss::train::testing {
namespace {

// Packed, sample `id`'s row holds documents of 3 + id % 4 tokens, the rest
// padding from slot 10: positions restart per document, labels that cross a
// document or reach padding are not targets.
void pack(MicroBatchTensors& batch, const std::vector<std::int64_t>& ids) {
  const auto rows = static_cast<std::int64_t>(ids.size());
  batch.positions = torch::zeros({rows, kSeqLen}, torch::kInt64);
  batch.segments = torch::full({rows, kSeqLen}, -1, torch::kInt64);
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t length = 3 + ids[static_cast<std::size_t>(r)] % 4;
    for (std::int64_t i = 0; i < 10; ++i) {
      batch.positions[r][i] = i % length;
      batch.segments[r][i] = i / length;
      if (i % length == length - 1 || i == 9) batch.target_mask[r][i] = 0;
    }
    for (std::int64_t i = 10; i < kSeqLen; ++i) batch.target_mask[r][i] = 0;
  }
}

}  // namespace

std::vector<std::int64_t> sample_tokens(std::int64_t id, std::int64_t vocab) {
  std::vector<std::int64_t> tokens(kSeqLen + 1);
  std::uint64_t state = 0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(id + 1);
  for (auto& t : tokens) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    t = static_cast<std::int64_t>((state >> 33) % static_cast<std::uint64_t>(vocab));
  }
  return tokens;
}

torch::Tensor target_mask_of(const std::vector<std::int64_t>& ids, bool masked) {
  torch::Tensor mask = torch::ones({static_cast<std::int64_t>(ids.size()), kSeqLen});
  if (!masked) return mask;
  for (std::size_t r = 0; r < ids.size(); ++r) {
    const auto row = static_cast<std::int64_t>(r);
    if (ids[r] % 7 == 3)
      mask[row].zero_();
    else
      mask[row].narrow(0, 0, ids[r] % 5).zero_();
  }
  return mask;
}

MicroBatchTensors batch_of(const std::vector<std::int64_t>& ids, std::int64_t vocab,
                           std::int64_t step, std::uint64_t seed, bool masked, bool packed) {
  torch::Tensor tokens =
      torch::empty({static_cast<std::int64_t>(ids.size()), kSeqLen + 1}, torch::kInt64);
  for (std::size_t r = 0; r < ids.size(); ++r) {
    const auto row = sample_tokens(ids[r], vocab);
    for (std::int64_t j = 0; j <= kSeqLen; ++j) tokens[static_cast<std::int64_t>(r)][j] = row[j];
  }
  MicroBatchTensors batch;
  batch.inputs = tokens.narrow(1, 0, kSeqLen).contiguous();
  batch.targets = tokens.narrow(1, 1, kSeqLen).contiguous();
  batch.target_mask = target_mask_of(ids, masked);
  batch.randomness = {seed, step, ids};
  if (packed) pack(batch, ids);
  return batch;
}

namespace {

// The whole tensor from every tensor rank's part (arch/tensor_parallel.h).
torch::Tensor whole_from_parts(const std::vector<torch::Tensor>& parts,
                               const arch::TensorPlacement& placement,
                               const arch::TensorParallelPlan& plan,
                               const std::vector<std::int64_t>& whole_shape) {
  switch (placement.split) {
    case arch::TensorSplit::kWhole:
      return parts.front();
    case arch::TensorSplit::kColumns:
      return torch::cat(parts, 1);
    case arch::TensorSplit::kRows:
      return torch::cat(parts, 0).narrow(0, 0, whole_shape[0]);
    case arch::TensorSplit::kHeadGroups:
      break;
  }
  std::vector<torch::Tensor> heads;
  for (std::size_t t = 0; t < parts.size(); t += static_cast<std::size_t>(plan.kv_replicas))
    heads.push_back(parts[t]);
  return torch::cat(heads, 0);
}

// Each parameter's parts gathered over the tensor group and put together.
void put_parts_together(ShardedLlama& model, std::map<std::string, torch::Tensor>& params) {
  const model::TensorParallel* tp = model.tensor_parallel();
  if (!tp) return;
  for (const auto& spec : model::all_parameters(model.model(), model.lora())) {
    const auto it = params.find(spec.name);
    if (it == params.end()) continue;
    const torch::Tensor mine = it->second.contiguous();
    torch::Tensor all = torch::empty({mine.numel() * tp->size()}, mine.options());
    tp->group->all_gather(mine.data_ptr(), all.data_ptr(), static_cast<std::size_t>(mine.numel()),
                          DType::kFloat32);
    std::vector<torch::Tensor> parts;
    for (int t = 0; t < tp->size(); ++t)
      parts.push_back(all.narrow(0, t * mine.numel(), mine.numel()).view(mine.sizes()));
    it->second =
        whole_from_parts(parts, model::parameter_placement(*tp->plan, spec), *tp->plan, spec.shape);
  }
}

}  // namespace

std::map<std::string, torch::Tensor> gather_trainable(
    ShardedLlama& model, const std::function<torch::Tensor(fsdp::ShardedUnit&)>& flat) {
  std::map<std::string, torch::Tensor> out;
  for (auto& unit : model.units()) {
    const auto& layout = unit->layout();
    const std::int64_t shard = layout.shard_size(true);
    torch::Tensor mine = flat(*unit).detach().contiguous();
    torch::Tensor full = torch::empty({shard * unit->comm().size()}, mine.options());
    unit->comm().all_gather(mine.data_ptr(), full.data_ptr(), shard, DType::kFloat32);
    for (std::size_t i = 0; i < layout.params().size(); ++i) {
      if (!layout.slot(i).trainable) continue;
      out[layout.params()[i].name] =
          full.narrow(0, layout.slot(i).offset, layout.params()[i].numel())
              .view(layout.params()[i].shape)
              .cpu();
    }
  }
  put_parts_together(model, out);
  return out;
}

void use_family(config::ModelConfig& m, const std::string& family) {
  m.family = family;
  const auto layers = static_cast<std::size_t>(m.num_hidden_layers);
  if (family == "mistral") {
    m.sliding_window = 5;
    m.layer_types.assign(layers, "sliding_attention");
  } else if (family == "qwen2" || family == "qwen3") {
    m.sliding_window = 5;
    m.layer_types.assign(layers, "full_attention");
    m.layer_types.back() = "sliding_attention";
  } else if (family == "smollm3") {
    m.layer_types.assign(layers, "full_attention");
    m.layer_types.back() = "full_attention_no_rope";
  } else if (family == "gemma3") {
    m.sliding_window = 5;
    m.layer_types.assign(layers, "sliding_attention");
    m.layer_types.back() = "full_attention";
    m.rope_theta = 1e6;
    m.rope_local_theta = 1e4;
    m.query_pre_attn_scalar = 12;
  }
}

}  // namespace nss::train::testing
