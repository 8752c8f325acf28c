// The only place where core/io's plain RawTensor meets LibTorch: conversions in both
// directions. The result owns its memory: a copy, or the RawTensor's own bytes when it is
// handed over (an rvalue), so a checkpoint's weights are not copied once more on load.
#pragma once

#include <ATen/core/Tensor.h>

#include "core/io/raw_tensor.h"

namespace attnlab::io {

at::ScalarType to_scalar_type(DType t);
// Throws std::invalid_argument for a scalar type with no DType (complex, quantized, ...).
DType from_scalar_type(at::ScalarType t);

// A new CPU tensor with the RawTensor's dtype, shape and bytes.
at::Tensor to_torch(const RawTensor& t);
// The same without a copy: the tensor takes over t's bytes (freed with the tensor).
at::Tensor to_torch(RawTensor&& t);
// A RawTensor from any tensor (moved to CPU and made contiguous first).
RawTensor from_torch(const at::Tensor& t);

// Whether a tensor holds a NaN or an infinity (integer tensors never do): a pass over the
// exponent bits for contiguous CPU tensors, at::isfinite elsewhere.
bool has_non_finite(const at::Tensor& t);

}  // namespace attnlab::io
