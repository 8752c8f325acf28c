#include "core/io/tensor_stats.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace attnlab::io {

float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1F, mant = h & 0x3FF;
  uint32_t bits;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (mant << 13);  // inf / NaN
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);  // rebias 15 -> 127
  } else {
    // Zero or subnormal: value = mant * 2^-24, exact in float.
    float v = std::ldexp(float(mant), -24);
    return sign ? -v : v;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float bfloat16_to_float(uint16_t b) {
  uint32_t bits = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

namespace {

template <class T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

double element(const RawTensor& t, size_t i) {
  const uint8_t* p = t.bytes.data() + i * dtype_size(t.dtype);
  switch (t.dtype) {
    case DType::F64:
      return load<double>(p);
    case DType::F32:
      return double(load<float>(p));
    case DType::F16:
      return double(half_to_float(load<uint16_t>(p)));
    case DType::BF16:
      return double(bfloat16_to_float(load<uint16_t>(p)));
    case DType::I64:
      return double(load<int64_t>(p));
    case DType::I32:
      return double(load<int32_t>(p));
    case DType::I16:
      return double(load<int16_t>(p));
    case DType::I8:
      return double(load<int8_t>(p));
    case DType::U8:
      return double(*p);
    case DType::Bool:
      return *p ? 1.0 : 0.0;
  }
  return 0;
}

}  // namespace

namespace {

// Whether any of n IEEE values of width W (as unsigned integers) has all exponent bits set
// (an infinity or a NaN). Blocks of 4096 without a branch per element, so the compiler
// vectorises the inner loop; the scan stops at the first block holding one.
template <class Bits>
bool any_exponent_all_ones(const uint8_t* data, size_t n, Bits exponent) {
  constexpr size_t kBlock = 4096;
  for (size_t start = 0; start < n; start += kBlock) {
    const size_t end = std::min(n, start + kBlock);
    Bits hit = 0;
    for (size_t i = start; i < end; ++i) {
      Bits v;
      std::memcpy(&v, data + i * sizeof(Bits), sizeof(Bits));
      hit |= Bits((v & exponent) == exponent);
    }
    if (hit) return true;
  }
  return false;
}

}  // namespace

bool has_non_finite(DType dtype, const uint8_t* data, size_t n) {
  switch (dtype) {
    case DType::F64:
      return any_exponent_all_ones<uint64_t>(data, n, 0x7FF0000000000000ull);
    case DType::F32:
      return any_exponent_all_ones<uint32_t>(data, n, 0x7F800000u);
    case DType::F16:
      return any_exponent_all_ones<uint16_t>(data, n, 0x7C00u);
    case DType::BF16:
      return any_exponent_all_ones<uint16_t>(data, n, 0x7F80u);
    default:
      return false;  // integers and bool are always finite
  }
}

bool has_non_finite(const RawTensor& t) {
  return has_non_finite(t.dtype, t.bytes.data(), t.bytes.size() / dtype_size(t.dtype));
}

TensorStats compute_stats(const RawTensor& t) {
  TensorStats s;
  const size_t n = t.bytes.size() / dtype_size(t.dtype);
  s.count = int64_t(n);
  // Welford's update: one pass, stable for the large, near-zero-mean tensors of weights.
  double mean = 0, m2 = 0;
  int64_t finite = 0;
  s.min = std::numeric_limits<double>::infinity();
  s.max = -s.min;
  for (size_t i = 0; i < n; ++i) {
    double v = element(t, i);
    if (std::isnan(v)) {
      ++s.nan;
      continue;
    }
    if (std::isinf(v)) {
      ++s.inf;
      continue;
    }
    ++finite;
    double d = v - mean;
    mean += d / double(finite);
    m2 += d * (v - mean);
    if (v < s.min) s.min = v;
    if (v > s.max) s.max = v;
  }
  if (finite == 0) s.min = s.max = 0;
  s.mean = mean;
  s.stddev = finite > 1 ? std::sqrt(m2 / double(finite - 1)) : 0;
  return s;
}

}  // namespace attnlab::io
