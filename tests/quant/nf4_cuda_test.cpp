// The CUDA NF4 dequantisers (quant/nf4_cuda.h) against lib/quant's CPU ones,
// bit for bit. Without the kernels compiled, or without a CUDA device, the
// GPU tests skip; a build without the toolkit must throw instead.
#include "quant/nf4_cuda.h"

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.h"
#include "quant/double_quant.h"
#include "quant/nf4.h"

#if NSS_CUDA_KERNELS
#include <cuda_runtime.h>

#include "support/cuda_device.h"
#endif

namespace nss::quant {
namespace {

TEST(Nf4CudaTest, CompiledFlagMatchesBuild) {
  EXPECT_EQ(nf4_cuda_compiled(), NSS_CUDA_KERNELS != 0);
}

#if NSS_CUDA_KERNELS

const std::int64_t kLengths[] = {1, 2, 63, 64, 65, 127, 1000, 16384 * 3 + 7};

std::vector<float> random_values(std::int64_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 0.02f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = dist(rng);
  if (n > 3) v[3] = 0.5f;  // one large value, so the blocks' scales differ
  return v;
}

void check(cudaError_t err, const char* what) {
  ASSERT_EQ(err, cudaSuccess) << what << ": " << cudaGetErrorString(err);
}

template <typename T>
struct DeviceBuffer {
  T* ptr = nullptr;
  std::size_t count = 0;
  explicit DeviceBuffer(std::size_t n) : count(n) {
    if (cudaMalloc(reinterpret_cast<void**>(&ptr), (n == 0 ? 1 : n) * sizeof(T)) != cudaSuccess)
      ptr = nullptr;
  }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

template <typename T>
void upload(DeviceBuffer<T>& dst, const std::vector<T>& src) {
  ASSERT_NE(dst.ptr, nullptr);
  check(cudaMemcpy(dst.ptr, src.data(), src.size() * sizeof(T), cudaMemcpyHostToDevice),
        "cudaMemcpy to device");
}

template <typename T>
std::vector<T> download(const DeviceBuffer<T>& src) {
  std::vector<T> out(src.count);
  const cudaError_t err =
      cudaMemcpy(out.data(), src.ptr, src.count * sizeof(T), cudaMemcpyDeviceToHost);
  EXPECT_EQ(err, cudaSuccess) << cudaGetErrorString(err);
  return out;
}

void expect_same_bits(const std::vector<float>& want, const std::vector<float>& got,
                      std::int64_t n) {
  ASSERT_EQ(want.size(), got.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    std::uint32_t a, b;
    std::memcpy(&a, &want[i], 4);
    std::memcpy(&b, &got[i], 4);
    ASSERT_EQ(a, b) << "n=" << n << " element " << i << ": " << want[i] << " vs " << got[i];
  }
}

TEST(Nf4CudaTest, DequantizeMatchesCpu) {
  SKIP_WITHOUT_CUDA_DEVICE();
  for (const std::int64_t n : kLengths) {
    const Nf4Layout layout{n};
    const auto in = random_values(n, static_cast<std::uint32_t>(n));
    std::vector<std::uint8_t> packed(static_cast<std::size_t>(layout.packed_bytes()));
    std::vector<float> absmax(static_cast<std::size_t>(layout.blocks()));
    quantize_nf4(in.data(), n, packed.data(), absmax.data());
    std::vector<float> want(static_cast<std::size_t>(n));
    dequantize_nf4(packed.data(), absmax.data(), n, want.data());
    std::vector<std::uint16_t> want_bf16(static_cast<std::size_t>(n));
    dequantize_nf4_bf16(packed.data(), absmax.data(), n, want_bf16.data());

    DeviceBuffer<std::uint8_t> d_packed(packed.size());
    DeviceBuffer<float> d_absmax(absmax.size());
    DeviceBuffer<float> d_out(want.size());
    DeviceBuffer<std::uint16_t> d_bf16(want_bf16.size());
    upload(d_packed, packed);
    upload(d_absmax, absmax);
    dequantize_nf4_cuda(d_packed.ptr, d_absmax.ptr, n, d_out.ptr, nullptr);
    dequantize_nf4_cuda_bf16(d_packed.ptr, d_absmax.ptr, n, d_bf16.ptr, nullptr);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    expect_same_bits(want, download(d_out), n);
    EXPECT_EQ(want_bf16, download(d_bf16)) << "n=" << n;
  }
}

TEST(Nf4CudaTest, UnalignedBuffersMatchCpu) {
  SKIP_WITHOUT_CUDA_DEVICE();
  // Offsets that defeat the 4-byte loads and 16-byte stores: the scalar paths.
  const std::int64_t n = 1000;
  const auto in = random_values(n, 7);
  const Nf4Layout layout{n};
  std::vector<std::uint8_t> packed(static_cast<std::size_t>(layout.packed_bytes()));
  std::vector<float> absmax(static_cast<std::size_t>(layout.blocks()));
  quantize_nf4(in.data(), n, packed.data(), absmax.data());
  std::vector<float> want(static_cast<std::size_t>(n));
  dequantize_nf4(packed.data(), absmax.data(), n, want.data());
  std::vector<std::uint16_t> want_bf16(static_cast<std::size_t>(n));
  dequantize_nf4_bf16(packed.data(), absmax.data(), n, want_bf16.data());

  std::vector<std::uint8_t> shifted(packed.size() + 1);
  std::memcpy(shifted.data() + 1, packed.data(), packed.size());
  DeviceBuffer<std::uint8_t> d_packed(shifted.size());
  DeviceBuffer<float> d_absmax(absmax.size());
  DeviceBuffer<float> d_out(want.size() + 1);
  DeviceBuffer<std::uint16_t> d_bf16(want_bf16.size() + 1);
  upload(d_packed, shifted);
  upload(d_absmax, absmax);
  dequantize_nf4_cuda(d_packed.ptr + 1, d_absmax.ptr, n, d_out.ptr + 1, nullptr);
  dequantize_nf4_cuda_bf16(d_packed.ptr + 1, d_absmax.ptr, n, d_bf16.ptr + 1, nullptr);
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  auto got = download(d_out);
  auto got_bf16 = download(d_bf16);
  expect_same_bits(want, std::vector<float>(got.begin() + 1, got.end()), n);
  EXPECT_EQ(want_bf16, std::vector<std::uint16_t>(got_bf16.begin() + 1, got_bf16.end()));
}

TEST(Nf4CudaTest, DequantizeAbsmaxMatchesCpu) {
  SKIP_WITHOUT_CUDA_DEVICE();
  for (const std::int64_t n : kLengths) {
    const std::int64_t blocks = Nf4Layout{n}.blocks();
    // Absmax values of a tensor, here random positive scales (several groups
    // of 256 for the longest length).
    std::mt19937 rng(static_cast<std::uint32_t>(blocks));
    std::uniform_real_distribution<float> dist(0.001f, 0.2f);
    std::vector<float> absmax(static_cast<std::size_t>(blocks));
    for (auto& a : absmax) a = dist(rng);
    const float offset = absmax_offset(absmax_partial_sum(absmax.data(), blocks), blocks);
    std::vector<std::uint8_t> codes(absmax.size());
    std::vector<float> group(
        static_cast<std::size_t>((blocks + kAbsmaxGroupSize - 1) / kAbsmaxGroupSize));
    quantize_absmax(absmax.data(), blocks, offset, codes.data(), group.data());
    std::vector<float> want(absmax.size());
    dequantize_absmax(codes.data(), group.data(), blocks, offset, want.data());

    DeviceBuffer<std::uint8_t> d_codes(codes.size());
    DeviceBuffer<float> d_group(group.size());
    DeviceBuffer<float> d_out(want.size());
    upload(d_codes, codes);
    upload(d_group, group);
    dequantize_absmax_cuda(d_codes.ptr, d_group.ptr, blocks, offset, d_out.ptr, nullptr);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    expect_same_bits(want, download(d_out), n);
  }
}

TEST(Nf4CudaTest, EveryCodeOfEveryByte) {
  SKIP_WITHOUT_CUDA_DEVICE();
  // All 256 byte values, with 8 different block scales (one tiny).
  const std::int64_t n = 512;
  std::vector<std::uint8_t> packed(256);
  for (int b = 0; b < 256; ++b) packed[static_cast<std::size_t>(b)] = static_cast<std::uint8_t>(b);
  std::vector<float> absmax = {1.0f, 0.0123f, 3.5e-3f, 7.25f, 0.5f, 1e-30f, 2.0f, 0.333f};
  std::vector<float> want(static_cast<std::size_t>(n));
  dequantize_nf4(packed.data(), absmax.data(), n, want.data());
  DeviceBuffer<std::uint8_t> d_packed(packed.size());
  DeviceBuffer<float> d_absmax(absmax.size());
  DeviceBuffer<float> d_out(want.size());
  upload(d_packed, packed);
  upload(d_absmax, absmax);
  dequantize_nf4_cuda(d_packed.ptr, d_absmax.ptr, n, d_out.ptr, nullptr);
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  expect_same_bits(want, download(d_out), n);
}

#else  // built without the CUDA toolkit

TEST(Nf4CudaTest, WithoutToolkitEveryFunctionThrows) {
  EXPECT_THROW(dequantize_nf4_cuda(nullptr, nullptr, 64, nullptr, nullptr), InternalError);
  EXPECT_THROW(dequantize_nf4_cuda_bf16(nullptr, nullptr, 64, nullptr, nullptr), InternalError);
  EXPECT_THROW(dequantize_absmax_cuda(nullptr, nullptr, 1, 0.0f, nullptr, nullptr), InternalError);
  try {
    dequantize_nf4_cuda(nullptr, nullptr, 64, nullptr, nullptr);
  } catch (const InternalError& e) {
    EXPECT_NE(e.message().find("built without the CUDA toolkit"), std::string::npos);
  }
}

#endif

}  // namespace
}  // namespace nss::quant
