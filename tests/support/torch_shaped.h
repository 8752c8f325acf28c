// A LibTorch tensor as the archive builder's ShapedTensor (float32 bytes, C order), for
// tests that write real checkpoints of real weights (DINO's training container, CLIP's
// TorchScript release). Header-only: the archive builder itself does not link LibTorch.
#pragma once

#include <ATen/ATen.h>

#include <string>

#include "tests/support/archive_builder.h"

namespace attnlab::testing {

inline ShapedTensor shaped_float(const std::string& name, const at::Tensor& t) {
  const at::Tensor c = t.to(at::kFloat).contiguous();
  ShapedTensor s;
  s.name = name;
  for (int64_t d : c.sizes()) s.shape.push_back(int(d));
  const auto* p = static_cast<const uint8_t*>(c.data_ptr());
  s.bytes.assign(p, p + c.nbytes());
  return s;
}

}  // namespace attnlab::testing
