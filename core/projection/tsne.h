// Barnes–Hut t-SNE (van der Maaten & Hinton 2008; van der Maaten, "Accelerating t-SNE
// using Tree-Based Algorithms", JMLR 15, 2014), with the optimisation schedule of
// sklearn.manifold.TSNE (≥ 1.2) so that the two can be compared point for point:
//  - P from exact nearest neighbours (tsne_affinities.h), ⌊3·perplexity⌋ + 1 of them;
//  - early exaggeration 12 for the first 250 iterations with momentum 0.5, then momentum
//    0.8; the momentum buffer and the gains restart when exaggeration ends (sklearn runs
//    its gradient descent twice); gains +0.2 when the gradient's sign flips, ×0.8 when
//    not, at least 0.01 (Jacobs 1988, as in the 2008 paper);
//  - learning rate "auto" = max(N / early_exaggeration / 4, 50) (Belkina et al. 2019);
//  - initialisation by PCA scaled so the first coordinate has standard deviation 1e-4
//    (sklearn's init='pca'; ours is exact PCA, so with it the seed changes nothing) or
//    random N(0, 1e-4²) from the seed;
//  - Student-t kernel with one degree of freedom in 2-D and 3-D (sklearn uses
//    dims − 1 = 2 degrees of freedom in 3-D; we keep the paper's kernel).
// No early stop on the gradient's norm: all `iterations` are run.
//
// kl_divergence is computed exactly at the end, KL(P‖Q) = Σ p_ij log(p_ij / q_ij) over
// the non-zero p_ij, with Q's normaliser summed over all N² pairs (sklearn reports the
// Barnes–Hut estimate of the same sum from its last check, so the two differ by the
// approximation only).
//
// Determinism: everything is a function of (data, options) — the thread count included:
// per-point forces are computed independently and summed in index order.
#pragma once

#include <cstdint>
#include <vector>

#include "core/projection/matrix.h"

namespace attnlab::projection {

struct TsneOptions {
  int dims = 2;  // 2 or 3
  double perplexity = 30.0;  // must be in (0, N − 1)
  double early_exaggeration = 12.0;
  int exaggeration_iterations = 250;
  int iterations = 1000;       // in all, the exaggerated ones included
  double learning_rate = 0.0;  // <= 0: "auto"
  double theta = 0.5;          // 0: exact repulsion (O(N²) per iteration)
  enum class Init { Pca, Random } init = Init::Pca;
  uint64_t seed = 0;  // for Init::Random
  int threads = 0;    // 0: all cores; does not change the result
};

struct TsneResult {
  int64_t n = 0;
  int dims = 2;
  std::vector<double> coords;  // N×dims
  double kl_divergence = 0.0;  // exact, at the end
};

// Progress: total = 100 + iterations; the neighbour search and P are the first 100.
TsneResult tsne(const MatrixView& x, const TsneOptions& options = {}, const Progress& progress = {});

}  // namespace attnlab::projection
