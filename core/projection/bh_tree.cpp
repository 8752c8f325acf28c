// bh_tree.h: a cube root cell split recursively at its centre; points partitioned in
// place, children stored contiguously.
#include "core/projection/bh_tree.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attnlab::projection {

namespace {
// Deeper than this, points are (numerically) on top of each other: a leaf holds them all
// and repulsion() sums them exactly. 2^-40 of the root's width is far below any layout's
// resolution.
constexpr int kMaxTreeDepth = 40;
}  // namespace

SpaceTree::SpaceTree(const std::vector<double>& y, int64_t n, int dims)
    : dims_(dims), y_(y.begin(), y.begin() + n * dims), order_(static_cast<size_t>(n)) {
  std::iota(order_.begin(), order_.end(), int64_t{0});
  Node root;
  double width = 0.0;
  for (int c = 0; c < dims_; ++c) {
    double lo = y_[static_cast<size_t>(c)], hi = lo;
    for (int64_t i = 0; i < n; ++i) {
      lo = std::min(lo, y_[static_cast<size_t>(i * dims_ + c)]);
      hi = std::max(hi, y_[static_cast<size_t>(i * dims_ + c)]);
    }
    root.centre[c] = 0.5 * (lo + hi);
    width = std::max(width, hi - lo);
  }
  // A little margin so no point sits exactly on the outer boundary.
  root.half = 0.5 * width * (1.0 + 1e-9) + 1e-12;
  root.begin = 0;
  root.end = n;
  nodes_.reserve(static_cast<size_t>(4 * n + 1));
  nodes_.push_back(root);
  build(0, 0);
}

void SpaceTree::build(int64_t node, int depth) {
  const int64_t begin = nodes_[static_cast<size_t>(node)].begin;
  const int64_t end = nodes_[static_cast<size_t>(node)].end;
  {
    Node& cell = nodes_[static_cast<size_t>(node)];
    cell.count = end - begin;
    for (int c = 0; c < dims_; ++c) {
      double s = 0.0;
      for (int64_t p = begin; p < end; ++p) s += y_[static_cast<size_t>(order_[static_cast<size_t>(p)] * dims_ + c)];
      cell.mass_centre[c] = cell.count > 0 ? s / static_cast<double>(cell.count) : 0.0;
    }
    if (cell.count <= 1 || depth >= kMaxTreeDepth) return;
  }
  const int children = 1 << dims_;
  const Node parent = nodes_[static_cast<size_t>(node)];
  auto child_of = [&](int64_t point) {
    int q = 0;
    for (int c = 0; c < dims_; ++c)
      if (y_[static_cast<size_t>(point * dims_ + c)] >= parent.centre[c]) q |= 1 << c;
    return q;
  };
  // Stable partition of the cell's points by child (a counting sort).
  std::vector<int64_t> counts(static_cast<size_t>(children + 1), 0);
  for (int64_t p = begin; p < end; ++p) ++counts[static_cast<size_t>(child_of(order_[static_cast<size_t>(p)]) + 1)];
  for (int q = 0; q < children; ++q) counts[static_cast<size_t>(q + 1)] += counts[static_cast<size_t>(q)];
  std::vector<int64_t> sorted(static_cast<size_t>(end - begin));
  std::vector<int64_t> fill(counts.begin(), counts.end() - 1);
  for (int64_t p = begin; p < end; ++p) {
    const int64_t point = order_[static_cast<size_t>(p)];
    sorted[static_cast<size_t>(fill[static_cast<size_t>(child_of(point))]++)] = point;
  }
  std::copy(sorted.begin(), sorted.end(), order_.begin() + begin);

  const int64_t first = static_cast<int64_t>(nodes_.size());
  nodes_[static_cast<size_t>(node)].first_child = first;
  for (int q = 0; q < children; ++q) {
    Node child;
    child.half = 0.5 * parent.half;
    for (int c = 0; c < dims_; ++c)
      child.centre[c] = parent.centre[c] + ((q >> c) & 1 ? child.half : -child.half);
    child.begin = begin + counts[static_cast<size_t>(q)];
    child.end = begin + counts[static_cast<size_t>(q + 1)];
    nodes_.push_back(child);
  }
  for (int q = 0; q < children; ++q)
    if (nodes_[static_cast<size_t>(first + q)].end > nodes_[static_cast<size_t>(first + q)].begin)
      build(first + q, depth + 1);
}

double SpaceTree::repulsion(int64_t i, double theta, double* force) const {
  const double* yi = y_.data() + i * dims_;
  const int children = 1 << dims_;
  double sum_q = 0.0;
  int64_t stack[8 * kMaxTreeDepth + 16];
  int top = 0;
  stack[top++] = 0;
  double diff[3];
  while (top > 0) {
    const Node& cell = nodes_[static_cast<size_t>(stack[--top])];
    if (cell.count == 0) continue;
    if (cell.first_child < 0) {  // a leaf: its points exactly
      for (int64_t p = cell.begin; p < cell.end; ++p) {
        const int64_t j = order_[static_cast<size_t>(p)];
        if (j == i) continue;
        double d2 = 0.0;
        for (int c = 0; c < dims_; ++c) {
          diff[c] = yi[c] - y_[static_cast<size_t>(j * dims_ + c)];
          d2 += diff[c] * diff[c];
        }
        const double q = 1.0 / (1.0 + d2);
        sum_q += q;
        for (int c = 0; c < dims_; ++c) force[c] += q * q * diff[c];
      }
      continue;
    }
    double d2 = 0.0;
    bool inside = true;
    for (int c = 0; c < dims_; ++c) {
      diff[c] = yi[c] - cell.mass_centre[c];
      d2 += diff[c] * diff[c];
      inside = inside && std::abs(yi[c] - cell.centre[c]) <= cell.half;
    }
    const double width = 2.0 * cell.half;
    if (!inside && width * width < theta * theta * d2) {
      const double q = 1.0 / (1.0 + d2);
      const double m = static_cast<double>(cell.count);
      sum_q += m * q;
      for (int c = 0; c < dims_; ++c) force[c] += m * q * q * diff[c];
    } else {
      // Pushed last to first so children are visited in index order.
      for (int q = children - 1; q >= 0; --q) stack[top++] = cell.first_child + q;
    }
  }
  return sum_q;
}

}  // namespace attnlab::projection
