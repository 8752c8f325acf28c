// umap.h: neighbours → fuzzy graph → PCA layout → sampled SGD.
#include "core/projection/umap.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/projection/neighbours.h"
#include "core/projection/pca.h"
#include "core/projection/random.h"
#include "core/projection/umap_graph.h"

namespace attnlab::projection {

namespace {
void validate_umap(const MatrixView& x, const UmapOptions& o) {
  validate_matrix(x, "UMAP");
  if (o.n_neighbors < 2 || o.n_neighbors >= x.rows)
    throw std::invalid_argument("UMAP: n_neighbors = " + std::to_string(o.n_neighbors) +
                                " is out of range for N = " + std::to_string(x.rows) +
                                " points: it must be at least 2 and less than N");
  if (o.dims < 1 || o.dims > std::min<int64_t>(x.cols, 8))
    throw std::invalid_argument("UMAP: dims = " + std::to_string(o.dims) + " must be in [1, min(D, 8)]");
  if (!(o.spread > 0.0) || !(o.min_dist >= 0.0) || o.min_dist > o.spread)
    throw std::invalid_argument("UMAP: min_dist must be in [0, spread] and spread > 0");
  if (o.n_epochs < 0 || o.negative_sample_rate < 0 || !(o.learning_rate > 0.0))
    throw std::invalid_argument("UMAP: n_epochs and negative_sample_rate must be >= 0, learning_rate > 0");
}

std::vector<double> pca_layout(const MatrixView& x, int dims, SplitMix64& rng) {
  std::vector<double> y = pca(x, dims).coords;
  const int64_t n = x.rows;
  for (int c = 0; c < dims; ++c) {
    double lo = y[static_cast<size_t>(c)], hi = lo;
    for (int64_t i = 0; i < n; ++i) {
      lo = std::min(lo, y[static_cast<size_t>(i * dims + c)]);
      hi = std::max(hi, y[static_cast<size_t>(i * dims + c)]);
    }
    const double scale = hi > lo ? 10.0 / (hi - lo) : 0.0;
    for (int64_t i = 0; i < n; ++i) {
      double& v = y[static_cast<size_t>(i * dims + c)];
      v = (v - lo) * scale + 1e-4 * rng.normal();
    }
  }
  return y;
}

double clip4(double g) { return std::max(-4.0, std::min(4.0, g)); }
}  // namespace

UmapResult umap(const MatrixView& x, const UmapOptions& o, const Progress& progress) {
  validate_umap(x, o);
  const int64_t n = x.rows;
  const int dims = o.dims;
  const int epochs = o.n_epochs > 0 ? o.n_epochs : (n <= 10000 ? 500 : 200);
  const int64_t total = 100 + epochs;
  const Neighbours nn = exact_neighbours(x, o.n_neighbors - 1, resolve_threads(o.threads),
                                         [&](int64_t done, int64_t all) {
                                           return !progress || progress(done * 90 / std::max<int64_t>(all, 1), total);
                                         });
  const SparseRows graph = fuzzy_graph(nn, o.n_neighbors);
  const CurveParameters curve = fit_curve(o.min_dist, o.spread);
  report_progress(progress, 100, total, "UMAP");

  // The edges that will be sampled, with their sampling periods (in epochs).
  double max_w = 0.0;
  for (double w : graph.value) max_w = std::max(max_w, w);
  std::vector<int64_t> head, tail;
  std::vector<double> period;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t e = graph.row_start[static_cast<size_t>(i)]; e < graph.row_start[static_cast<size_t>(i + 1)]; ++e) {
      const double w = graph.value[static_cast<size_t>(e)];
      if (w <= 0.0 || w < max_w / epochs) continue;
      head.push_back(i);
      tail.push_back(graph.column[static_cast<size_t>(e)]);
      period.push_back(max_w / w);
    }
  std::vector<double> next_sample = period;
  std::vector<double> negative_period(period.size()), next_negative(period.size());
  for (size_t e = 0; e < period.size(); ++e)
    next_negative[e] = negative_period[e] =
        o.negative_sample_rate > 0 ? period[e] / o.negative_sample_rate : std::numeric_limits<double>::infinity();

  SplitMix64 rng(o.seed);
  std::vector<double> y = pca_layout(x, dims, rng);
  const double a = curve.a, b = curve.b;
  double diff[8];
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    const double alpha = o.learning_rate * (1.0 - static_cast<double>(epoch - 1) / epochs);
    for (size_t e = 0; e < head.size(); ++e) {
      if (next_sample[e] > epoch) continue;
      double* yi = y.data() + head[e] * dims;
      double* yj = y.data() + tail[e] * dims;
      double d2 = 0.0;
      for (int c = 0; c < dims; ++c) {
        diff[c] = yi[c] - yj[c];
        d2 += diff[c] * diff[c];
      }
      if (d2 > 0.0) {
        const double coeff = -2.0 * a * b * std::pow(d2, b - 1.0) / (1.0 + a * std::pow(d2, b));
        for (int c = 0; c < dims; ++c) {
          const double g = clip4(coeff * diff[c]) * alpha;
          yi[c] += g;
          yj[c] -= g;
        }
      }
      next_sample[e] += period[e];
      // The negative samples owed since the last time this edge was sampled.
      const auto negatives = o.negative_sample_rate > 0
                                 ? static_cast<int64_t>((epoch - next_negative[e]) / negative_period[e])
                                 : int64_t{0};
      for (int64_t s = 0; s < negatives; ++s) {
        const int64_t other = rng.below(n);
        if (other == head[e]) continue;
        const double* yk = y.data() + other * dims;
        d2 = 0.0;
        for (int c = 0; c < dims; ++c) {
          diff[c] = yi[c] - yk[c];
          d2 += diff[c] * diff[c];
        }
        if (d2 <= 0.0) continue;
        const double coeff = 2.0 * b / ((0.001 + d2) * (1.0 + a * std::pow(d2, b)));
        for (int c = 0; c < dims; ++c) yi[c] += clip4(coeff * diff[c]) * alpha;
      }
      if (negatives > 0) next_negative[e] += static_cast<double>(negatives) * negative_period[e];
    }
    report_progress(progress, 100 + epoch, total, "UMAP");
  }
  UmapResult r;
  r.n = n;
  r.dims = dims;
  r.coords = std::move(y);
  r.a = a;
  r.b = b;
  return r;
}

}  // namespace attnlab::projection
