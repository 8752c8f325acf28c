// The only place where core/io's plain RawTensor meets LibTorch: conversions in both
// directions (always copies, so the result owns its memory).
#pragma once

#include <ATen/core/Tensor.h>

#include "core/io/raw_tensor.h"

namespace attnlab::io {

at::ScalarType to_scalar_type(DType t);
// Throws std::invalid_argument for a scalar type with no DType (complex, quantized, ...).
DType from_scalar_type(at::ScalarType t);

// A new CPU tensor with the RawTensor's dtype, shape and bytes.
at::Tensor to_torch(const RawTensor& t);
// A RawTensor from any tensor (moved to CPU and made contiguous first).
RawTensor from_torch(const at::Tensor& t);

}  // namespace attnlab::io
