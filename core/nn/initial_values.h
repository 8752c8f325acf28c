// Initial values of new weights: random (LibTorch's generator, so a seeded --random-init
// model is the same on every run), unless the weights are about to be loaded. Loading is
// strict (state_loading.h refuses a checkpoint that misses any parameter or buffer), so
// under a WeightsToBeLoaded guard every weight is overwritten and the random numbers would
// be drawn for nothing: 22 M of them for DeiT-S, 86 M for DeiT-B (tens of milliseconds of
// every CLI run's start-up). Then the tensors are allocated uninitialised instead.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/ArrayRef.h>

namespace attnlab::nn {

// uniform(-bound, bound), float32.
at::Tensor initial_uniform(at::IntArrayRef shape, double bound);
// randn · scale, float32 (the truncated normals of the references drawn as normals).
at::Tensor initial_normal(at::IntArrayRef shape, double scale);

// While alive, new weights made on this thread are left uninitialised.
class WeightsToBeLoaded {
 public:
  WeightsToBeLoaded();
  ~WeightsToBeLoaded();
  WeightsToBeLoaded(const WeightsToBeLoaded&) = delete;
  WeightsToBeLoaded& operator=(const WeightsToBeLoaded&) = delete;

 private:
  bool before_;
};

bool weights_to_be_loaded();  // whether a guard is alive on this thread

}  // namespace attnlab::nn
