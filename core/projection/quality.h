// How faithful a projection is to the neighbourhoods of the data, the measures the tests
// and the user interface quote:
//  - trustworthiness (Venna & Kaski, "Neighborhood preservation in nonlinear projection
//    methods: an experimental study", ICANN 2001), as sklearn.manifold.trustworthiness:
//    T(k) = 1 − 2 / (N k (2N − 3k − 1)) Σ_i Σ_{j ∈ U_k(i)} (r(i, j) − k), where U_k(i) are
//    the points among i's k nearest in the projection but not in the data, and r(i, j) is
//    j's rank among i's neighbours in the data (1 = nearest). Ties in the data's distances
//    are ranked by index (sklearn's argsort leaves their order to its sort).
//  - k-NN preservation: the mean over points of |kNN_X(i) ∩ kNN_Y(i)| / k.
// Both are exact, by full distance rows (neighbours.h), so O(N² D) time and O(N) memory
// per block of rows. k must satisfy 1 <= k < N; trustworthiness also needs k < N / 2
// (sklearn's condition; beyond it the normalisation is not defined).
#pragma once

#include <cstdint>

#include "core/projection/matrix.h"

namespace attnlab::projection {

double trustworthiness(const MatrixView& x, const CoordsView& y, int64_t k, int threads = 0,
                       const Progress& progress = {});
double knn_preservation(const MatrixView& x, const CoordsView& y, int64_t k, int threads = 0,
                        const Progress& progress = {});

}  // namespace attnlab::projection
