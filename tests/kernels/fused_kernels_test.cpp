// The fused kernels (kernels/fused_kernels.h) called directly on device memory,
// against the libtorch CPU ops that lib/model uses, forward and backward
// (libtorch autograd gives the reference gradients); fp32 must agree to 1e-5,
// bf16 to a couple of ulps. Without the kernels compiled or without a CUDA
// device the GPU tests skip; a build without the toolkit must throw instead.
// Their autograd wrappers are tested in fused_ops_test.cpp.
#include "kernels/fused_kernels.h"

#include <cstdint>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/error.h"
#include "kernel_test_support.h"
#include "model/rotary_embedding.h"

#if NSS_CUDA_KERNELS
#include <cuda_runtime.h>

#include "support/cuda_device.h"
#endif

namespace nss::kernels {
namespace {

using namespace testing;  // kernel_test_support.h

TEST(FusedKernelsTest, CompiledFlagMatchesBuild) {
  EXPECT_EQ(fused_kernels_compiled(), NSS_CUDA_KERNELS != 0);
}

TEST(FusedKernelsTest, ScratchCoversEveryPartialRow) {
  EXPECT_EQ(rms_norm_backward_scratch(3, 2048), 3 * 2048);
  EXPECT_EQ(rms_norm_backward_scratch(100000, 64), kRmsNormPartialRows * 64);
}

#if NSS_CUDA_KERNELS

Dtype kernel_dtype(torch::ScalarType t) {
  return t == torch::kFloat32 ? Dtype::kFloat32 : Dtype::kBFloat16;
}

void check(cudaError_t err, const char* what) {
  ASSERT_EQ(err, cudaSuccess) << what << ": " << cudaGetErrorString(err);
}

// Device memory holding a CPU tensor's elements (contiguous), `offset`
// elements past a 256-byte aligned allocation: offset 1 defeats the 16-byte
// packs, so the kernels take their element-by-element paths.
class DeviceTensor {
 public:
  explicit DeviceTensor(const torch::Tensor& host, std::int64_t offset = 0)
      : like_(host.contiguous()), offset_bytes_(offset * host.element_size()) {
    const std::size_t bytes = like_.nbytes() + offset_bytes_;
    EXPECT_EQ(cudaMalloc(&base_, bytes == 0 ? 1 : bytes), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(data(), like_.data_ptr(), like_.nbytes(), cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  ~DeviceTensor() { cudaFree(base_); }
  DeviceTensor(const DeviceTensor&) = delete;
  DeviceTensor& operator=(const DeviceTensor&) = delete;

  void* data() const { return static_cast<char*>(base_) + offset_bytes_; }
  float* floats() const { return static_cast<float*>(data()); }
  std::int64_t* int64s() const { return static_cast<std::int64_t*>(data()); }

  /// The device elements as a CPU tensor of the shape and dtype it was made from.
  torch::Tensor download() const {
    torch::Tensor out = torch::empty_like(like_);
    EXPECT_EQ(cudaMemcpy(out.data_ptr(), data(), like_.nbytes(), cudaMemcpyDeviceToHost),
              cudaSuccess);
    return out;
  }

 private:
  torch::Tensor like_;
  std::size_t offset_bytes_;
  void* base_ = nullptr;
};

struct RmsCase {
  std::int64_t rows, cols, offset;
};

void run_rms_norm(torch::ScalarType dtype, const RmsCase& c, bool with_grad_weight) {
  std::ostringstream label;
  label << name(dtype) << " [" << c.rows << ", " << c.cols << "] offset " << c.offset
        << (with_grad_weight ? "" : " no grad_weight");
  SCOPED_TRACE(label.str());
  const torch::Tensor x = random({c.rows, c.cols}, dtype);
  const torch::Tensor weight = (1 + 0.1 * torch::randn({c.cols})).to(dtype);
  const torch::Tensor grad_out = random({c.rows, c.cols}, dtype);

  const torch::Tensor xr = x.clone().requires_grad_(true);
  const torch::Tensor wr = weight.clone().requires_grad_(true);
  const torch::Tensor want = reference_rms_norm(xr, wr, kEps);
  want.backward(grad_out);
  const torch::Tensor want_rstd =
      torch::rsqrt(x.to(torch::kFloat32).pow(2).mean(-1) + kEps).contiguous();

  DeviceTensor d_x(x, c.offset), d_w(weight, c.offset), d_g(grad_out, c.offset);
  DeviceTensor d_out(torch::zeros_like(x), c.offset), d_rstd(torch::zeros({c.rows}));
  DeviceTensor d_gx(torch::zeros_like(x), c.offset), d_gw(torch::zeros_like(weight), c.offset);
  DeviceTensor d_scratch(torch::zeros({rms_norm_backward_scratch(c.rows, c.cols)}));
  const Dtype kd = kernel_dtype(dtype);
  rms_norm_forward(d_x.data(), d_w.data(), c.rows, c.cols, static_cast<float>(kEps), d_out.data(),
                   d_rstd.floats(), kd, nullptr);
  rms_norm_backward(d_g.data(), d_x.data(), d_w.data(), d_rstd.floats(), c.rows, c.cols,
                    d_gx.data(), with_grad_weight ? d_gw.data() : nullptr,
                    with_grad_weight ? d_scratch.floats() : nullptr, kd, nullptr);
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  expect_close(d_out.download(), want.detach(), "out");
  expect_close(d_rstd.download(), want_rstd, "rstd");
  expect_close(d_gx.download(), xr.grad(), "grad_x");
  if (with_grad_weight) expect_close(d_gw.download(), wr.grad(), "grad_weight");
}

TEST(FusedKernelsTest, RmsNormMatchesLibtorch) {
  SKIP_WITHOUT_CUDA_DEVICE();
  torch::manual_seed(1);
  // Rows fewer and more than the backward's 512 partial rows and not a
  // multiple of anything; widths of whole packs, of a partial pack, and odd.
  const RmsCase cases[] = {{37, 2048, 0}, {1100, 2048, 0}, {37, 2048, 1},
                           {5, 100, 0},   {3, 77, 0},      {64, 4096, 0}};
  for (const torch::ScalarType dtype : kDtypes)
    for (const RmsCase& c : cases) run_rms_norm(dtype, c, true);
  run_rms_norm(torch::kBFloat16, {37, 2048, 0}, false);
}

struct RopeCase {
  std::int64_t head_dim;
  bool positions;
  std::int64_t offset;
};

void run_rope(torch::ScalarType dtype, const RopeCase& c) {
  std::ostringstream label;
  label << name(dtype) << " head_dim " << c.head_dim
        << (c.positions ? " packed positions" : " positions 0..S-1") << " offset " << c.offset;
  SCOPED_TRACE(label.str());
  const std::int64_t b = 2, s = 37, h = 3, d = c.head_dim;
  const model::RotaryEmbedding rope = rotary(d, 64);
  const torch::Tensor positions = packed_positions(s);
  // q as the model makes it: a [B, S, H, D] projection viewed as [B, H, S, D].
  const torch::Tensor x = random({b, s, h, d}, dtype);
  const torch::Tensor grad_out = random({b, h, s, d}, dtype);
  const torch::Tensor xr = x.clone().requires_grad_(true);
  const torch::Tensor view = xr.transpose(1, 2);
  const torch::Tensor want = c.positions ? rope.apply(view, positions) : rope.apply(view);
  want.backward(grad_out);

  DeviceTensor d_x(x, c.offset), d_g(grad_out, c.offset);
  DeviceTensor d_out(torch::zeros({b, h, s, d}, dtype), c.offset);
  DeviceTensor d_gx(torch::zeros_like(x), c.offset);
  DeviceTensor d_pos(positions), d_cos(rope.cos()), d_sin(rope.sin());
  const RopeShape shape{b, h, s, d};
  const RopeStrides bshd{s * h * d, d, h * d}, bhsd{h * s * d, s * d, d};
  const std::int64_t* pos = c.positions ? d_pos.int64s() : nullptr;
  const Dtype kd = kernel_dtype(dtype);
  rope_forward(d_x.data(), bshd, pos, d_cos.floats(), d_sin.floats(), rope.max_positions(), shape,
               d_out.data(), bhsd, kd, nullptr);
  rope_backward(d_g.data(), bhsd, pos, d_cos.floats(), d_sin.floats(), rope.max_positions(), shape,
                d_gx.data(), bshd, kd, nullptr);
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  expect_close(d_out.download(), want.detach(), "out");
  expect_close(d_gx.download(), xr.grad(), "grad_x");
}

TEST(FusedKernelsTest, RopeMatchesLibtorch) {
  SKIP_WITHOUT_CUDA_DEVICE();
  torch::manual_seed(2);
  const RopeCase cases[] = {
      {64, true, 0}, {128, true, 0}, {64, false, 0}, {128, true, 1}, {6, true, 0}};
  for (const torch::ScalarType dtype : kDtypes)
    for (const RopeCase& c : cases) run_rope(dtype, c);
}

TEST(FusedKernelsTest, RopePositionPastTheTableGivesNan) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const std::int64_t s = 4, d = 64;
  const model::RotaryEmbedding rope = rotary(d, 8);
  torch::Tensor positions = torch::tensor({0, 1, 8, 3}, torch::kInt64).view({1, s});
  const torch::Tensor x = torch::randn({1, 1, s, d});
  DeviceTensor d_x(x), d_out(torch::zeros_like(x)), d_pos(positions), d_cos(rope.cos()),
      d_sin(rope.sin());
  const RopeStrides strides{s * d, s * d, d};
  rope_forward(d_x.data(), strides, d_pos.int64s(), d_cos.floats(), d_sin.floats(),
               rope.max_positions(), {1, 1, s, d}, d_out.data(), strides, Dtype::kFloat32, nullptr);
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  const torch::Tensor out = d_out.download();
  EXPECT_TRUE(out.select(2, 2).isnan().all().item<bool>());
  positions[0][2] = 2;  // the other rows are the ordinary rotation
  const torch::Tensor want = rope.apply(x, positions);
  for (const std::int64_t row : {0, 1, 3})
    expect_close(out.select(2, row), want.select(2, row), "row " + std::to_string(row));
}

void run_swiglu(torch::ScalarType dtype, std::int64_t n, std::int64_t offset) {
  SCOPED_TRACE(name(dtype) + " n " + std::to_string(n) + " offset " + std::to_string(offset));
  const torch::Tensor gate = random({n}, dtype, 3.0);
  const torch::Tensor up = random({n}, dtype);
  const torch::Tensor grad_out = random({n}, dtype);
  const torch::Tensor gr = gate.clone().requires_grad_(true);
  const torch::Tensor ur = up.clone().requires_grad_(true);
  const torch::Tensor want = reference_swiglu(gr, ur);
  want.backward(grad_out);

  DeviceTensor d_gate(gate, offset), d_up(up, offset), d_g(grad_out, offset);
  DeviceTensor d_out(torch::zeros_like(gate), offset), d_dgate(torch::zeros_like(gate), offset),
      d_dup(torch::zeros_like(up), offset);
  const Dtype kd = kernel_dtype(dtype);
  swiglu_forward(d_gate.data(), d_up.data(), n, d_out.data(), kd, nullptr);
  swiglu_backward(d_g.data(), d_gate.data(), d_up.data(), n, d_dgate.data(), d_dup.data(), kd,
                  nullptr);
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  expect_close(d_out.download(), want.detach(), "out");
  expect_close(d_dgate.download(), gr.grad(), "grad_gate");
  expect_close(d_dup.download(), ur.grad(), "grad_up");
}

TEST(FusedKernelsTest, SwigluMatchesLibtorch) {
  SKIP_WITHOUT_CUDA_DEVICE();
  torch::manual_seed(3);
  for (const torch::ScalarType dtype : kDtypes) {
    run_swiglu(dtype, 37 * 2048, 0);
    run_swiglu(dtype, 1003, 0);  // a tail after the whole packs
    run_swiglu(dtype, 1003, 1);  // unaligned: element by element
    run_swiglu(dtype, 5, 0);
  }
}

#else  // built without the CUDA toolkit

TEST(FusedKernelsTest, WithoutToolkitEveryFunctionThrows) {
  EXPECT_THROW(
      rms_norm_forward(nullptr, nullptr, 1, 1, 1e-5f, nullptr, nullptr, Dtype::kFloat32, nullptr),
      InternalError);
  EXPECT_THROW(rms_norm_backward(nullptr, nullptr, nullptr, nullptr, 1, 1, nullptr, nullptr,
                                 nullptr, Dtype::kFloat32, nullptr),
               InternalError);
  EXPECT_THROW(rope_forward(nullptr, {}, nullptr, nullptr, nullptr, 1, {}, nullptr, {},
                            Dtype::kBFloat16, nullptr),
               InternalError);
  EXPECT_THROW(rope_backward(nullptr, {}, nullptr, nullptr, nullptr, 1, {}, nullptr, {},
                             Dtype::kBFloat16, nullptr),
               InternalError);
  EXPECT_THROW(swiglu_forward(nullptr, nullptr, 1, nullptr, Dtype::kFloat32, nullptr),
               InternalError);
  EXPECT_THROW(
      swiglu_backward(nullptr, nullptr, nullptr, 1, nullptr, nullptr, Dtype::kFloat32, nullptr),
      InternalError);
}

#endif

}  // namespace
}  // namespace nss::kernels
