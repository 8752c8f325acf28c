// Attention rollout (SPEC §3) through a stack of traced layers, and the area mapping that
// carries token weights between the grids of hierarchical stages.
//
// R = M_L · P_L · M_{L-1} ··· P_2 · M_1 with M_l = norm(r·Â_l + (1−r)·I) and P_l the area map
// from layer l's layout to layer l−1's (identity when equal). A query's row e_qᵀR is built
// from the last layer backwards, v ← M_lᵀ v then v ← P_lᵀ v, so that with mean fusion and no
// discarding every step is a product with the traces' own Aᵀ (apply_transposed) and the row
// sums are A·1 (apply): O(L·N·d) on linear mechanisms. Anything else needs each layer's
// fused map explicitly, which is bounded by max_tokens. Explicit work is done in float64.
#include "core/analysis/rollout.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <tuple>

namespace attnlab::analysis {

using attention::AttentionTrace;
using attention::TokenLayout;
using attention::TraceQueryError;

namespace {

const auto kF64 = at::TensorOptions().dtype(at::kDouble);

void check_options(const RolloutOptions& o) {
  if (!(o.residual >= 0.0 && o.residual <= 1.0))
    throw std::invalid_argument("rollout: residual weight r = " + std::to_string(o.residual) +
                                " must lie in [0, 1]");
  if (!(o.discard_ratio >= 0.0 && o.discard_ratio < 1.0))
    throw std::invalid_argument("rollout: discard ratio " + std::to_string(o.discard_ratio) +
                                " must lie in [0, 1)");
  if (o.max_tokens < 1)
    throw std::invalid_argument("rollout: max_tokens must be >= 1, got " +
                                std::to_string(o.max_tokens));
}

void check_layers(const std::vector<const AttentionTrace*>& layers, int64_t b) {
  if (layers.empty()) throw std::invalid_argument("rollout needs at least one traced layer");
  for (size_t l = 0; l < layers.size(); ++l) {
    if (!layers[l])
      throw std::invalid_argument("rollout: layer " + std::to_string(l) + " has no trace");
    if (b < 0 || b >= layers[l]->batch)
      throw TraceQueryError("rollout: image " + std::to_string(b) + " is out of range: layer " +
                            std::to_string(l) + " holds " + std::to_string(layers[l]->batch));
  }
}

void check_explicit_size(const std::vector<const AttentionTrace*>& layers, int64_t max_tokens,
                         const char* why) {
  for (size_t l = 0; l < layers.size(); ++l)
    if (layers[l]->layout.tokens() > max_tokens)
      throw TraceQueryError(std::string("rollout ") + why + " needs each layer's explicit N" +
                            "\xC3\x97" + "N map, but layer " + std::to_string(l) + " has " +
                            std::to_string(layers[l]->layout.tokens()) + " tokens (" +
                            layers[l]->layout.describe() +
                            "), above max_tokens = " + std::to_string(max_tokens));
}

bool same_layout(const TokenLayout& a, const TokenLayout& b) {
  return a.height == b.height && a.width == b.width && a.prefix == b.prefix;
}

// Share of coarse cell i (of n_c along one axis) that overlaps fine cell j (of n_f): in
// units of 1/(n_c·n_f) the cells are [i·n_f, (i+1)·n_f) and [j·n_c, (j+1)·n_c).
at::Tensor axis_overlap(int64_t n_c, int64_t n_f) {
  at::Tensor p = at::zeros({n_c, n_f}, kF64);
  auto acc = p.accessor<double, 2>();
  for (int64_t i = 0; i < n_c; ++i)
    for (int64_t j = 0; j < n_f; ++j) {
      const int64_t lo = std::max(i * n_f, j * n_c), hi = std::min((i + 1) * n_f, (j + 1) * n_c);
      if (hi > lo) acc[i][j] = static_cast<double>(hi - lo) / static_cast<double>(n_f);
    }
  return p;
}

at::Tensor area_map_f64(const TokenLayout& coarse, const TokenLayout& fine) {
  if (coarse.height <= 0 || coarse.width <= 0 || fine.height <= 0 || fine.width <= 0)
    throw std::invalid_argument("area_map needs two non-empty grids, got " + coarse.describe() +
                                " and " + fine.describe());
  const int64_t pc = coarse.num_prefix(), pf = fine.num_prefix();
  at::Tensor p = at::zeros({coarse.tokens(), fine.tokens()}, kF64);
  for (int64_t i = 0; i < pc; ++i)
    for (int64_t j = 0; j < pf; ++j)
      if (coarse.prefix[static_cast<size_t>(i)] == fine.prefix[static_cast<size_t>(j)]) {
        p[i][j] = 1.0;
        break;
      }
  // Cells are separable: the 2-D overlap share is the product of the two axes' shares.
  const at::Tensor py = axis_overlap(coarse.height, fine.height);
  const at::Tensor px = axis_overlap(coarse.width, fine.width);
  const at::Tensor grid =
      (py.view({coarse.height, 1, fine.height, 1}) * px.view({1, coarse.width, 1, fine.width}))
          .reshape({coarse.grid_tokens(), fine.grid_tokens()});
  p.slice(0, pc).slice(1, pf).copy_(grid);
  return p;
}

// Row sums as divisors; a row summing to exactly 0 (possible only for signed rows such as
// castling's or RALA's) is left as it is rather than turned into inf/NaN.
at::Tensor rollout_safe_divisor(const at::Tensor& sums) {
  return at::where(sums == 0, at::ones_like(sums), sums);
}

// Â_l (N, N) on the layer's tokens, float64 on CPU, built a chunk of query rows at a time.
at::Tensor fused_matrix(const AttentionTrace& t, int64_t b, HeadFusion fusion) {
  const int64_t n = t.layout.tokens();
  at::Tensor out = at::empty({n, n}, kF64);
  for (int64_t r0 = 0; r0 < n; r0 += AttentionTrace::kApplyChunkRows) {
    const int64_t r1 = std::min(n, r0 + AttentionTrace::kApplyChunkRows);
    const at::Tensor queries = at::arange(r0, r1, at::kLong);
    std::vector<at::Tensor> heads;
    for (int64_t h = 0; h < t.heads; ++h)
      heads.push_back(attention::rows_on_tokens(t.rows(b, h, queries), t.group_of(h).keys, t.layout)
                          .to(at::kCPU, at::kDouble));
    out.slice(0, r0, r1).copy_(fuse_heads(at::stack(heads), fusion));
  }
  return out;
}

// M = norm(r·Â + (1−r)·I) of a fused map `a` (float64, owned: changed in place) with p
// prefix tokens, explicitly, with the smallest entries discarded first.
at::Tensor step_from_fused(at::Tensor a, int64_t p, const RolloutOptions& o) {
  const int64_t n = a.size(0);
  const auto drop = static_cast<int64_t>(
      std::floor(o.discard_ratio * static_cast<double>(n) * static_cast<double>(n - p)));
  if (drop > 0) {
    // Only the grid-key columns compete; attention on prefix tokens is never discarded.
    at::Tensor grid = a.slice(1, p).contiguous().view({-1});
    grid.index_fill_(0, std::get<1>(grid.topk(drop, 0, /*largest=*/false)), 0.0);
    a.slice(1, p).copy_(grid.view({n, n - p}));
  }
  at::Tensor m = a.mul_(o.residual);
  m.diagonal().add_(1.0 - o.residual);
  if (o.renormalize) m = m / rollout_safe_divisor(m.sum(1, /*keepdim=*/true));
  return m;
}

at::Tensor step_matrix(const AttentionTrace& t, int64_t b, const RolloutOptions& o) {
  return step_from_fused(fused_matrix(t, b, o.fusion), t.layout.num_prefix(), o);
}

// v ← M_lᵀ v without any row: M = D⁻¹(r·Â + (1−r)·I), D = diag(r·Â·1 + (1−r)), Â the mean
// of the heads' A, so Mᵀv = r·mean_h(A_hᵀ u) + (1−r)·u with u = D⁻¹v.
at::Tensor implicit_step(const AttentionTrace& t, int64_t b, const at::Tensor& v,
                         const RolloutOptions& o) {
  const double r = o.residual, inv_heads = 1.0 / static_cast<double>(t.heads);
  at::Tensor u = v;
  if (o.renormalize) {
    at::Tensor sums = at::zeros_like(v);
    const at::Tensor ones = at::ones({t.layout.tokens()});
    for (int64_t h = 0; h < t.heads; ++h) sums += t.apply(b, h, ones).to(at::kCPU, at::kDouble);
    u = v / rollout_safe_divisor(r * inv_heads * sums + (1.0 - r));
  }
  at::Tensor mixed = at::zeros_like(v);
  if (r > 0.0)
    for (int64_t h = 0; h < t.heads; ++h)
      mixed += t.apply_transposed(b, h, u).to(at::kCPU, at::kDouble);
  return r * inv_heads * mixed + (1.0 - r) * u;
}

// uᵀR carried back from the last of `count` layers to the first: v ← M_lᵀ v by
// `step_back(l, v)`, then v ← P_lᵀ v where the grid changes. `layout_of(l)` gives layer
// l's layout. Shared by the traces' rollout and the rollout of explicit maps.
template <typename LayoutOf, typename StepBack>
at::Tensor carry_back(size_t count, at::Tensor v, const LayoutOf& layout_of,
                      const StepBack& step_back) {
  for (size_t l = count; l-- > 0;) {
    v = step_back(l, v);
    if (l > 0 && !same_layout(layout_of(l), layout_of(l - 1)))
      v = at::matmul(area_map_f64(layout_of(l), layout_of(l - 1)).t(), v);
  }
  return v.to(at::kFloat);
}

}  // namespace

RolloutResult rollout_query(const std::vector<const AttentionTrace*>& layers, int64_t b,
                            int64_t query, const RolloutOptions& options) {
  check_layers(layers, b);
  const TokenLayout& last = layers.back()->layout;
  if (query < 0 || query >= last.tokens())
    throw TraceQueryError("rollout query token " + std::to_string(query) +
                          " is out of range for the last layer (" + last.describe() + ", " +
                          std::to_string(last.tokens()) + " tokens)");
  at::Tensor v = at::zeros({last.tokens()}, kF64);
  v[query] = 1.0;
  return rollout_of_readout(layers, b, v, options);
}

RolloutResult rollout_of_readout(const std::vector<const AttentionTrace*>& layers, int64_t b,
                                 const at::Tensor& readout, const RolloutOptions& options) {
  check_options(options);
  check_layers(layers, b);
  const TokenLayout& last = layers.back()->layout;
  if (!readout.defined() || readout.dim() != 1 || readout.size(0) != last.tokens())
    throw TraceQueryError("a rollout readout needs one weight per token of the last layer (" +
                          std::to_string(last.tokens()) + ")");
  RolloutResult result;
  result.options = options;
  result.layout = layers.front()->layout;
  result.implicit_path = options.fusion == HeadFusion::Mean && options.discard_ratio == 0.0;
  if (!result.implicit_path)
    check_explicit_size(layers, options.max_tokens, "with max/min fusion or discarding");

  result.weights = carry_back(
      layers.size(), readout.to(at::kCPU, at::kDouble),
      [&](size_t l) -> const TokenLayout& { return layers[l]->layout; },
      [&](size_t l, const at::Tensor& u) {
        const AttentionTrace& t = *layers[l];
        return result.implicit_path ? implicit_step(t, b, u, options)
                                    : at::matmul(step_matrix(t, b, options).t(), u);
      });
  return result;
}

at::Tensor rollout_matrix(const std::vector<const AttentionTrace*>& layers, int64_t b,
                          const RolloutOptions& options) {
  check_options(options);
  check_layers(layers, b);
  check_explicit_size(layers, options.max_tokens, "as a whole matrix");
  at::Tensor r = step_matrix(*layers.front(), b, options);
  for (size_t l = 1; l < layers.size(); ++l) {
    const AttentionTrace& t = *layers[l];
    if (!same_layout(t.layout, layers[l - 1]->layout))
      r = at::matmul(area_map_f64(t.layout, layers[l - 1]->layout), r);
    r = at::matmul(step_matrix(t, b, options), r);
  }
  return r.to(at::kFloat);
}

at::Tensor rollout_readout(const std::vector<FusedLayer>& layers, const at::Tensor& readout,
                           const RolloutOptions& options) {
  check_options(options);
  if (layers.empty()) throw std::invalid_argument("rollout needs at least one layer");
  for (size_t l = 0; l < layers.size(); ++l) {
    const int64_t n = layers[l].layout.tokens();
    if (!layers[l].fused.defined() || layers[l].fused.dim() != 2 || layers[l].fused.size(0) != n ||
        layers[l].fused.size(1) != n)
      throw std::invalid_argument("rollout: layer " + std::to_string(l) + "'s map must be " +
                                  std::to_string(n) + "\xC3\x97" + std::to_string(n) + " (" +
                                  layers[l].layout.describe() + ")");
    if (n > options.max_tokens)
      throw TraceQueryError("rollout of explicit maps: layer " + std::to_string(l) + " has " +
                            std::to_string(n) + " tokens (" + layers[l].layout.describe() +
                            "), above max_tokens = " + std::to_string(options.max_tokens));
  }
  if (readout.dim() != 1 || readout.size(0) != layers.back().layout.tokens())
    throw std::invalid_argument(
        "rollout: the readout must have one weight per token of the last "
        "layer (" +
        std::to_string(layers.back().layout.tokens()) + ")");
  return carry_back(
      layers.size(), readout.to(at::kCPU, at::kDouble),
      [&](size_t l) -> const TokenLayout& { return layers[l].layout; },
      [&](size_t l, const at::Tensor& u) {
        const FusedLayer& layer = layers[l];
        const at::Tensor m = step_from_fused(layer.fused.to(at::kCPU, at::kDouble).clone(),
                                             layer.layout.num_prefix(), options);
        return at::matmul(m.t(), u);
      });
}

at::Tensor area_map(const TokenLayout& coarse, const TokenLayout& fine) {
  return area_map_f64(coarse, fine).to(at::kFloat);
}

}  // namespace attnlab::analysis
