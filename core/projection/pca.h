// Principal component analysis, exact: the eigendecomposition of the sample covariance in
// double (Eigen's SelfAdjointEigenSolver), or of the Gram matrix when D > N (same
// non-zero spectrum, smaller matrix). Pearson 1901; Jolliffe, "Principal Component
// Analysis" (2002), ch. 1 and 3.5 for the Gram (dual) route.
//
// Conventions, chosen to match sklearn.decomposition.PCA so the two can be compared:
//  - variances are sample variances (divided by N − 1), as sklearn's explained_variance_;
//  - explained_variance_ratio = explained_variance / total variance, where the total is
//    the trace of the covariance (all D directions, not only the k kept);
//  - sign rule: in each component the loading of largest absolute value is positive (on an
//    exact tie, the first such loading). This is sklearn's svd_flip applied to Vt
//    (u_based_decision=False, PCA's rule since sklearn 1.5); sklearn 1.2 decides by the
//    scores instead, so against it signs agree only up to a flip per component.
#pragma once

#include <cstdint>
#include <vector>

#include "core/projection/matrix.h"

namespace attnlab::projection {

struct PcaResult {
  int64_t n = 0;
  int64_t d = 0;
  int64_t k = 0;
  std::vector<double> coords;                    // N×k: (x − mean) · componentᵀ
  std::vector<double> components;                // k×D, unit rows, by decreasing variance
  std::vector<double> mean;                      // D
  std::vector<double> explained_variance;        // k: the covariance's top eigenvalues
  std::vector<double> explained_variance_ratio;  // k: against total_variance
  double total_variance = 0.0;                   // trace of the sample covariance
};

// k in [1, min(N, D)]. Progress: 3 stages (covariance, eigensolver, projection).
// A component beyond the data's rank (zero variance) is a zero row.
template <typename T>
PcaResult pca(const BasicMatrixView<T>& x, int64_t k = 2, const Progress& progress = {});

}  // namespace attnlab::projection
