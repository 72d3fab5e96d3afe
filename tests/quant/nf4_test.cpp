#include "quant/nf4.h"

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/half.h"
#include "quant/double_quant.h"

namespace nss::quant {
namespace {

std::vector<float> normal_values(std::int64_t n, unsigned seed, float scale = 0.02f) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

struct Quantised {
  std::vector<std::uint8_t> packed;
  std::vector<float> absmax;
};

Quantised quantise(const std::vector<float>& x) {
  const Nf4Layout layout{static_cast<std::int64_t>(x.size())};
  Quantised q{std::vector<std::uint8_t>(layout.packed_bytes()),
              std::vector<float>(layout.blocks())};
  quantize_nf4(x.data(), layout.elements, q.packed.data(), q.absmax.data());
  return q;
}

float max_half_gap() {
  const auto& lv = nf4_levels();
  float gap = 0.0f;
  for (int i = 0; i < 15; ++i) gap = std::max(gap, (lv[i + 1] - lv[i]) / 2.0f);
  return gap;
}

TEST(Nf4Test, LevelsAreSortedFromMinusOneToOneWithZero) {
  const auto& lv = nf4_levels();
  EXPECT_EQ(lv[0], -1.0f);
  EXPECT_EQ(lv[7], 0.0f);
  EXPECT_EQ(lv[15], 1.0f);
  for (int i = 0; i < 15; ++i) EXPECT_LT(lv[i], lv[i + 1]);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(nf4_code(lv[i]), i);
}

TEST(Nf4Test, ExactMidpointTakesTheLowerLevel) {
  const auto& lv = nf4_levels();
  for (int i = 0; i < 15; ++i) {
    const float mid = (lv[i] + lv[i + 1]) / 2.0f;
    EXPECT_EQ(nf4_code(mid), i);
    EXPECT_EQ(nf4_code(std::nextafter(mid, 2.0f)), i + 1);
  }
}

TEST(Nf4Test, LayoutSizes) {
  const Nf4Layout layout{129};
  EXPECT_EQ(layout.blocks(), 3);
  EXPECT_EQ(layout.packed_bytes(), 65);
  EXPECT_EQ(layout.absmax_bytes(), 12);
}

TEST(Nf4Test, FirstElementGoesToTheHighNibble) {
  std::vector<float> x(64, 0.0f);
  x[0] = -1.0f;  // code 0
  x[1] = 1.0f;   // code 15
  x[2] = 1.0f;
  x[3] = -1.0f;
  const auto q = quantise(x);
  EXPECT_EQ(q.absmax[0], 1.0f);
  EXPECT_EQ(q.packed[0], 0x0F);
  EXPECT_EQ(q.packed[1], 0xF0);
  EXPECT_EQ(q.packed[2], 0x77);
}

TEST(Nf4Test, OddLengthHasShortLastBlockAndZeroCodePad) {
  auto x = normal_values(131, 1);
  const auto q = quantise(x);
  ASSERT_EQ(q.absmax.size(), 3u);
  EXPECT_EQ(q.absmax[2], std::max({std::fabs(x[128]), std::fabs(x[129]), std::fabs(x[130])}));
  EXPECT_EQ(q.packed.back() & 0x0F, 7);
  std::vector<float> out(x.size());
  dequantize_nf4(q.packed.data(), q.absmax.data(), x.size(), out.data());
  for (std::size_t i = 0; i < x.size(); ++i)
    EXPECT_LE(std::fabs(out[i] - x[i]), q.absmax[i / 64] * max_half_gap() * 1.0001f) << i;
}

TEST(Nf4Test, BlockAlignedSlicesGiveTheBytesOfTheWhole) {
  const auto x = normal_values(64 * 37 + 21, 2);
  const auto whole = quantise(x);
  const Nf4Layout layout{static_cast<std::int64_t>(x.size())};
  std::vector<std::uint8_t> packed(layout.packed_bytes());
  std::vector<float> absmax(layout.blocks());
  const std::int64_t cuts[] = {0, 64 * 5, 64 * 6, 64 * 30, layout.elements};
  for (int s = 0; s + 1 < 5; ++s)
    quantize_nf4(x.data() + cuts[s], cuts[s + 1] - cuts[s], packed.data() + cuts[s] / 2,
                 absmax.data() + cuts[s] / 64);
  EXPECT_EQ(packed, whole.packed);
  EXPECT_EQ(absmax, whole.absmax);
  std::vector<float> partial(layout.blocks());
  nf4_block_absmax(x.data(), layout.elements, partial.data());
  EXPECT_EQ(partial, whole.absmax);
}

TEST(Nf4Test, RoundTripWithinTheNf4Bound) {
  for (std::int64_t n : {1, 2, 63, 64, 65, 1000, 4097}) {
    const auto x = normal_values(n, static_cast<unsigned>(n), 0.5f);
    const auto q = quantise(x);
    std::vector<float> out(n), ref(n);
    dequantize_nf4(q.packed.data(), q.absmax.data(), n, out.data());
    dequantize_nf4_scalar(q.packed.data(), q.absmax.data(), n, ref.data());
    EXPECT_EQ(out, ref);
    for (std::int64_t i = 0; i < n; ++i)
      EXPECT_LE(std::fabs(out[i] - x[i]), q.absmax[i / 64] * max_half_gap() * 1.0001f);
  }
}

TEST(Nf4Test, Bf16OutputIsTheRoundedFloatOutput) {
  const auto x = normal_values(200, 3);
  const auto q = quantise(x);
  std::vector<float> out(x.size());
  std::vector<std::uint16_t> bf(x.size());
  dequantize_nf4(q.packed.data(), q.absmax.data(), x.size(), out.data());
  dequantize_nf4_bf16(q.packed.data(), q.absmax.data(), x.size(), bf.data());
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(bf[i], float_to_bf16(out[i]));
}

TEST(Nf4Test, ZeroAndConstantBlocks) {
  std::vector<float> x(128, 0.0f);
  for (int i = 64; i < 128; ++i) x[i] = -0.25f;
  const auto q = quantise(x);
  EXPECT_EQ(q.absmax[0], 0.0f);
  EXPECT_EQ(q.absmax[1], 0.25f);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(q.packed[i], 0x77);
  for (int i = 32; i < 64; ++i) EXPECT_EQ(q.packed[i], 0x00);
  std::vector<float> out(128);
  dequantize_nf4(q.packed.data(), q.absmax.data(), 128, out.data());
  for (int i = 0; i < 128; ++i) EXPECT_EQ(out[i], x[i]);
}

TEST(Nf4Test, NonFiniteInputIsRejected) {
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()}) {
    auto x = normal_values(100, 4);
    x[70] = bad;
    const Nf4Layout layout{100};
    std::vector<std::uint8_t> packed(layout.packed_bytes());
    std::vector<float> absmax(layout.blocks());
    EXPECT_THROW(quantize_nf4(x.data(), 100, packed.data(), absmax.data()), DataError);
    EXPECT_THROW(nf4_block_absmax(x.data(), 100, absmax.data()), DataError);
  }
}

TEST(DoubleQuantTest, DynamicMapIsSortedSignedAndHoldsZero) {
  const auto& map = dynamic_map();
  EXPECT_GT(map[0], -1.0f);
  EXPECT_EQ(dynamic_code(-1.0f), 0);
  EXPECT_EQ(map[255], 1.0f);
  for (int i = 0; i < 255; ++i) EXPECT_LT(map[i], map[i + 1]);
  EXPECT_EQ(map[dynamic_code(0.0f)], 0.0f);
  for (int i = 0; i < 256; ++i) EXPECT_EQ(dynamic_code(map[i]), i);
  EXPECT_EQ(dynamic_code((map[200] + map[201]) / 2.0f), 200);
}

TEST(DoubleQuantTest, RoundTripAndSlicesByGroup) {
  const std::int64_t blocks = 256 * 3 + 17;
  const auto x = normal_values(blocks * 64, 5);
  std::vector<float> absmax(blocks);
  nf4_block_absmax(x.data(), x.size(), absmax.data());
  // Two "ranks" summing their halves in order give the whole tensor's sum.
  const double sum = absmax_partial_sum(absmax.data(), 512) +
                     absmax_partial_sum(absmax.data() + 512, blocks - 512);
  EXPECT_EQ(sum, absmax_partial_sum(absmax.data(), blocks));
  const float offset = absmax_offset(sum, blocks);
  std::vector<std::uint8_t> codes(blocks), sliced(blocks);
  std::vector<float> groups(4), sliced_groups(4);
  quantize_absmax(absmax.data(), blocks, offset, codes.data(), groups.data());
  quantize_absmax(absmax.data(), 256, offset, sliced.data(), sliced_groups.data());
  quantize_absmax(absmax.data() + 256, blocks - 256, offset, sliced.data() + 256,
                  sliced_groups.data() + 1);
  EXPECT_EQ(codes, sliced);
  EXPECT_EQ(groups, sliced_groups);
  std::vector<float> back(blocks);
  dequantize_absmax(codes.data(), groups.data(), blocks, offset, back.data());
  const auto& map = dynamic_map();
  float half_gap = 0.0f;
  for (int i = 0; i < 255; ++i) half_gap = std::max(half_gap, (map[i + 1] - map[i]) / 2.0f);
  for (std::int64_t i = 0; i < blocks; ++i)
    EXPECT_LE(std::fabs(back[i] - absmax[i]), groups[i / 256] * half_gap * 1.0001f + 1e-7f) << i;
}

TEST(DoubleQuantTest, ConstantAbsmaxComesBackExactly) {
  std::vector<float> absmax(300, 0.125f);
  const float offset = absmax_offset(absmax_partial_sum(absmax.data(), 300), 300);
  EXPECT_EQ(offset, 0.125f);
  std::vector<std::uint8_t> codes(300);
  std::vector<float> groups(2), back(300);
  quantize_absmax(absmax.data(), 300, offset, codes.data(), groups.data());
  EXPECT_EQ(groups[0], 0.0f);
  dequantize_absmax(codes.data(), groups.data(), 300, offset, back.data());
  EXPECT_EQ(back, absmax);
}

}  // namespace
}  // namespace nss::quant
