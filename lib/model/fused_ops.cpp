#include "model/fused_ops.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include <torch/torch.h>

#include "core/error.h"
#include "kernels/fused_kernels.h"

#if NSS_HAVE_CUDA
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace nss::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

bool supported_dtype(const torch::Tensor& t) {
  return t.scalar_type() == torch::kFloat32 || t.scalar_type() == torch::kBFloat16;
}

kernels::Dtype dtype_of(const torch::Tensor& t) {
  return t.scalar_type() == torch::kFloat32 ? kernels::Dtype::kFloat32 : kernels::Dtype::kBFloat16;
}

// The device of `t` made current, and its current CUDA stream, for one launch.
#if NSS_HAVE_CUDA
class Launch {
 public:
  explicit Launch(const torch::Tensor& t)
      : guard_(t.device()), stream_(c10::cuda::getCurrentCUDAStream(t.device().index()).stream()) {}
  void* stream() const { return stream_; }

 private:
  c10::cuda::CUDAGuard guard_;
  void* stream_;
};
#else
class Launch {
 public:
  explicit Launch(const torch::Tensor&) {
    throw InternalError("model", "fused kernels need a CUDA libtorch",
                        "build against a CUDA libtorch (docs/gpu.md), or set NSS_FUSED_KERNELS=0");
  }
  void* stream() const { return nullptr; }
};
#endif

// Every fused op's precondition, with the reason when it does not hold.
void check_fusable(const torch::Tensor& x, const char* op) {
  if (!NSS_HAVE_CUDA || !kernels::fused_kernels_compiled())
    throw InternalError("model", std::string(op) + ": fused kernels not in this build",
                        "build with the CUDA toolkit against a CUDA libtorch (docs/gpu.md)");
  if (!x.is_cuda() || !supported_dtype(x))
    throw InternalError("model",
                        std::string(op) + ": needs a CUDA fp32 or bf16 tensor, not " + x.toString(),
                        "call it only where fused_kernels_enabled(x) holds");
}

void check_same(const torch::Tensor& a, const torch::Tensor& b, const char* op) {
  NSS_ASSERT(
      a.sizes() == b.sizes() && a.scalar_type() == b.scalar_type() && a.device() == b.device(),
      "model", std::string(op) + ": operands of different shapes, dtypes or devices");
}

struct FusedRmsNorm : torch::autograd::Function<FusedRmsNorm> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight, double eps) {
    const std::int64_t cols = x.size(-1);
    const torch::Tensor xc = x.contiguous(), wc = weight.contiguous();
    const std::int64_t rows = cols == 0 ? 0 : xc.numel() / cols;
    torch::Tensor out = torch::empty_like(xc);
    torch::Tensor rstd = torch::empty({rows}, xc.options().dtype(torch::kFloat32));
    const Launch launch(xc);
    kernels::rms_norm_forward(xc.data_ptr(), wc.data_ptr(), rows, cols, static_cast<float>(eps),
                              out.data_ptr(), rstd.data_ptr<float>(), dtype_of(xc),
                              launch.stream());
    ctx->save_for_backward({xc, wc, rstd});
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor &x = saved[0], &weight = saved[1], &rstd = saved[2];
    const torch::Tensor grad_out = grads[0].contiguous();
    const std::int64_t cols = x.size(-1), rows = rstd.numel();
    torch::Tensor grad_x = torch::empty_like(x);
    torch::Tensor grad_weight, scratch;
    if (ctx->needs_input_grad(1)) {
      grad_weight = torch::empty_like(weight);
      scratch = torch::empty({kernels::rms_norm_backward_scratch(rows, cols)},
                             x.options().dtype(torch::kFloat32));
    }
    const Launch launch(x);
    kernels::rms_norm_backward(
        grad_out.data_ptr(), x.data_ptr(), weight.data_ptr(), rstd.data_ptr<float>(), rows, cols,
        grad_x.data_ptr(), grad_weight.defined() ? grad_weight.data_ptr() : nullptr,
        scratch.defined() ? scratch.data_ptr<float>() : nullptr, dtype_of(x), launch.stream());
    return {grad_x, grad_weight, torch::Tensor()};
  }
};

kernels::RopeShape rope_shape(const torch::Tensor& t) {
  return {t.size(0), t.size(1), t.size(2), t.size(3)};
}

kernels::RopeStrides rope_strides(const torch::Tensor& t) {
  return {t.stride(0), t.stride(1), t.stride(2)};
}

// head_dim contiguous, as the kernels read it.
torch::Tensor unit_last_stride(const torch::Tensor& t) {
  return t.stride(3) == 1 ? t : t.contiguous();
}

struct FusedRope : torch::autograd::Function<FusedRope> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& positions, const torch::Tensor& cos,
                               const torch::Tensor& sin) {
    const torch::Tensor in = unit_last_stride(x);
    torch::Tensor out = torch::empty_like(in);
    run(in, positions, cos, sin, out, false);
    ctx->save_for_backward({positions, cos, sin});
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor grad_out = unit_last_stride(grads[0]);
    torch::Tensor grad_x = torch::empty_like(grad_out);
    run(grad_out, saved[0], saved[1], saved[2], grad_x, true);
    return {grad_x, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }

  // positions: int64 [B, S], or no elements for 0..S-1.
  static void run(const torch::Tensor& in, const torch::Tensor& positions, const torch::Tensor& cos,
                  const torch::Tensor& sin, torch::Tensor& out, bool backward) {
    const std::int64_t* position_data =
        positions.numel() > 0 ? positions.data_ptr<std::int64_t>() : nullptr;
    const Launch launch(in);
    (backward ? kernels::rope_backward : kernels::rope_forward)(
        in.data_ptr(), rope_strides(in), position_data, cos.data_ptr<float>(),
        sin.data_ptr<float>(), cos.size(0), rope_shape(in), out.data_ptr(), rope_strides(out),
        dtype_of(in), launch.stream());
  }
};

struct FusedSwiglu : torch::autograd::Function<FusedSwiglu> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& gate,
                               const torch::Tensor& up) {
    const torch::Tensor g = gate.contiguous(), u = up.contiguous();
    torch::Tensor out = torch::empty_like(g);
    const Launch launch(g);
    kernels::swiglu_forward(g.data_ptr(), u.data_ptr(), g.numel(), out.data_ptr(), dtype_of(g),
                            launch.stream());
    ctx->save_for_backward({g, u});
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor &gate = saved[0], &up = saved[1];
    const torch::Tensor grad_out = grads[0].contiguous();
    torch::Tensor grad_gate = torch::empty_like(gate), grad_up = torch::empty_like(up);
    const Launch launch(gate);
    kernels::swiglu_backward(grad_out.data_ptr(), gate.data_ptr(), up.data_ptr(), gate.numel(),
                             grad_gate.data_ptr(), grad_up.data_ptr(), dtype_of(gate),
                             launch.stream());
    return {grad_gate, grad_up};
  }
};

}  // namespace

bool fused_kernels_enabled(const torch::Tensor& x) {
  // On unless NSS_FUSED_KERNELS=0: on an H100 they passed their tests and
  // gained 21-22% of a Llama-3.2-1B step (docs/performance.md, "GPU").
  static const bool requested = [] {
    const char* value = std::getenv("NSS_FUSED_KERNELS");
    return value == nullptr || std::strcmp(value, "0") != 0;
  }();
  return requested && NSS_HAVE_CUDA && kernels::fused_kernels_compiled() && x.is_cuda() &&
         supported_dtype(x);
}

torch::Tensor fused_rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
  check_fusable(x, "fused_rms_norm");
  NSS_ASSERT(x.dim() >= 1 && weight.dim() == 1 && weight.size(0) == x.size(-1), "model",
             "fused_rms_norm: weight " + weight.toString() + " does not match x's last dimension");
  if (weight.scalar_type() != x.scalar_type() || weight.device() != x.device())
    throw InternalError("model",
                        "fused_rms_norm: weight " + weight.toString() + " for x " + x.toString(),
                        "hold the norm weight in the compute dtype, on x's device");
  return FusedRmsNorm::apply(x, weight, eps);
}

torch::Tensor fused_rope(const torch::Tensor& x, const torch::Tensor& positions,
                         const torch::Tensor& cos, const torch::Tensor& sin) {
  check_fusable(x, "fused_rope");
  NSS_ASSERT(x.dim() == 4 && x.size(3) % 2 == 0, "model",
             "fused_rope: x must be [B, heads, S, head_dim] with an even head_dim");
  const auto table_fits = [&](const torch::Tensor& t) {
    return t.dim() == 2 && t.size(1) == x.size(3) && t.size(0) > 0 &&
           t.scalar_type() == torch::kFloat32 && t.device() == x.device();
  };
  NSS_ASSERT(table_fits(cos) && table_fits(sin) && cos.size(0) == sin.size(0), "model",
             "fused_rope: cos/sin must be float32 [max_positions, head_dim] on x's device");
  // Undefined positions travel as an empty tensor: autograd Functions take defined inputs.
  torch::Tensor pos = torch::empty({0}, x.options().dtype(torch::kInt64));
  if (positions.defined()) {
    NSS_ASSERT(positions.dim() == 2 && positions.size(0) == x.size(0) &&
                   positions.size(1) == x.size(2) && positions.scalar_type() == torch::kInt64 &&
                   positions.device() == x.device(),
               "model", "fused_rope: positions must be int64 [B, S] on x's device");
    pos = positions.contiguous();
  } else {
    NSS_ASSERT(x.size(2) <= cos.size(0), "model",
               "sequence of " + std::to_string(x.size(2)) + " exceeds the rotary table of " +
                   std::to_string(cos.size(0)) + " positions");
  }
  return FusedRope::apply(x, pos, cos.contiguous(), sin.contiguous());
}

torch::Tensor fused_swiglu(const torch::Tensor& gate, const torch::Tensor& up) {
  check_fusable(gate, "fused_swiglu");
  check_same(gate, up, "fused_swiglu");
  return FusedSwiglu::apply(gate, up);
}

}  // namespace nss::model
