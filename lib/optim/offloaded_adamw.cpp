#include "optim/offloaded_adamw.h"

#include <array>
#include <optional>
#include <string>

#include <torch/cuda.h>
#include <torch/torch.h>

#include "core/error.h"
#include "optim/offload_plan.h"

#if NSS_HAVE_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif

namespace nss::optim {
namespace {

// A chunk's fp32 state: in a staging slot, or the host range it comes from.
struct ChunkState {
  torch::Tensor master, exp_avg, exp_avg_sq;
};

void copy_state(const ChunkState& to, const ChunkState& from, bool non_blocking) {
  to.master.copy_(from.master, non_blocking);
  to.exp_avg.copy_(from.exp_avg, non_blocking);
  to.exp_avg_sq.copy_(from.exp_avg_sq, non_blocking);
}

torch::Tensor elements(const torch::Tensor& t, const OffloadChunk& chunk) {
  return t.view(-1).narrow(0, chunk.begin, chunk.count);
}

bool has_gradient(const OffloadedShard& shard) {
  return shard.grad && shard.grad->defined();
}

// The device every gradient and compute-dtype shard is on; nullopt when no
// shard has a gradient. Layout mistakes are the caller's bugs.
std::optional<torch::Device> compute_device(const std::vector<OffloadedShard>& shards) {
  std::optional<torch::Device> device;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const OffloadedShard& s = shards[i];
    if (!has_gradient(s)) continue;
    const std::string which = "offloaded shard " + std::to_string(i);
    NSS_ASSERT(s.master && s.exp_avg && s.exp_avg_sq && s.compute, "optim",
               which + " lacks a tensor");
    const std::int64_t n = s.master->numel();
    for (const torch::Tensor* t : {s.master, s.exp_avg, s.exp_avg_sq})
      NSS_ASSERT(t->defined() && t->is_cpu() && t->scalar_type() == torch::kFloat32 &&
                     t->is_contiguous() && t->numel() == n,
                 "optim", which + ": master and moments must be contiguous fp32 host tensors");
    const torch::Tensor& grad = *s.grad;
    const torch::Tensor& compute = *s.compute;
    NSS_ASSERT(grad.scalar_type() == torch::kFloat32 && grad.is_contiguous() && grad.numel() == n,
               "optim", which + ": the gradient must be contiguous fp32 like the master");
    NSS_ASSERT(compute.defined() && compute.is_floating_point() && compute.is_contiguous() &&
                   compute.numel() == n && compute.device() == grad.device(),
               "optim", which + ": the compute-dtype shard must sit beside the gradient");
    if (!device) device = grad.device();
    NSS_ASSERT(*device == grad.device(), "optim", which + " is on another device");
  }
  return device;
}

}  // namespace

// Two device slots, and on CUDA an upload and a download stream with one
// event per slot and direction: chunk k's update waits for its upload, its
// download for its update, and the upload of chunk k + 2 (same slot) for
// chunk k's download.
struct OffloadedAdamW::Staging {
  explicit Staging(torch::Device on) : device(on) {
#if NSS_HAVE_CUDA
    if (device.is_cuda()) {
      upload.emplace(c10::cuda::getStreamFromPool(false, device.index()));
      download.emplace(c10::cuda::getStreamFromPool(false, device.index()));
    }
#endif
  }
  ~Staging() {
#if NSS_HAVE_CUDA
    // A step that threw may have left copies in flight into the slots.
    for (auto* stream : {&upload, &compute, &download})
      if (*stream) (*stream)->synchronize();
#endif
  }
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;

  // Slots of at least `elements[s]` elements each; the updates of this step
  // run on the caller's current stream.
  void prepare(const std::array<std::int64_t, kOffloadSlots>& elements) {
    for (std::size_t s = 0; s < kOffloadSlots; ++s) {
      if (elements[s] <= capacity[s]) continue;
      slots[s] = torch::empty({3, elements[s]},
                              torch::TensorOptions().dtype(torch::kFloat32).device(device));
      capacity[s] = elements[s];
    }
#if NSS_HAVE_CUDA
    if (!upload) return;
    compute = c10::cuda::getCurrentCUDAStream(device.index());
    // A slot allocated just now may reuse memory that kernels queued on the
    // compute stream still use (the caching allocator orders reuse on that
    // stream only): the first upload waits for them.
    step_start.record(*compute);
    step_start.block(*upload);
#endif
  }

  ChunkState slot(int s, std::int64_t count) const {
    const torch::Tensor& t = slots[static_cast<std::size_t>(s)];
    return {t[0].narrow(0, 0, count), t[1].narrow(0, 0, count), t[2].narrow(0, 0, count)};
  }

  // Host -> slot; the update that follows on the compute stream waits for it.
  void to_device(int s, const ChunkState& staged, const ChunkState& host) {
#if NSS_HAVE_CUDA
    if (upload) {
      const auto i = static_cast<std::size_t>(s);
      downloaded[i].block(*upload);
      {
        c10::cuda::CUDAStreamGuard on_upload(*upload);
        copy_state(staged, host, /*non_blocking=*/true);
      }
      uploaded[i].record(*upload);
      uploaded[i].block(*compute);
      return;
    }
#endif
    (void)s;
    copy_state(staged, host, /*non_blocking=*/false);
  }

  // Slot -> host, after everything the compute stream has queued on the slot.
  void to_host(int s, const ChunkState& host, const ChunkState& staged) {
#if NSS_HAVE_CUDA
    if (download) {
      const auto i = static_cast<std::size_t>(s);
      updated[i].record(*compute);
      updated[i].block(*download);
      {
        c10::cuda::CUDAStreamGuard on_download(*download);
        copy_state(host, staged, /*non_blocking=*/true);
      }
      downloaded[i].record(*download);
      return;
    }
#endif
    (void)s;
    copy_state(host, staged, /*non_blocking=*/false);
  }

  // The host state is final once the last download has landed.
  void finish() {
#if NSS_HAVE_CUDA
    if (download) download->synchronize();
#endif
  }

  torch::Device device;
  std::array<torch::Tensor, kOffloadSlots> slots;  // [3, capacity]: master, exp_avg, exp_avg_sq
  std::array<std::int64_t, kOffloadSlots> capacity{};
#if NSS_HAVE_CUDA
  std::optional<c10::cuda::CUDAStream> compute, upload, download;
  at::cuda::CUDAEvent step_start;
  std::array<at::cuda::CUDAEvent, kOffloadSlots> uploaded, updated, downloaded;
#endif
};

OffloadedAdamW::OffloadedAdamW(AdamWOptions options, std::int64_t staging_bytes)
    : options_(options), chunk_elements_(offload_chunk_elements(staging_bytes)) {}

OffloadedAdamW::~OffloadedAdamW() = default;

std::int64_t OffloadedAdamW::staging_bytes_allocated() const {
  if (!staging_) return 0;
  std::int64_t elements = 0;
  for (const std::int64_t e : staging_->capacity) elements += e;
  return elements * kOffloadStagedBytesPerElement;
}

torch::Tensor OffloadedAdamW::host_tensor(std::int64_t elements) {
  const auto options = torch::TensorOptions().dtype(torch::kFloat32);
  if (elements == 0 || !torch::cuda::is_available()) return torch::empty({elements}, options);
#if NSS_HAVE_CUDA
  // cudaHostAlloc of exactly these bytes: libtorch's pinned allocator would
  // round every block up to a power of two, up to twice the host memory.
  void* data = nullptr;
  const auto bytes = static_cast<std::size_t>(elements) * sizeof(float);
  const cudaError_t rc = cudaHostAlloc(&data, bytes, cudaHostAllocPortable);
  if (rc != cudaSuccess)
    throw ResourceError(
        "optim",
        "cannot pin " + std::to_string(bytes) +
            " bytes of host memory for offloaded optimizer state: " + cudaGetErrorString(rc),
        "run more ranks (the state divides by the shard ranks) or fewer ranks per "
        "node, give the job more host memory, or set "
        "parallel.offload_optimizer: false");
  return torch::from_blob(
      data, {elements}, [](void* p) { cudaFreeHost(p); }, options);
#else
  return torch::empty({elements}, options.pinned_memory(true));
#endif
}

void OffloadedAdamW::step(const std::vector<OffloadedShard>& shards, double lr, std::int64_t step) {
  torch::NoGradGuard no_grad;
  const std::optional<torch::Device> device = compute_device(shards);
  if (!device) return;
  // Shards without a gradient plan as empty: AdamW::step skips them too.
  std::vector<std::int64_t> sizes;
  std::vector<std::vector<ElementRange>> ranges;
  for (const OffloadedShard& s : shards) {
    const bool active = has_gradient(s);
    sizes.push_back(active ? s.master->numel() : 0);
    ranges.push_back(active ? s.decay_ranges : std::vector<ElementRange>{});
  }
  const OffloadPlan plan = plan_offload(sizes, ranges, chunk_elements_);
  if (!staging_ || staging_->device != *device) {
    staging_.reset();  // settles the old device's streams before its slots go
    staging_ = std::make_unique<Staging>(*device);
  }
  staging_->prepare(plan.slot_elements);

  const AdamW adamw(options_);
  for (const OffloadChunk& chunk : plan.chunks) {
    const OffloadedShard& shard = shards[chunk.shard];
    const ChunkState host{elements(*shard.master, chunk), elements(*shard.exp_avg, chunk),
                          elements(*shard.exp_avg_sq, chunk)};
    const ChunkState staged = staging_->slot(chunk.slot, chunk.count);
    staging_->to_device(chunk.slot, staged, host);
    // AdamW::step itself on the staged chunk: the same arithmetic, the fused
    // kernel on CUDA, decay on the chunk's part of the decay ranges.
    torch::Tensor param = staged.master.detach();
    param.mutable_grad() = elements(*shard.grad, chunk);
    torch::Tensor exp_avg = staged.exp_avg;
    torch::Tensor exp_avg_sq = staged.exp_avg_sq;
    adamw.step({AdamWShard{&param, &exp_avg, &exp_avg_sq, chunk.decay_ranges}}, lr, step);
    elements(*shard.compute, chunk).copy_(staged.master);
    staging_->to_host(chunk.slot, host, staged);
  }
  staging_->finish();
}

}  // namespace nss::optim
