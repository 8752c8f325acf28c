// tsne.h: P, initial layout, gradient descent with Barnes–Hut repulsion, exact KL.
#include "core/projection/tsne.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/projection/bh_tree.h"
#include "core/projection/neighbours.h"
#include "core/projection/parallel.h"
#include "core/projection/pca.h"
#include "core/projection/random.h"
#include "core/projection/tsne_affinities.h"

namespace attnlab::projection {

namespace {
constexpr int64_t kTsneBlock = 256;  // points per parallel block

void validate_tsne(const MatrixView& x, const TsneOptions& o) {
  validate_matrix(x, "t-SNE");
  const auto n = static_cast<double>(x.rows);
  if (!(o.perplexity > 0.0) || !(o.perplexity < n - 1.0))
    throw std::invalid_argument("t-SNE: perplexity " + std::to_string(o.perplexity) +
                                " is out of range for N = " + std::to_string(x.rows) +
                                " points: it must be greater than 0 and less than N − 1");
  if (o.dims != 2 && o.dims != 3)
    throw std::invalid_argument("t-SNE: dims = " + std::to_string(o.dims) + "; only 2 and 3 are supported");
  if (o.iterations < 1 || o.exaggeration_iterations < 0)
    throw std::invalid_argument("t-SNE: iterations must be at least 1 (exaggeration iterations at least 0)");
  if (!(o.theta >= 0.0) || !(o.early_exaggeration > 0.0))
    throw std::invalid_argument("t-SNE: theta must be >= 0 and early_exaggeration > 0");
}

std::vector<double> initial_layout(const MatrixView& x, const TsneOptions& o) {
  const int64_t n = x.rows;
  std::vector<double> y(static_cast<size_t>(n * o.dims));
  if (o.init == TsneOptions::Init::Pca && x.cols >= o.dims) {
    y = pca(x, o.dims).coords;
    double mean = 0.0, var = 0.0;
    for (int64_t i = 0; i < n; ++i) mean += y[static_cast<size_t>(i * o.dims)];
    mean /= static_cast<double>(n);
    for (int64_t i = 0; i < n; ++i) var += std::pow(y[static_cast<size_t>(i * o.dims)] - mean, 2);
    const double sd = std::sqrt(var / static_cast<double>(n));
    for (double& v : y) v = sd > 0 ? v / sd * 1e-4 : 0.0;
    if (sd > 0) return y;
  }
  SplitMix64 rng(o.seed);
  for (double& v : y) v = 1e-4 * rng.normal();
  return y;
}

// Σ_{i≠j} 1 / (1 + |y_i − y_j|²), exactly, by rows summed in index order.
double exact_normaliser(const std::vector<double>& y, int64_t n, int dims, int threads) {
  std::vector<double> rows(static_cast<size_t>(n), 0.0);
  parallel_blocks((n + kTsneBlock - 1) / kTsneBlock, threads, [&](int64_t b) {
    for (int64_t i = b * kTsneBlock; i < std::min(n, (b + 1) * kTsneBlock); ++i) {
      double s = 0.0;
      for (int64_t j = 0; j < n; ++j) {
        if (j == i) continue;
        double d2 = 0.0;
        for (int c = 0; c < dims; ++c) d2 += std::pow(y[static_cast<size_t>(i * dims + c)] - y[static_cast<size_t>(j * dims + c)], 2);
        s += 1.0 / (1.0 + d2);
      }
      rows[static_cast<size_t>(i)] = s;
    }
  });
  double z = 0.0;
  for (double s : rows) z += s;
  return z;
}

double kl_divergence(const SparseRows& p, const std::vector<double>& y, int dims, int threads) {
  const double z = exact_normaliser(y, p.n, dims, threads);
  double kl = 0.0;
  for (int64_t i = 0; i < p.n; ++i)
    for (int64_t e = p.row_start[static_cast<size_t>(i)]; e < p.row_start[static_cast<size_t>(i + 1)]; ++e) {
      const int64_t j = p.column[static_cast<size_t>(e)];
      double d2 = 0.0;
      for (int c = 0; c < dims; ++c) d2 += std::pow(y[static_cast<size_t>(i * dims + c)] - y[static_cast<size_t>(j * dims + c)], 2);
      const double q = 1.0 / (1.0 + d2) / z;
      const double pij = p.value[static_cast<size_t>(e)];
      if (pij > 0) kl += pij * std::log(pij / std::max(q, 1e-300));
    }
  return kl;
}
}  // namespace

TsneResult tsne(const MatrixView& x, const TsneOptions& o, const Progress& progress) {
  validate_tsne(x, o);
  const int64_t n = x.rows;
  const int dims = o.dims;
  const int threads = resolve_threads(o.threads);
  const int64_t total = 100 + o.iterations;
  const int64_t k = std::min<int64_t>(n - 1, static_cast<int64_t>(3.0 * o.perplexity + 1.0));
  const Neighbours nn = exact_neighbours(x, k, threads, [&](int64_t done, int64_t all) {
    return !progress || progress(done * 90 / std::max<int64_t>(all, 1), total);
  });
  const SparseRows p = perplexity_affinities(nn, o.perplexity, threads);
  report_progress(progress, 100, total, "t-SNE");

  std::vector<double> y = initial_layout(x, o);
  const double rate = o.learning_rate > 0 ? o.learning_rate
                                          : std::max(static_cast<double>(n) / o.early_exaggeration / 4.0, 50.0);
  const size_t values = static_cast<size_t>(n * dims);
  std::vector<double> grad(values), update(values, 0.0), gains(values, 1.0);
  std::vector<double> repulsion(values), sum_q(static_cast<size_t>(n));
  const int64_t blocks = (n + kTsneBlock - 1) / kTsneBlock;
  for (int it = 0; it < o.iterations; ++it) {
    const bool exaggerated = it < o.exaggeration_iterations;
    if (it == o.exaggeration_iterations) {  // sklearn's second descent starts afresh
      std::fill(update.begin(), update.end(), 0.0);
      std::fill(gains.begin(), gains.end(), 1.0);
    }
    const double exaggeration = exaggerated ? o.early_exaggeration : 1.0;
    const double momentum = exaggerated ? 0.5 : 0.8;
    const SpaceTree tree(y, n, dims);
    // Per point: the attraction Σ_j p_ij q̃_ij (y_i − y_j) into grad, the unnormalised
    // repulsion Σ_j q̃_ij² (y_i − y_j) and Σ_j q̃_ij into their own slots (2014, eq. 3–4).
    parallel_blocks(blocks, threads, [&](int64_t b) {
      for (int64_t i = b * kTsneBlock; i < std::min(n, (b + 1) * kTsneBlock); ++i) {
        const double* yi = y.data() + i * dims;
        double* gi = grad.data() + i * dims;
        double* ri = repulsion.data() + i * dims;
        for (int c = 0; c < dims; ++c) gi[c] = ri[c] = 0.0;
        for (int64_t e = p.row_start[static_cast<size_t>(i)]; e < p.row_start[static_cast<size_t>(i + 1)]; ++e) {
          const double* yj = y.data() + p.column[static_cast<size_t>(e)] * dims;
          double d2 = 0.0;
          for (int c = 0; c < dims; ++c) d2 += (yi[c] - yj[c]) * (yi[c] - yj[c]);
          const double w = p.value[static_cast<size_t>(e)] * exaggeration / (1.0 + d2);
          for (int c = 0; c < dims; ++c) gi[c] += w * (yi[c] - yj[c]);
        }
        sum_q[static_cast<size_t>(i)] = tree.repulsion(i, o.theta, ri);
      }
    });
    double z = 0.0;  // in index order: the same sum for any thread count
    for (double s : sum_q) z += s;
    for (size_t v = 0; v < values; ++v) {
      // ∂KL/∂y_i = 4 (attraction − repulsion / Z); then the gains and momentum step.
      const double g = 4.0 * (grad[v] - repulsion[v] / z);
      gains[v] = (update[v] * g < 0.0) ? gains[v] + 0.2 : gains[v] * 0.8;
      gains[v] = std::max(gains[v], 0.01);
      update[v] = momentum * update[v] - rate * gains[v] * g;
      y[v] += update[v];
    }
    report_progress(progress, 100 + it + 1, total, "t-SNE");
  }
  TsneResult r;
  r.n = n;
  r.dims = dims;
  r.kl_divergence = kl_divergence(p, y, dims, threads);
  r.coords = std::move(y);
  return r;
}

}  // namespace attnlab::projection
