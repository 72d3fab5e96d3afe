#include "synthetic_state.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "layout/sharded_state_layout.h"

namespace nss::testing {
namespace {

using checkpoint::Piece;
using checkpoint::ShardBuffer;
using checkpoint::TensorSpec;

std::uint32_t fnv1a32(const std::string& text) {
  std::uint32_t h = 2166136261u;
  for (unsigned char c : text) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

const char* kStates[] = {"", "optimizer.exp_avg.", "optimizer.exp_avg_sq."};
const char* kDatasets[] = {"/model/unit_", "/optimizer/exp_avg/unit_",
                           "/optimizer/exp_avg_sq/unit_"};

std::string unit_suffix(std::size_t unit) {
  char text[32];
  std::snprintf(text, sizeof text, "%03zu", unit);
  return text;
}

bool is_nan_bits(float v) {
  return std::isnan(v);
}

}  // namespace

// Appends both AdamW moments of every tensor so far.
void add_moments(SyntheticModel& model) {
  const std::size_t n = model.tensors.size();
  for (int k = 1; k <= 2; ++k)
    for (std::size_t i = 0; i < n; ++i)
      model.tensors.push_back(
          {kStates[k] + model.tensors[i].name, model.tensors[i].shape, DType::kFloat32});
}

SyntheticModel synthetic_model(const SyntheticShape& s, bool with_optimizer, bool tied) {
  SyntheticModel model;
  auto add = [&](std::vector<std::string>& unit, const std::string& name,
                 std::vector<std::int64_t> shape) {
    model.tensors.push_back({name, std::move(shape), DType::kFloat32});
    unit.push_back(name);
  };
  std::vector<std::string> embed;
  add(embed, "model.embed_tokens.weight", {s.vocab, s.hidden});
  model.units.push_back(embed);
  for (std::int64_t i = 0; i < s.layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    std::vector<std::string> unit;
    add(unit, p + "self_attn.q_proj.weight", {s.hidden, s.hidden});
    add(unit, p + "self_attn.k_proj.weight", {s.kv_dim, s.hidden});
    add(unit, p + "self_attn.v_proj.weight", {s.kv_dim, s.hidden});
    add(unit, p + "self_attn.o_proj.weight", {s.hidden, s.hidden});
    add(unit, p + "mlp.gate_proj.weight", {s.intermediate, s.hidden});
    add(unit, p + "mlp.up_proj.weight", {s.intermediate, s.hidden});
    add(unit, p + "mlp.down_proj.weight", {s.hidden, s.intermediate});
    add(unit, p + "input_layernorm.weight", {s.hidden});
    add(unit, p + "post_attention_layernorm.weight", {s.hidden});
    model.units.push_back(unit);
  }
  std::vector<std::string> head;
  add(head, "model.norm.weight", {s.hidden});
  if (!tied) add(head, "lm_head.weight", {s.vocab, s.hidden});
  model.units.push_back(head);
  if (with_optimizer) add_moments(model);
  return model;
}

SyntheticModel synthetic_lora_model(const SyntheticShape& s, std::int64_t rank) {
  SyntheticModel model;
  for (std::int64_t i = 0; i < s.layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".self_attn.";
    std::vector<std::string> unit;
    for (const auto& [proj, out] :
         {std::pair<const char*, std::int64_t>{"q_proj", s.hidden}, {"v_proj", s.kv_dim}}) {
      const std::string module = p + proj;
      model.tensors.push_back({module + ".lora_A.weight", {rank, s.hidden}, DType::kFloat32});
      model.tensors.push_back({module + ".lora_B.weight", {out, rank}, DType::kFloat32});
      unit.push_back(module + ".lora_A.weight");
      unit.push_back(module + ".lora_B.weight");
    }
    model.units.push_back(unit);
  }
  add_moments(model);
  return model;
}

RankState make_rank_state(const SyntheticModel& model, int rank, int world, bool with_optimizer) {
  std::map<std::string, std::uint64_t> numel;
  for (const auto& t : model.tensors) numel[t.name] = checkpoint::element_count(t.shape);
  RankState state;
  const int kinds = with_optimizer ? 3 : 1;
  for (int k = 0; k < kinds; ++k) {
    for (std::size_t u = 0; u < model.units.size(); ++u) {
      std::uint64_t flat = 0;
      for (const auto& name : model.units[u]) flat += numel[name];
      const std::uint64_t multiple = 4 * static_cast<std::uint64_t>(world);
      const std::uint64_t padded = (flat + multiple - 1) / multiple * multiple;
      const std::uint64_t shard = padded / world;
      const std::uint64_t lo = shard * rank, hi = lo + shard;
      ShardBuffer buffer{kDatasets[k] + unit_suffix(u), DType::kFloat32, nullptr, shard, {}};
      std::uint64_t begin = 0;
      for (const auto& name : model.units[u]) {
        const std::uint64_t end = begin + numel[name];
        const std::uint64_t a = std::max(begin, lo), b = std::min(end, hi);
        if (a < b) buffer.pieces.push_back({kStates[k] + name, a - begin, b - a, a - lo});
        begin = end;
      }
      state.storage.emplace_back(shard, std::numeric_limits<float>::quiet_NaN());
      state.buffers.push_back(std::move(buffer));
    }
  }
  for (std::size_t i = 0; i < state.buffers.size(); ++i)
    state.buffers[i].data = state.storage[i].data();
  return state;
}

namespace {

// The formula with the name's code already computed (hashing per element is slow).
float value_of(std::uint64_t code, std::uint64_t element, std::int64_t step) {
  const std::uint64_t mixed =
      (element * 2654435761ull + static_cast<std::uint64_t>(step) * 40503ull + code * 97ull) %
      (1ull << 20);
  return static_cast<float>(static_cast<double>(mixed) / 524288.0 - 1.0);
}

}  // namespace

float expected_value(const std::string& tensor, std::uint64_t element, std::int64_t step) {
  return value_of(fnv1a32(tensor) % 4096, element, step);
}

void fill_rank_state(RankState& state, std::int64_t step) {
  for (auto& buffer : state.buffers) {
    float* data = static_cast<float*>(buffer.data);
    for (const auto& piece : buffer.pieces) {
      const std::uint64_t code = fnv1a32(piece.tensor) % 4096;
      for (std::uint64_t i = 0; i < piece.length; ++i)
        data[piece.buffer_offset + i] = value_of(code, piece.tensor_offset + i, step);
    }
  }
}

std::uint64_t count_mismatches(const RankState& state, std::int64_t step, bool optimizer) {
  std::uint64_t bad = 0;
  for (const auto& buffer : state.buffers) {
    const float* data = static_cast<const float*>(buffer.data);
    std::vector<bool> covered(buffer.count, false);
    for (const auto& piece : buffer.pieces) {
      for (std::uint64_t i = 0; i < piece.length; ++i) covered[piece.buffer_offset + i] = true;
      if (!optimizer && layout::is_optimizer_state(piece.tensor)) continue;
      const std::uint64_t code = fnv1a32(piece.tensor) % 4096;
      for (std::uint64_t i = 0; i < piece.length; ++i) {
        const float want = value_of(code, piece.tensor_offset + i, step);
        if (std::memcmp(&want, &data[piece.buffer_offset + i], sizeof(float)) != 0) ++bad;
      }
    }
    for (std::uint64_t i = 0; i < buffer.count; ++i)
      if (!covered[i] && !is_nan_bits(data[i])) ++bad;
  }
  return bad;
}

void set_pieces(RankState& state, float value, bool optimizer) {
  for (auto& buffer : state.buffers) {
    float* data = static_cast<float*>(buffer.data);
    for (const auto& piece : buffer.pieces) {
      if (!optimizer && layout::is_optimizer_state(piece.tensor)) continue;
      for (std::uint64_t i = 0; i < piece.length; ++i) data[piece.buffer_offset + i] = value;
    }
  }
}

}  // namespace nss::testing
