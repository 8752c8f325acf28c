// The parity check the backbone tests share: a forward's logits and every tensor an
// expected fixture recorded, against what the model recorded under the same names
// (models/backbone.h: "out.<path>", "attn.<path>", ...). Header-only: only the model
// tests, which link the models library, include it.
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>

#include "models/backbone.h"
#include "tests/support/float_compare.h"

namespace attnlab::testing {

// ‖a − ref‖₂ / ‖ref‖₂ in float64.
inline double relative_l2(const at::Tensor& a, const at::Tensor& ref) {
  const at::Tensor r = ref.to(at::kDouble);
  return (a.to(at::kDouble) - r).norm().item<double>() / r.norm().item<double>();
}

// Logits within `tolerance` (max |Δ|) and every other recorded tensor of `expected`
// ("input" aside) within `tolerance` relative: the fixtures README's 1e-4 for float32.
// Prints each number ([parity] lines) and returns how many tensors were compared, for
// the caller to check that the fixture's intermediates were all there.
inline int expect_recorded_outputs_match(const models::ForwardResult& result,
                                         const std::map<std::string, at::Tensor>& expected,
                                         const std::string& tag, double tolerance = 1e-4) {
  if (result.logits.sizes() != expected.at("logits").sizes()) {
    ADD_FAILURE() << tag << ": logits " << result.logits.sizes() << ", expected "
                  << expected.at("logits").sizes();
    return 0;
  }
  const double logits = max_abs_diff(result.logits, expected.at("logits"));
  std::printf("[parity] %s logits max|d| = %.3g\n", tag.c_str(), logits);
  EXPECT_LE(logits, tolerance) << tag;
  int compared = 0;
  for (const auto& [key, ref] : expected) {
    if (key == "input" || key == "logits") continue;
    const auto it = result.outputs.find(key);
    if (it == result.outputs.end()) {
      ADD_FAILURE() << tag << ": no output " << key;
      continue;
    }
    if (it->second.sizes() != ref.sizes()) {
      ADD_FAILURE() << tag << ": " << key << " is " << it->second.sizes() << ", expected "
                    << ref.sizes();
      continue;
    }
    const double rel = relative_l2(it->second, ref);
    std::printf("[parity] %s %s rel = %.3g\n", tag.c_str(), key.c_str(), rel);
    EXPECT_LE(rel, tolerance) << tag << ": " << key;
    ++compared;
  }
  return compared;
}

}  // namespace attnlab::testing
