// Initial weights: see initial_values.h.
#include "core/nn/initial_values.h"

#include <ATen/ATen.h>

namespace attnlab::nn {
namespace {

thread_local bool g_to_be_loaded = false;

}  // namespace

at::Tensor initial_uniform(at::IntArrayRef shape, double bound) {
  at::Tensor t = at::empty(shape, at::kFloat);
  return g_to_be_loaded ? t : t.uniform_(-bound, bound);
}

at::Tensor initial_normal(at::IntArrayRef shape, double scale) {
  if (g_to_be_loaded) return at::empty(shape, at::kFloat);
  return at::randn(shape) * scale;
}

WeightsToBeLoaded::WeightsToBeLoaded() : before_(g_to_be_loaded) {
  g_to_be_loaded = true;
}

WeightsToBeLoaded::~WeightsToBeLoaded() {
  g_to_be_loaded = before_;
}

bool weights_to_be_loaded() {
  return g_to_be_loaded;
}

}  // namespace attnlab::nn
