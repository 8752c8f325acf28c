// See faithfulness.h.
#include "core/analysis/faithfulness.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>

namespace attnlab::analysis {
namespace {

void check_map(const at::Tensor& map, const char* who) {
  if (!map.defined() || map.dim() != 2 || map.numel() == 0)
    throw std::invalid_argument(std::string(who) + ": a relevance map is (height, width)");
  if (!map.isfinite().all().item<bool>())
    throw std::invalid_argument(std::string(who) + ": the relevance map has a NaN or infinite value");
}

// Ranks 1..n with ties at their mean rank, as float64.
std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<int64_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    const double mean_rank = 0.5 * double(i + j) + 1.0;
    for (size_t k = i; k <= j; ++k) r[size_t(idx[k])] = mean_rank;
    i = j + 1;
  }
  return r;
}

std::vector<double> values_of(const at::Tensor& map) {
  const at::Tensor m = map.detach().to(at::kCPU, at::kDouble).contiguous().flatten();
  return std::vector<double>(m.data_ptr<double>(), m.data_ptr<double>() + m.numel());
}

}  // namespace

std::vector<int64_t> relevance_order(const at::Tensor& map, bool most_first, uint64_t seed) {
  check_map(map, "relevance order");
  const std::vector<double> v = values_of(map);
  std::vector<int64_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  // A seeded shuffle first, then a stable sort: equal cells keep the shuffled order.
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return most_first ? v[size_t(a)] > v[size_t(b)] : v[size_t(a)] < v[size_t(b)];
  });
  return order;
}

std::vector<int64_t> step_counts(int64_t cells, double step) {
  if (cells < 1) throw std::invalid_argument("faithfulness: the grid has no cell");
  if (!(step > 0 && step <= 1))
    throw std::invalid_argument("faithfulness: the step must be a fraction in (0, 1]");
  std::vector<int64_t> counts;
  for (int64_t s = 0;; ++s) {
    const int64_t k = std::min<int64_t>(cells, std::llround(double(s) * step * double(cells)));
    if (!counts.empty() && k == counts.back() && k < cells) continue;  // a step of no cell
    counts.push_back(k);
    if (k == cells) break;
  }
  return counts;
}

at::Tensor step_masks(const std::vector<int64_t>& order, const std::vector<int64_t>& counts,
                      int64_t height, int64_t width, bool insert) {
  const int64_t cells = height * width;
  if (int64_t(order.size()) != cells)
    throw std::invalid_argument("faithfulness: the order does not cover the grid");
  at::Tensor masks = at::full({int64_t(counts.size()), cells}, insert ? 0.0f : 1.0f);
  auto a = masks.accessor<float, 2>();
  for (size_t s = 0; s < counts.size(); ++s)
    for (int64_t i = 0; i < counts[s]; ++i) a[int64_t(s)][order[size_t(i)]] = insert ? 1.0f : 0.0f;
  return masks.view({int64_t(counts.size()), height, width});
}

double curve_area(const std::vector<double>& values, const std::vector<int64_t>& counts,
                  int64_t cells) {
  if (values.size() != counts.size() || values.size() < 2 || cells < 1)
    throw std::invalid_argument("faithfulness: a curve needs a value at each of 2 or more steps");
  double area = 0;
  for (size_t s = 1; s < values.size(); ++s)
    area += 0.5 * (values[s] + values[s - 1]) * double(counts[s] - counts[s - 1]) / double(cells);
  return area;
}

double spearman(const at::Tensor& a, const at::Tensor& b) {
  if (!a.defined() || !b.defined() || a.numel() != b.numel() || a.numel() < 2)
    throw std::invalid_argument("spearman: two maps of the same size (2 or more cells)");
  const std::vector<double> ra = ranks(values_of(a)), rb = ranks(values_of(b));
  const double n = double(ra.size()), mean = (n + 1) / 2;
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    sab += (ra[i] - mean) * (rb[i] - mean);
    saa += (ra[i] - mean) * (ra[i] - mean);
    sbb += (rb[i] - mean) * (rb[i] - mean);
  }
  if (saa == 0 || sbb == 0) return saa == sbb ? 1.0 : 0.0;  // constant maps, see the header
  return sab / std::sqrt(saa * sbb);
}

at::Tensor resample_map(const at::Tensor& map, int64_t height, int64_t width) {
  check_map(map, "resample");
  const at::Tensor m = map.detach().to(at::kCPU, at::kDouble);
  const int64_t h = m.size(0), w = m.size(1);
  if (h == height && w == width) return m.to(at::kFloat);
  // P (fine, coarse) per axis: the overlap of fine cell i with coarse cell j, as a share
  // of the fine cell, both grids spanning [0, 1).
  const auto axis = [](int64_t fine, int64_t coarse) {
    at::Tensor p = at::zeros({fine, coarse}, at::kDouble);
    auto a = p.accessor<double, 2>();
    for (int64_t i = 0; i < fine; ++i) {
      const double lo = double(i) / double(fine), hi = double(i + 1) / double(fine);
      for (int64_t j = 0; j < coarse; ++j) {
        const double clo = double(j) / double(coarse), chi = double(j + 1) / double(coarse);
        const double overlap = std::min(hi, chi) - std::max(lo, clo);
        if (overlap > 0) a[i][j] = overlap / (hi - lo);
      }
    }
    return p;
  };
  return axis(height, h).matmul(m).matmul(axis(width, w).t()).to(at::kFloat);
}

at::Tensor centre_prior_map(int64_t height, int64_t width) {
  const at::Tensor y = at::arange(height, at::kDouble).sub((double(height) - 1) / 2).view({-1, 1});
  const at::Tensor x = at::arange(width, at::kDouble).sub((double(width) - 1) / 2).view({1, -1});
  return (y.pow(2) + x.pow(2)).sqrt().neg().to(at::kFloat);
}

at::Tensor random_map(int64_t height, int64_t width, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  at::Tensor m = at::empty({height, width}, at::kFloat);
  float* p = m.data_ptr<float>();
  for (int64_t i = 0; i < m.numel(); ++i) p[i] = u(rng);
  return m;
}

}  // namespace attnlab::analysis
