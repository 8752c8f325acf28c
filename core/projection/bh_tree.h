// The space-partitioning tree of Barnes–Hut t-SNE (van der Maaten, "Accelerating t-SNE
// using Tree-Based Algorithms", JMLR 15, 2014, section 4.2): a quadtree in 2-D, an octree
// in 3-D, whose cells summarise the points inside them by their count and centre of mass.
// A cell far enough from a point (its width / distance < θ) stands for all its points in
// the repulsive forces, bringing the O(N²) sum down to O(N log N).
#pragma once

#include <cstdint>
#include <vector>

namespace attnlab::projection {

class SpaceTree {
 public:
  // y: N×dims positions, row-major; dims 2 or 3. Keeps a reference to nothing.
  SpaceTree(const std::vector<double>& y, int64_t n, int dims);

  // For point i: adds Σ_j q̃_ij² (y_i − y_j) to force[0..dims) and returns Σ_j q̃_ij over
  // j ≠ i, with q̃_ij = 1 / (1 + |y_i − y_j|²) and far cells standing for their points.
  // A cell that contains y_i is always opened, so i never counts itself (whatever θ is).
  // The traversal order is fixed, so the sums are the same on every run.
  double repulsion(int64_t i, double theta, double* force) const;

  int64_t node_count() const { return static_cast<int64_t>(nodes_.size()); }

 private:
  struct Node {
    double centre[3] = {0, 0, 0};  // the cell's centre; it spans centre ± half
    double half = 0.0;
    double mass_centre[3] = {0, 0, 0};
    int64_t count = 0;
    int64_t first_child = -1;  // 2^dims children, contiguous; -1 for a leaf
    int64_t begin = 0;         // the cell's points: order_[begin, end)
    int64_t end = 0;
  };
  void build(int64_t node, int depth);

  int dims_;
  std::vector<double> y_;
  std::vector<int64_t> order_;
  std::vector<Node> nodes_;
};

}  // namespace attnlab::projection
