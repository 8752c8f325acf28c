#include "core/io/raw_tensor.h"

#include <stdexcept>

namespace attnlab::io {

int64_t RawTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string RawTensor::describe() const {
  std::string s = dtype_name(dtype);
  s += '[';
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + ']';
}

std::optional<int64_t> checked_nbytes(const std::vector<int64_t>& shape, DType dtype) {
  int64_t nonzero = int64_t(dtype_size(dtype));
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0) return std::nullopt;
    if (d == 0) {
      empty = true;
      continue;
    }
    if (__builtin_mul_overflow(nonzero, d, &nonzero)) return std::nullopt;
  }
  return empty ? 0 : nonzero;
}

bool operator==(const RawTensor& a, const RawTensor& b) {
  return a.dtype == b.dtype && a.shape == b.shape && a.bytes == b.bytes;
}

void TensorDict::add(std::string name, RawTensor t) {
  if (index_.count(name)) throw std::invalid_argument("duplicate tensor name '" + name + "'");
  index_.emplace(name, entries_.size());
  entries_.push_back({std::move(name), std::move(t)});
}

const RawTensor* TensorDict::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &entries_[it->second].tensor;
}

}  // namespace attnlab::io
