// t-SNE's input similarities P (van der Maaten & Hinton, "Visualizing Data using t-SNE",
// JMLR 9, 2008, section 2; the sparse version of van der Maaten 2014, section 4.1): for
// each point a Gaussian over its ⌊3·perplexity⌋ + 1 nearest neighbours whose bandwidth is
// found by bisection so that its entropy is log(perplexity) nats, then symmetrised,
// p_ij = (p_j|i + p_i|j) / 2N, so that Σ p_ij = 1.
#pragma once

#include <cstdint>
#include <vector>

#include "core/projection/neighbours.h"
#include "core/projection/sparse_rows.h"

namespace attnlab::projection {

// The conditional p_j|i over nn's neighbours (nn.sq_distance: squared distances), each
// row calibrated to the perplexity (bisection on the precision β = 1/2σ² until the
// entropy is within 1e-5 nats of log(perplexity), at most 200 steps), then symmetrised
// and normalised to sum 1.
SparseRows perplexity_affinities(const Neighbours& nn, double perplexity, int threads);

// The row's conditional probabilities for precision beta; returns their entropy (nats).
// Exposed for the tests.
double conditional_row(const double* sq_distance, int64_t k, double beta, double* p);

}  // namespace attnlab::projection
