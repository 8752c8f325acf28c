// How far a bf16 forward may land from the fp32 one: a derived bound, the same on every CPU.
//
// The model (every number below is a property of bf16 or of the network, none is a
// measurement):
// - bf16 keeps 8 significant bits, so rounding a value to bf16 moves it by at most
//   u = 2^-8 of itself (the unit roundoff; round to nearest, ties to even, is unbiased).
// - Every matrix product accumulates in fp32 on every CPU (core/runtime/bf16_products.h;
//   oneDNN and the GPUs do the same), so each operation of the forward rounds its result
//   once, and a reduction of length K adds fp32's own error, at most K·2^-24 of its terms'
//   magnitude: 2^-12 for K = 4096, below u/16.
// - Along the longest path from the input to the last block's output, a ViT block rounds
//   12 times: norm1, qkv, scores, softmax, attention × values, projection, residual add,
//   norm2, fc1, activation, fc2, residual add. The other families add at most 4 (a
//   positional convolution, a depthwise convolution in the MLP, a gate, a second
//   normalisation), so R = 16 per block. The input is rounded once and every weight once
//   (2 more), so a depth-L network rounds n = R·L + 2 times.
// - Rounding errors of distinct operations are independent and of mean zero, so they add
//   like a random walk: with probability at least 1 − 2·exp(−λ²/2) their sum stays within
//   λ·√n·u (Higham and Mary, "A new approach to probabilistic rounding error analysis",
//   SIAM J. Sci. Comput. 41(5), 2019). λ = 5 makes that 1 − 7.5e-6 for each quantity. The
//   worst case, every rounding in the same direction, is n·u; the tests use the
//   probabilistic bound because the worst case is above 1 for the deeper presets.
// So, to first order, an activation of the bf16 forward is within ε = λ·√n·u + n·K·2^-24
// of the fp32 one, relative to the scale of what it is part of. A statistic computed from
// activations moves by at most κ·ε of its scale, where κ is its conditioning, stated with
// each use: 1 for a mean, maximum, norm or distance of one layer's values; 2 for a ratio of
// two such; 2p for a quantity of degree p in the activations (a Gram matrix is degree 2);
// one ε per layer for a product over layers. Quantities that are not continuous in the
// activations (an argmax, a count over a threshold, a numerical rank) have no such bound:
// a value within ε of a tie or a threshold can go either way, so the tests compare what
// is well-defined instead, or say why they skip them.
#pragma once

#include <cmath>
#include <cstdint>

namespace attnlab::testing {

constexpr double kBf16UnitRoundoff = 0.00390625;              // 2^-8
constexpr double kFp32UnitRoundoff = 5.9604644775390625e-08;  // 2^-24
constexpr int kRoundingsPerBlock = 16;
constexpr double kBf16Lambda = 5.0;

// The number of roundings on the longest path through `blocks` transformer blocks.
inline int bf16_roundings(int blocks) {
  return kRoundingsPerBlock * blocks + 2;
}

// ε above: the relative error of the bf16 forward's activations after `blocks` blocks whose
// longest reduction has `reduction_length` terms.
inline double bf16_forward_error(int blocks, int64_t reduction_length) {
  const int n = bf16_roundings(blocks);
  return kBf16Lambda * std::sqrt(double(n)) * kBf16UnitRoundoff +
         double(n) * double(reduction_length) * kFp32UnitRoundoff;
}

}  // namespace attnlab::testing
