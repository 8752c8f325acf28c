// Linear CKA between layers (issue 26; Kornblith et al. 2019) with the minibatch estimator
// of Nguyen, Raghu and Kornblith (2021): per minibatch the unbiased HSIC_1 of Song et al.
// (2012) of linear-kernel Grams K = X·Xᵀ, summed over minibatches, and
//   CKA(l, m) = Σ HSIC_1(K_l, K_m) / √(Σ HSIC_1(K_l, K_l) · Σ HSIC_1(K_m, K_m)).
// Here a minibatch is one image and its examples are the image's grid tokens (every layer
// pooled by area onto the coarsest grid among the layers, so hierarchical stages compare
// token for token; prefix tokens left out), so one image already gives an estimate and an
// image set streams: only the L×L matrix of HSIC sums is kept.
//   HSIC_1(K, L) = [tr(K̃L̃) + 1ᵀK̃1·1ᵀL̃1 / ((n−1)(n−2)) − 2/(n−2)·1ᵀK̃L̃1] / (n(n−3)),
// K̃, L̃ the Grams with their diagonals set to 0; n ≥ 4 examples. Unbiased: its
// expectation is the population HSIC, so independent features give ≈ 0, not a positive bias.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "core/attention/token_layout.h"

namespace attnlab::analysis {

// HSIC_1 of two n×n Grams (float64). Throws std::invalid_argument for n < 4 or shapes
// that differ.
double hsic_unbiased(const at::Tensor& k, const at::Tensor& l);

// The L×L matrix of HSIC_1 between the linear-kernel Grams of `features` (each (n, C_l),
// the same n; centred over the examples first, which HSIC_1 does not see, and a layer
// constant up to 1e-12 of its scale taken as exactly constant), float64 on the CPU: one
// minibatch's contribution. Throws std::invalid_argument for n < 4 or non-finite values.
at::Tensor hsic_matrix(const std::vector<at::Tensor>& features);

// CKA from a (summed or averaged) HSIC matrix: H_lm / √(H_ll·H_mm); NaN where a diagonal
// entry is <= 0 (a constant layer has no variance to compare).
at::Tensor cka_from_hsic(const at::Tensor& hsic);

// Each layer's grid tokens (tokens (N_l, C_l) in layout order, prefix first) pooled by
// area (adaptive average) onto the grid with the fewest cells among the layouts: (n, C_l)
// float64, n = that grid's H·W. Throws std::invalid_argument for mismatched counts.
std::vector<at::Tensor> common_grid_features(const std::vector<at::Tensor>& tokens,
                                             const std::vector<attention::TokenLayout>& layouts);

}  // namespace attnlab::analysis
