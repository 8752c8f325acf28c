// RawTensor: a dense, C-ordered, little-endian tensor as plain bytes — what every parser
// in core/io produces and every writer consumes. core/io/torch_bridge.h converts to and
// from torch::Tensor; nothing in the parsers depends on LibTorch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/io/dtype.h"

namespace attnlab::io {

struct RawTensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;  // numel() * dtype_size(dtype) bytes, C order

  int64_t numel() const;
  // "F32[3, 64, 64]"
  std::string describe() const;
};

bool operator==(const RawTensor& a, const RawTensor& b);  // dtype, shape and bytes

// The byte size of a tensor of `shape` and `dtype` when the shape is valid: no negative
// dimension, and the product of the non-zero dimensions times the element size fits in
// int64 (numpy's rule). Checking the non-zero product matters for empty tensors too: a
// shape like (5, 2^61, 0) holds no bytes, yet numel() would overflow on the way to 0.
// Every parser checks shapes with this before building a RawTensor.
std::optional<int64_t> checked_nbytes(const std::vector<int64_t>& shape, DType dtype);

// Name -> tensor, keeping the order in which tensors were added (the file's order).
class TensorDict {
 public:
  // Throws std::invalid_argument on a duplicate name.
  void add(std::string name, RawTensor t);
  const RawTensor* find(const std::string& name) const;
  // Moves tensor i out, leaving an empty RawTensor under its name.
  RawTensor take(size_t i) { return std::move(entries_.at(i).tensor); }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

  struct Entry {
    std::string name;
    RawTensor tensor;
  };
  const std::vector<Entry>& entries() const { return entries_; }
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }

 private:
  std::vector<Entry> entries_;
  std::unordered_map<std::string, size_t> index_;
};

}  // namespace attnlab::io
