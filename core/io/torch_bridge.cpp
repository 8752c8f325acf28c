#include "core/io/torch_bridge.h"

#include "core/io/tensor_stats.h"

#include <ATen/ATen.h>

#include <cstring>
#include <utility>
#include <vector>
#include <stdexcept>

namespace attnlab::io {

at::ScalarType to_scalar_type(DType t) {
  switch (t) {
    case DType::F64:
      return at::kDouble;
    case DType::F32:
      return at::kFloat;
    case DType::F16:
      return at::kHalf;
    case DType::BF16:
      return at::kBFloat16;
    case DType::I64:
      return at::kLong;
    case DType::I32:
      return at::kInt;
    case DType::I16:
      return at::kShort;
    case DType::I8:
      return at::kChar;
    case DType::U8:
      return at::kByte;
    case DType::Bool:
      return at::kBool;
  }
  throw std::invalid_argument("unknown DType");
}

DType from_scalar_type(at::ScalarType t) {
  switch (t) {
    case at::kDouble:
      return DType::F64;
    case at::kFloat:
      return DType::F32;
    case at::kHalf:
      return DType::F16;
    case at::kBFloat16:
      return DType::BF16;
    case at::kLong:
      return DType::I64;
    case at::kInt:
      return DType::I32;
    case at::kShort:
      return DType::I16;
    case at::kChar:
      return DType::I8;
    case at::kByte:
      return DType::U8;
    case at::kBool:
      return DType::Bool;
    default:
      throw std::invalid_argument(std::string("no file dtype for ") + c10::toString(t));
  }
}

at::Tensor to_torch(const RawTensor& t) {
  at::Tensor out = at::empty(t.shape, at::TensorOptions().dtype(to_scalar_type(t.dtype)));
  if (size_t(out.nbytes()) != t.bytes.size())
    throw std::invalid_argument("RawTensor " + t.describe() + " holds " +
                                std::to_string(t.bytes.size()) + " bytes, expected " +
                                std::to_string(out.nbytes()));
  if (!t.bytes.empty()) std::memcpy(out.data_ptr(), t.bytes.data(), t.bytes.size());
  return out;
}

at::Tensor to_torch(RawTensor&& t) {
  const at::ScalarType type = to_scalar_type(t.dtype);
  const int64_t expected = t.numel() * int64_t(c10::elementSize(type));
  // Empty or inconsistent tensors take the copying path (which names the inconsistency).
  if (t.bytes.empty() || int64_t(t.bytes.size()) != expected) return to_torch(std::as_const(t));
  auto* owner = new std::vector<uint8_t>(std::move(t.bytes));
  const std::vector<int64_t> shape = std::move(t.shape);
  t = RawTensor{};
  return at::from_blob(
      owner->data(), shape, [owner](void*) { delete owner; }, at::TensorOptions().dtype(type));
}

bool has_non_finite(const at::Tensor& t) {
  if (!t.is_floating_point() || t.numel() == 0) return false;
  if (t.device().is_cpu() && t.is_contiguous() && t.layout() == at::kStrided) {
    const DType dtype = from_scalar_type(t.scalar_type());
    return has_non_finite(dtype, static_cast<const uint8_t*>(t.data_ptr()), size_t(t.numel()));
  }
  return !at::isfinite(t).all().item<bool>();
}

RawTensor from_torch(const at::Tensor& t) {
  at::Tensor c = t.detach().to(at::kCPU).contiguous();
  RawTensor out;
  out.dtype = from_scalar_type(c.scalar_type());
  out.shape.assign(c.sizes().begin(), c.sizes().end());
  out.bytes.resize(c.nbytes());
  if (!out.bytes.empty()) std::memcpy(out.bytes.data(), c.data_ptr(), out.bytes.size());
  return out;
}

}  // namespace attnlab::io
