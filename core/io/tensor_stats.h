// Value statistics of a RawTensor without LibTorch: min, max, mean, standard deviation
// and the count of NaN / infinite elements. Used by `attnlab inspect --stats` and the
// checkpoint summary, so NaN or exploded weights are visible before anything runs.
#pragma once

#include <cstdint>

#include "core/io/raw_tensor.h"

namespace attnlab::io {

struct TensorStats {
  int64_t count = 0;  // elements
  int64_t nan = 0, inf = 0;
  double min = 0, max = 0, mean = 0, stddev = 0;  // over the finite elements
  bool has_non_finite() const { return nan > 0 || inf > 0; }
};

// Any dtype; F16/BF16 are widened exactly. Bool counts as 0/1.
TensorStats compute_stats(const RawTensor& t);

// True if a floating-point tensor holds a NaN or an infinity; stops at the first one.
// Integer tensors never do. Cheaper than compute_stats when only this is asked.
bool has_non_finite(const RawTensor& t);
// The same for `count` elements of `dtype` at `data` (any alignment).
bool has_non_finite(DType dtype, const uint8_t* data, size_t count);

// Exact conversions of the 16-bit float formats.
float half_to_float(uint16_t h);
float bfloat16_to_float(uint16_t b);

}  // namespace attnlab::io
