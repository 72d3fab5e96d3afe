// The autograd wrappers of the fused kernels (model/fused_ops.h) against the
// libtorch CPU ops that lib/model uses, forward and backward, on a CUDA
// libtorch; fp32 must agree to 1e-5, bf16 to a couple of ulps. Without a CUDA
// libtorch, the compiled kernels or a device, the GPU tests skip; CPU tensors
// are never fused and must throw.
#include "model/fused_ops.h"

#include <cstdint>
#include <string>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/error.h"
#include "kernel_test_support.h"
#include "kernels/fused_kernels.h"
#include "model/rotary_embedding.h"

namespace nss::kernels {
namespace {

using namespace testing;  // kernel_test_support.h

TEST(FusedOpsTest, DisabledOnCpuTensors) {
  EXPECT_FALSE(model::fused_kernels_enabled(torch::ones({2, 4})));
}

TEST(FusedOpsTest, CpuTensorsThrow) {
  const torch::Tensor x = torch::ones({2, 4});
  EXPECT_THROW(model::fused_rms_norm(x, torch::ones({4}), kEps), InternalError);
  EXPECT_THROW(model::fused_swiglu(x, x), InternalError);
  const torch::Tensor cos = torch::ones({8, 4});
  EXPECT_THROW(model::fused_rope(torch::ones({1, 1, 2, 4}), torch::Tensor(), cos, cos),
               InternalError);
}

// --- On a CUDA libtorch --------------------------------------------------------

std::string no_torch_cuda_reason() {
  if (!NSS_HAVE_CUDA) return "built against a CPU-only libtorch (NSS_HAVE_CUDA=0)";
  if (!fused_kernels_compiled()) return "fused kernels not compiled (no CUDA toolkit)";
  if (!torch::cuda::is_available()) return "libtorch sees no CUDA device";
  return {};
}

#define SKIP_WITHOUT_TORCH_CUDA()                      \
  do {                                                 \
    const std::string reason = no_torch_cuda_reason(); \
    if (!reason.empty()) GTEST_SKIP() << reason;       \
  } while (0)

TEST(FusedOpsTest, RmsNormMatchesLibtorch) {
  SKIP_WITHOUT_TORCH_CUDA();
  torch::manual_seed(4);
  for (const torch::ScalarType dtype : kDtypes) {
    SCOPED_TRACE(name(dtype));
    const torch::Tensor x = random({2, 19, 2048}, dtype);
    const torch::Tensor weight = (1 + 0.1 * torch::randn({2048})).to(dtype);
    const torch::Tensor grad_out = random({2, 19, 2048}, dtype);
    const torch::Tensor xr = x.clone().requires_grad_(true),
                        wr = weight.clone().requires_grad_(true);
    const torch::Tensor want = reference_rms_norm(xr, wr, kEps);
    want.backward(grad_out);
    const torch::Tensor xc = x.cuda().requires_grad_(true), wc = weight.cuda().requires_grad_(true);
    const torch::Tensor got = model::fused_rms_norm(xc, wc, kEps);
    got.backward(grad_out.cuda());
    expect_close(got.detach().cpu(), want.detach(), "out");
    expect_close(xc.grad().cpu(), xr.grad(), "grad_x");
    expect_close(wc.grad().cpu(), wr.grad(), "grad_weight");
  }
}

TEST(FusedOpsTest, RopeOnTransposedViewMatchesLibtorch) {
  SKIP_WITHOUT_TORCH_CUDA();
  torch::manual_seed(5);
  const std::int64_t b = 2, s = 37, h = 4, d = 128;
  const model::RotaryEmbedding rope = rotary(d, 64);
  const torch::Tensor cos = rope.cos().cuda(), sin = rope.sin().cuda();
  for (const torch::ScalarType dtype : kDtypes)
    for (const bool packed : {true, false}) {
      SCOPED_TRACE(name(dtype) + (packed ? " packed positions" : " positions 0..S-1"));
      const torch::Tensor positions = packed ? packed_positions(s) : torch::Tensor();
      const torch::Tensor x = random({b, s, h, d}, dtype);
      const torch::Tensor grad_out = random({b, h, s, d}, dtype);
      const torch::Tensor xr = x.clone().requires_grad_(true);
      const torch::Tensor want =
          packed ? rope.apply(xr.transpose(1, 2), positions) : rope.apply(xr.transpose(1, 2));
      want.backward(grad_out);
      const torch::Tensor xc = x.cuda().requires_grad_(true);
      const torch::Tensor got = model::fused_rope(
          xc.transpose(1, 2), packed ? positions.cuda() : torch::Tensor(), cos, sin);
      got.backward(grad_out.cuda());
      expect_close(got.detach().cpu(), want.detach(), "out");
      expect_close(xc.grad().cpu(), xr.grad(), "grad_x");
    }
}

TEST(FusedOpsTest, SwigluMatchesLibtorch) {
  SKIP_WITHOUT_TORCH_CUDA();
  torch::manual_seed(6);
  for (const torch::ScalarType dtype : kDtypes) {
    SCOPED_TRACE(name(dtype));
    const torch::Tensor gate = random({2, 19, 176}, dtype, 3.0);
    const torch::Tensor up = random({2, 19, 176}, dtype);
    const torch::Tensor grad_out = random({2, 19, 176}, dtype);
    const torch::Tensor gr = gate.clone().requires_grad_(true),
                        ur = up.clone().requires_grad_(true);
    const torch::Tensor want = reference_swiglu(gr, ur);
    want.backward(grad_out);
    const torch::Tensor gc = gate.cuda().requires_grad_(true), uc = up.cuda().requires_grad_(true);
    const torch::Tensor got = model::fused_swiglu(gc, uc);
    got.backward(grad_out.cuda());
    expect_close(got.detach().cpu(), want.detach(), "out");
    expect_close(gc.grad().cpu(), gr.grad(), "grad_gate");
    expect_close(uc.grad().cpu(), ur.grad(), "grad_up");
  }
}

}  // namespace
}  // namespace nss::kernels
