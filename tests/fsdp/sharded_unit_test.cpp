// The FSDP unit technique against plain autograd on unsharded parameters, at
// 1, 2 and 4 ranks: three small units (one tied to the first, one with frozen
// parameters, sizes that need padding), two micro-batches per rank, with and
// without activation checkpointing (full or selective: selective equals full
// bitwise and runs the kept segment once), with and without prefetching the next
// unit's gather. Gradients must match the gradient of the global loss;
// traffic must match the accounting formula (prefetch gathers nothing more); a
// prefetched gather of a shard that changed since is not used.
#include "fsdp/sharded_unit.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "comm/mpi_communicator.h"

namespace nss::fsdp {
namespace {

constexpr int kDim = 7;

std::vector<layout::FlatParam> first_params() {
  return {{"w0", {kDim, kDim}, true, true}, {"b0", {kDim}, true, false}};
}
std::vector<layout::FlatParam> middle_params() {
  return {{"w1", {kDim, kDim}, true, true},
          {"frozen", {kDim, 3}, false, false},
          {"adapter", {3, kDim}, true, true},
          {"scale", {3}, true, false}};
}
std::vector<layout::FlatParam> head_params() {
  return {{"w2", {5, kDim}, true, true}};
}

torch::Tensor first_compute(const torch::Tensor& x, const std::vector<torch::Tensor>& p,
                            KeptSegments* = nullptr) {
  return torch::tanh(torch::matmul(x, p[0].t()) + p[1]);
}
// How often the middle unit's segment ran (selective recompute runs it once
// per micro-batch, full recompute twice).
int segment_runs = 0;
// The middle unit's w1 product is the segment selective recompute keeps:
// its inputs are an activation and a parameter.
torch::Tensor middle_compute(const torch::Tensor& x, const std::vector<torch::Tensor>& p,
                             KeptSegments* kept = nullptr) {
  const auto low = torch::matmul(torch::matmul(x, p[1]) * p[3], p[2]);  // [B,3] -> [B,D]
  const auto product = run_segment(kept, {x, p[0]}, [](const std::vector<torch::Tensor>& in) {
    ++segment_runs;
    return torch::relu(torch::matmul(in[0], in[1].t()));
  });
  return product + 0.5 * low + x;
}
// Head with the first unit's w0 tied in (params 1 and 2 are w0, b0).
torch::Tensor head_compute(const torch::Tensor& x, const std::vector<torch::Tensor>& p,
                           KeptSegments* = nullptr) {
  const auto y = torch::matmul(torch::matmul(x, p[1]), p[0].t());
  return (y * y).sum() * 0.01;
}

// Deterministic parameter values from (name, element index).
float value_of(const std::string& name, std::int64_t i) {
  const auto h = std::hash<std::string>{}(name) % 97;
  return static_cast<float>(std::sin(0.37 * static_cast<double>(i) + static_cast<double>(h)) * 0.5);
}

torch::Tensor full_param(const layout::FlatParam& p) {
  auto t = torch::empty({p.numel()});
  for (std::int64_t i = 0; i < p.numel(); ++i) t[i] = value_of(p.name, i);
  return t.view(p.shape);
}

torch::Tensor batch_for(int rank, int micro) {
  return torch::arange(0, 3 * kDim, torch::kFloat32)
      .view({3, kDim})
      .mul(0.05)
      .add(rank * 0.3 + micro * 0.11)
      .sin();
}

struct Fixture {
  Fixture(comm::Communicator& comm, config::Recompute recompute, bool prefetch = false)
      : first("first", layout::FlatLayout(first_params(), comm.size()), comm,
              {torch::kFloat32, torch::kCPU, recompute, prefetch}),
        middle("middle", layout::FlatLayout(middle_params(), comm.size()), comm,
               {torch::kFloat32, torch::kCPU, recompute, prefetch}),
        head("head", layout::FlatLayout(head_params(), comm.size()), comm,
             {torch::kFloat32, torch::kCPU, recompute, prefetch}) {
    first.set_prefetch_targets(&middle, nullptr);
    middle.set_prefetch_targets(&head, &first);
    head.set_prefetch_targets(nullptr, &middle);
    const ParamFiller filler = [](const layout::FlatParam& p, std::int64_t offset,
                                  std::int64_t count, float* out) {
      for (std::int64_t i = 0; i < count; ++i) out[i] = value_of(p.name, offset + i);
    };
    first.materialize(filler);
    middle.materialize(filler);
    head.materialize(filler);
  }
  torch::Tensor loss(const torch::Tensor& x) {
    auto h = first.apply(x, first_fn);
    h = middle.apply(h, middle_fn);
    return head.apply(h, head_fn, &first);
  }
  ShardedUnit first, middle, head;
  UnitCompute first_fn = [](const torch::Tensor& x, const std::vector<torch::Tensor>& p,
                            KeptSegments* kept) { return first_compute(x, p, kept); };
  UnitCompute middle_fn = [](const torch::Tensor& x, const std::vector<torch::Tensor>& p,
                             KeptSegments* kept) { return middle_compute(x, p, kept); };
  UnitCompute head_fn = [](const torch::Tensor& x, const std::vector<torch::Tensor>& p,
                           KeptSegments* kept) { return head_compute(x, p, kept); };
};

// Full gradient of one unit's trainable parameters, gathered from every rank's shard.
std::vector<torch::Tensor> gathered_grads(ShardedUnit& unit) {
  const auto& layout = unit.layout();
  const std::int64_t shard = layout.shard_size(true);
  torch::Tensor full = torch::empty({shard * unit.comm().size()});
  torch::Tensor grad = unit.master().grad().contiguous();
  unit.comm().all_gather(grad.data_ptr(), full.data_ptr(), shard, DType::kFloat32);
  std::vector<torch::Tensor> out;
  for (std::size_t i = 0; i < layout.params().size(); ++i) {
    if (!layout.slot(i).trainable) continue;
    out.push_back(full.narrow(0, layout.slot(i).offset, layout.params()[i].numel())
                      .view(layout.params()[i].shape));
  }
  return out;
}

void check_against_reference(config::Recompute recompute, bool prefetch) {
  auto comm = comm::MpiCommunicator::create(MPI_COMM_WORLD);
  Fixture sharded(*comm, recompute, prefetch);
  for (int micro = 0; micro < 2; ++micro) sharded.loss(batch_for(comm->rank(), micro)).backward();

  // Reference: the global loss (every rank's micro-batches) on unsharded parameters.
  std::map<std::string, torch::Tensor> full;
  for (const auto& list : {first_params(), middle_params(), head_params()})
    for (const auto& p : list) full[p.name] = full_param(p).requires_grad_(p.trainable);
  torch::Tensor total = torch::zeros({});
  for (int r = 0; r < comm->size(); ++r) {
    for (int micro = 0; micro < 2; ++micro) {
      auto h = first_compute(batch_for(r, micro), {full["w0"], full["b0"]});
      h = middle_compute(h, {full["w1"], full["frozen"], full["adapter"], full["scale"]});
      total = total + head_compute(h, {full["w2"], full["w0"], full["b0"]});
    }
  }
  total.backward();

  const auto first_grads = gathered_grads(sharded.first);
  EXPECT_TRUE(torch::allclose(first_grads[0], full["w0"].grad(), 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(first_grads[1], full["b0"].grad(), 1e-5, 1e-6));
  const auto middle_grads = gathered_grads(sharded.middle);
  ASSERT_EQ(middle_grads.size(), 3u);  // the frozen parameter has no gradient
  EXPECT_TRUE(torch::allclose(middle_grads[0], full["w1"].grad(), 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(middle_grads[1], full["adapter"].grad(), 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(middle_grads[2], full["scale"].grad(), 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(gathered_grads(sharded.head)[0], full["w2"].grad(), 1e-5, 1e-6));
  // Padding never receives gradient.
  const auto& layout = sharded.middle.layout();
  const std::int64_t shard = layout.shard_size(true);
  const std::int64_t padding_start =
      std::clamp<std::int64_t>(layout.numel(true) - comm->rank() * shard, 0, shard);
  const auto padding =
      sharded.middle.master().grad().narrow(0, padding_start, shard - padding_start);
  EXPECT_EQ(padding.abs().sum().item<float>(), 0.0f);
}

constexpr config::Recompute kFull = config::Recompute::kFull;
constexpr config::Recompute kSelective = config::Recompute::kSelective;
constexpr config::Recompute kNone = config::Recompute::kNone;

TEST(ShardedUnit, GradientsMatchUnshardedWithCheckpointing) {
  check_against_reference(kFull, false);
  check_against_reference(kFull, true);
}
TEST(ShardedUnit, GradientsMatchUnshardedWithSelectiveCheckpointing) {
  check_against_reference(kSelective, false);
  check_against_reference(kSelective, true);
}
TEST(ShardedUnit, GradientsMatchUnshardedWithoutCheckpointing) {
  check_against_reference(kNone, false);
  check_against_reference(kNone, true);
}

// Selective recompute runs the kept segment once per micro-batch and gives
// full recompute's loss and gradients bit for bit; without a backward
// (no grad) nothing is kept and the segment runs as usual.
TEST(ShardedUnit, SelectiveRecomputeRunsTheSegmentOnceAndEqualsFullBitwise) {
  auto comm = comm::MpiCommunicator::create(MPI_COMM_WORLD);
  std::map<config::Recompute, std::vector<torch::Tensor>> grads;
  std::map<config::Recompute, std::vector<float>> losses;
  for (const config::Recompute recompute : {kFull, kSelective}) {
    Fixture sharded(*comm, recompute);
    segment_runs = 0;
    for (int micro = 0; micro < 2; ++micro) {
      torch::Tensor loss = sharded.loss(batch_for(comm->rank(), micro));
      losses[recompute].push_back(loss.item<float>());
      loss.backward();
    }
    EXPECT_EQ(segment_runs, recompute == kSelective ? 2 : 4);
    for (ShardedUnit* unit : {&sharded.first, &sharded.middle, &sharded.head})
      grads[recompute].push_back(unit->master().grad().clone());
    segment_runs = 0;
    torch::NoGradGuard no_grad;
    sharded.loss(batch_for(comm->rank(), 0));
    EXPECT_EQ(segment_runs, 1);
  }
  EXPECT_EQ(losses[kFull], losses[kSelective]);
  for (std::size_t u = 0; u < grads[kFull].size(); ++u)
    EXPECT_TRUE(torch::equal(grads[kFull][u], grads[kSelective][u])) << "unit " << u;
}

// A kept segment whose output depends on none of its inputs (attention over
// a row of padding alone) passes no gradient instead of failing the backward.
TEST(KeptSegments, AnOutputIndependentOfItsInputsPassesNoGradient) {
  const Segment zeros = [](const std::vector<torch::Tensor>& in) {
    return torch::zeros_like(in[0]);
  };
  KeptSegments recording = KeptSegments::recording();
  {
    torch::NoGradGuard no_grad;
    recording.run({torch::ones({2, 3})}, zeros);
  }
  KeptSegments replay = KeptSegments::replaying(recording.kept());
  const torch::Tensor leaf = torch::ones({2, 3}).requires_grad_(true);
  (replay.run({leaf * 2}, zeros).sum() + leaf.sum()).backward();
  EXPECT_TRUE(torch::equal(leaf.grad(), torch::ones({2, 3})));
}

TEST(ShardedUnit, TrafficMatchesTheAccountingFormula) {
  auto comm = comm::MpiCommunicator::create(MPI_COMM_WORLD);
  for (const config::Recompute recompute : {kFull, kSelective, kNone}) {
    for (const bool prefetch : {false, true}) {
      Fixture sharded(*comm, recompute, prefetch);
      comm->reset_stats();
      sharded.loss(batch_for(comm->rank(), 0)).backward();
      const auto stats = comm->stats();
      const double n = comm->size();
      // Psi_all: every gathered buffer (the tied first unit counted again in the head).
      const auto padded = [](ShardedUnit& u, bool t) {
        return static_cast<double>(u.layout().padded(t));
      };
      const double psi_all = padded(sharded.first, true) + padded(sharded.middle, true) +
                             padded(sharded.middle, false) + padded(sharded.head, true) +
                             padded(sharded.first, true);
      const double psi_trainable = padded(sharded.first, true) + padded(sharded.middle, true) +
                                   padded(sharded.head, true) + padded(sharded.first, true);
      const double gathers = recompute != kNone ? 2 : 1;
      EXPECT_DOUBLE_EQ(stats[comm::CollectiveKind::kAllGather].bytes,
                       (n - 1) / n * gathers * psi_all * 4);
      EXPECT_DOUBLE_EQ(stats[comm::CollectiveKind::kReduceScatter].bytes,
                       (n - 1) / n * psi_trainable * 4);
    }
  }
}

TEST(ShardedUnit, PrefetchOfAShardThatChangedIsNotUsed) {
  auto comm = comm::MpiCommunicator::create(MPI_COMM_WORLD);
  Fixture sharded(*comm, kFull, true);
  sharded.middle.prefetch("forward");
  {
    torch::NoGradGuard no_grad;
    sharded.middle.master().add_(1.0f);  // as an optimizer step would
  }
  const torch::Tensor gathered = sharded.middle.gather(fsdp::FlatBuffer::kTrainable, "forward");
  torch::Tensor expected = torch::empty_like(gathered);
  torch::Tensor mine = sharded.middle.master().detach().contiguous();
  comm->all_gather(mine.data_ptr(), expected.data_ptr(), mine.numel(), DType::kFloat32);
  EXPECT_TRUE(torch::equal(gathered, expected));
  // Unchanged: the prefetched buffer is the one gathered.
  sharded.middle.prefetch("forward");
  EXPECT_TRUE(
      torch::equal(sharded.middle.gather(fsdp::FlatBuffer::kTrainable, "forward"), expected));
  sharded.middle.prefetch("forward");
  sharded.middle.drop_prefetched();  // nobody took it: freed, nothing left in flight
  EXPECT_FALSE(comm->tracker().snapshot().in_flight);
}

TEST(ShardedUnit, ShardsHoldOnlyTheirSlice) {
  auto comm = comm::MpiCommunicator::create(MPI_COMM_WORLD);
  Fixture sharded(*comm, kFull);
  const auto& layout = sharded.middle.layout();
  EXPECT_EQ(sharded.middle.master().numel(), layout.shard_size(true));
  EXPECT_EQ(sharded.middle.frozen().numel(), layout.shard_size(false));
  EXPECT_TRUE(sharded.middle.master().requires_grad());
  EXPECT_TRUE(sharded.middle.master().is_leaf());
}

}  // namespace
}  // namespace nss::fsdp
