// UMAP's fuzzy simplicial set and output curve (McInnes, Healy & Melville, "UMAP: Uniform
// Manifold Approximation and Projection for Dimension Reduction", arXiv:1802.03426, 2018):
//  - section 3.1 / Algorithm 3 (SmoothKNNDist): for each point, ρ_i = distance to its
//    nearest neighbour at a non-zero distance, and σ_i such that
//    Σ_j exp(−max(0, d_ij − ρ_i) / σ_i) = log2(n_neighbors) over its n_neighbors − 1
//    nearest other points (n_neighbors counts the point itself, as umap-learn's does);
//  - the directed weights w_ij = exp(−max(0, d_ij − ρ_i) / σ_i), made symmetric by the
//    fuzzy union a + b − ab (sparse_rows.h);
//  - section 4 / appendix: the low-dimensional similarity 1 / (1 + a d^2b) with a, b fitted
//    by non-linear least squares to the curve that is 1 up to min_dist and
//    exp(−(d − min_dist) / spread) after it, on 300 points of [0, 3·spread].
#pragma once

#include <cstdint>

#include "core/projection/neighbours.h"
#include "core/projection/sparse_rows.h"

namespace attnlab::projection {

// nn: the n_neighbors − 1 nearest other points (squared distances). σ_i is found by
// bisection (64 steps, or within 1e-5 of the target) and kept at least 1e-3 × the mean
// neighbour distance, so points whose neighbours all sit at ρ_i keep finite weights.
SparseRows fuzzy_graph(const Neighbours& nn, int n_neighbors);

struct CurveParameters {
  double a = 0.0;
  double b = 0.0;
};
// Levenberg–Marquardt from (a, b) = (1, 1). min_dist = 0.1, spread = 1 gives
// a ≈ 1.577, b ≈ 0.895 (the values umap-learn's documentation quotes for its defaults).
CurveParameters fit_curve(double min_dist, double spread);

}  // namespace attnlab::projection
