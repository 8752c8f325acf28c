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
  std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
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
