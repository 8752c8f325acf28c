// Tensor statistics: exact 16-bit float widening, NaN/Inf counted apart from the finite
// values, and mean/std against a direct computation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "core/io/tensor_stats.h"

namespace attnlab::io {
namespace {

RawTensor f32(const std::vector<float>& v) {
  RawTensor t;
  t.dtype = DType::F32;
  t.shape = {int64_t(v.size())};
  t.bytes.resize(v.size() * 4);
  // An empty vector's data() may be null, and memcpy's pointers must never be (UBSan).
  if (!v.empty()) std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
  return t;
}

TEST(TensorStats, HalfAndBFloat16Widening) {
  EXPECT_EQ(half_to_float(0x3C00), 1.0f);
  EXPECT_EQ(half_to_float(0xC000), -2.0f);
  EXPECT_EQ(half_to_float(0x7BFF), 65504.0f);
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_TRUE(std::isinf(half_to_float(0x7C00)));
  EXPECT_TRUE(std::isnan(half_to_float(0x7E00)));
  EXPECT_EQ(bfloat16_to_float(0x3F80), 1.0f);
  EXPECT_EQ(bfloat16_to_float(0xC0A0), -5.0f);
}

TEST(TensorStats, FiniteValuesAndNonFiniteCounts) {
  const float nan = std::numeric_limits<float>::quiet_NaN(),
              inf = std::numeric_limits<float>::infinity();
  TensorStats s = compute_stats(f32({1, 2, 3, 4, nan, inf, -inf}));
  EXPECT_EQ(s.count, 7);
  EXPECT_EQ(s.nan, 1);
  EXPECT_EQ(s.inf, 2);
  EXPECT_TRUE(s.has_non_finite());
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 4);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_NEAR(s.stddev, std::sqrt(5.0 / 3.0), 1e-12);
}

TEST(TensorStats, HasNonFiniteAgreesWithStats) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (const auto& v : {std::vector<float>{1, 2}, {1, nan}, {-inf}, {}})
    EXPECT_EQ(has_non_finite(f32(v)), compute_stats(f32(v)).has_non_finite());
}

// The scan reads exponent bits a block of 4096 elements at a time: a non-finite value
// anywhere (first element, a block's last, the tensor's last) is found in every float
// dtype, and the largest finite values of each are not taken for one.
TEST(TensorStats, HasNonFiniteInEveryFloatDtypeAndPosition) {
  struct Case {
    DType dtype;
    uint64_t largest_finite, inf, nan;
  };
  const Case cases[] = {{DType::F32, 0xFF7FFFFFu, 0x7F800000u, 0xFFC00001u},
                        {DType::F16, 0xFBFFu, 0xFC00u, 0x7E00u},
                        {DType::BF16, 0x7F7Fu, 0xFF80u, 0x7FC1u},
                        {DType::F64, 0x7FEFFFFFFFFFFFFFull, 0xFFF0000000000000ull,
                         0x7FF8000000000001ull}};
  const size_t n = 3 * 4096 + 17;
  for (const auto& c : cases) {
    const size_t w = dtype_size(c.dtype);
    RawTensor t;
    t.dtype = c.dtype;
    t.shape = {int64_t(n)};
    t.bytes.assign(n * w, 0);
    const auto put = [&](size_t i, uint64_t bits) { std::memcpy(t.bytes.data() + i * w, &bits, w); };
    for (size_t i = 0; i < n; i += 7) put(i, c.largest_finite);
    EXPECT_FALSE(has_non_finite(t)) << dtype_name(c.dtype);
    for (const size_t at : {size_t{0}, size_t{4095}, size_t{4096}, n - 1})
      for (const uint64_t bad : {c.inf, c.nan}) {
        RawTensor u = t;
        std::memcpy(u.bytes.data() + at * w, &bad, w);
        EXPECT_TRUE(has_non_finite(u)) << dtype_name(c.dtype) << " at " << at;
        EXPECT_EQ(compute_stats(u).nan + compute_stats(u).inf, 1) << dtype_name(c.dtype);
      }
  }
}

TEST(TensorStats, IntegerAndEmpty) {
  RawTensor t;
  t.dtype = DType::I64;
  t.shape = {3};
  int64_t v[3] = {-7, 0, 7};
  t.bytes.resize(24);
  std::memcpy(t.bytes.data(), v, 24);
  TensorStats s = compute_stats(t);
  EXPECT_DOUBLE_EQ(s.min, -7);
  EXPECT_DOUBLE_EQ(s.mean, 0);
  TensorStats e = compute_stats(f32({}));
  EXPECT_EQ(e.count, 0);
  EXPECT_FALSE(e.has_non_finite());
}

}  // namespace
}  // namespace attnlab::io
