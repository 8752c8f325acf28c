// Linear attention (SPEC §1.2): the kernel baseline, the "vanilla linear" attention of
// RALA's analysis, with the feature maps of the kernel ablations as an option. Cost
// O(N·d²) per head: keys and values are folded into a d×d buffer first, so no N×N matrix
// is ever formed.
//   parameters  qkv: Linear(C, 3C) rows [q | k | v], head-major; proj: Linear(C, C)
//   options     qkv_bias (default 1); eps (default 1e-6), the denominator epsilon;
//               feature_map, the kernel's φq, φk (default elu+1):
//                 elu+1    φ(x) = elu(x) + 1 (Katharopoulos et al. 2020, SPEC §1.2)
//                 relu     φ(x) = max(x, 0) (the ReLU kernel of EfficientViT's LiteMLA,
//                          Cai et al. 2023); a query whose φ is all zero gets no attention
//                 softmax  φq = softmax of q_i over its d features, φk = softmax of each key
//                          feature over the N tokens (Efficient attention, Shen et al. 2021)
//                 angular  φ(x) = [1/√2, x̂/√π] with x̂ = x/‖x‖, so φq·φk = 1/2 + q̂·k̂/π:
//                          the linear terms of the angular kernel 1 − θ/π that Castling-ViT
//                          keeps (SPEC §1.3; without its dconv, its 0.5·v_i self term and
//                          output normalisation — those are the castling mechanism)
//                 cosine   φ(x) = x/‖x‖ over the head's channels, Hydra's kernel (Bolya et
//                          al. 2022; Castling-ViT's ref. [5]); as in Hydra the rows are NOT
//                          normalised: out_i = q̂_i·(K̂ᵀV), a_ij = q̂_i·k̂_j in [−1, 1] (a
//                          row's sum q̂_i·Σk̂ can vanish or change sign, so dividing by it is
//                          undefined), no eps
//                 mean_centred  ViTALiTy's linear Taylor attention (Dass et al. 2023; Castling's
//                          ref. [17]): q̃, k̃ centred over the layer's tokens, similarity
//                          1 + q̃_i·k̃_j/√d (exp's first-order Taylor term), as the features
//                          φ = [1, x̃·d^(−1/4)]; rows normalised by their sums, which are N
//                          (Σ_j k̃_j = 0)
//               cosine and mean_centred rows can be negative: their traces offer "signed rows".
//   forward     out_i = φq_i·KV / (φq_i·k_sum + eps) (cosine: φq_i·KV) with KV = Σ_j φk_jᵀ v_j,
//               k_sum = Σ_j φk_j; merge heads; proj
//   trace       one head group "all": q = φq, k = φk (B, h, N, d'; d' = d + 1 for angular and
//               mean_centred, else d), v (B, h, N, d); internals
//               "linear.kv"    (B, h, d', d)  KV = Σ_j φk_jᵀ v_j, the buffer whose rank
//                                             RALA analyses
//               "linear.k_sum" (B, h, d')     Σ_j φk_j
//   rows        a_ij = φq_i·φk_j / Σ_m φq_i·φk_m over all N tokens (prefix tokens
//               included); a row whose sum is 0 (relu: φq_i = 0) is all zero. The
//               forward's eps is NOT in the row: the row is the exact normalised kernel, so
//               it sums to 1; the forward's output equals rows·v scaled by den/(den + eps),
//               den = φq_i·k_sum (a relative 1e-6/den change).
//   products    A·x and Aᵀ·y (AttentionTrace::apply) in O(N·d·c) through φK and φQ.
//   explicit    out = proj(merge((rows·v) · den/(den + eps)))
#include <ATen/ATen.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/attention/capabilities.h"
#include "core/attention/head_outputs.h"
#include "core/attention/kernels.h"
#include "core/attention/layers.h"
#include "core/attention/map_factors.h"
#include "core/attention/registry.h"

namespace attnlab::attention {
namespace {

constexpr double kPi = 3.14159265358979323846;

enum class Kernel { EluPlusOne, Relu, Softmax, Angular, Cosine, MeanCentred };
const std::vector<std::string> kKernelNames = {"elu+1",   "relu",   "softmax",
                                               "angular", "cosine", "mean_centred"};

// Hydra's cosine kernel has no normalisation; every other kernel's rows sum to 1.
bool normalised(Kernel kernel) {
  return kernel != Kernel::Cosine;
}
bool signed_rows(Kernel kernel) {
  return kernel == Kernel::Cosine || kernel == Kernel::MeanCentred;
}

// A row sum used as a divisor: an all-zero row (relu kernel, φq_i = 0) stays zero.
at::Tensor safe_divisor(const at::Tensor& sums) {
  return at::where(sums == 0, at::ones_like(sums), sums);
}

// φ(x) = [1/√2, x̂/√π] over the last axis: φq·φk = 1/2 + q̂·k̂/π.
at::Tensor angular_feature(const at::Tensor& x) {
  auto sizes = x.sizes().vec();
  sizes.back() = 1;
  return at::cat(
      {at::full(sizes, 1.0 / std::sqrt(2.0), x.options()), unit_rows(x) / std::sqrt(kPi)}, -1);
}

// φ(x) = [1, x̃·d^(−1/4)], x̃ = x minus its mean over the tokens (axis −2): φq·φk =
// 1 + q̃·k̃/√d.
at::Tensor mean_centred_feature(const at::Tensor& x) {
  auto sizes = x.sizes().vec();
  sizes.back() = 1;
  const double scale = std::pow(double(x.size(-1)), -0.25);
  return at::cat({at::ones(sizes, x.options()), (x - x.mean(-2, /*keepdim=*/true)) * scale}, -1);
}

// The feature maps of queries and keys (B, h, N, d) for a kernel.
std::pair<at::Tensor, at::Tensor> feature_maps(Kernel kernel, const at::Tensor& q,
                                               const at::Tensor& k) {
  switch (kernel) {
    case Kernel::Relu:
      return {at::relu(q), at::relu(k)};
    case Kernel::Softmax:
      return {at::softmax(q, -1), at::softmax(k, -2)};
    case Kernel::Angular:
      return {angular_feature(q), angular_feature(k)};
    case Kernel::Cosine:
      return {unit_rows(q), unit_rows(k)};
    case Kernel::MeanCentred:
      return {mean_centred_feature(q), mean_centred_feature(k)};
    case Kernel::EluPlusOne:
      break;
  }
  return {elu_feature(q), elu_feature(k)};
}

class LinearTrace : public AttentionTrace, public MapFactorSource {
 public:
  bool normalised = true;  // false: the cosine kernel's raw rows κq_i·κk_j

  // Rows κq_i·κKᵀ / (κq_i·Σκk): left = κQ / den, right = κK.
  std::optional<MapFactors> map_factors(int64_t b, int64_t head) const override {
    const HeadGroup& g = group_of(head);
    const at::Tensor q = g.q[b][head - g.first_head], k = g.k[b][head - g.first_head];
    if (!normalised) return MapFactors{q, k};
    return MapFactors{q / safe_divisor(at::matmul(q, k.sum(0)).unsqueeze(1)), k};
  }
  // The KV buffer Σκ(k)ᵀv the forward mixed with.
  std::vector<RankMatrices> rank_matrices(int64_t b) const override {
    return {{"kv", internal("linear.kv")[b]}};
  }

 protected:
  // O(len(q_rows)·N·d): only the queried rows of κ(q) κ(k)ᵀ are formed.
  at::Tensor compute_rows(int64_t b, const HeadGroup& g, int64_t h,
                          const at::Tensor& q_rows) const override {
    at::Tensor scores = at::matmul(g.q[b][h].index_select(0, q_rows), g.k[b][h].transpose(0, 1));
    if (!normalised) return scores;
    return scores / safe_divisor(scores.sum(-1, /*keepdim=*/true));
  }

  // A = diag(1/den) κQ κKᵀ with den = κQ·Σκk, so A·x = κQ(κKᵀx)/den and
  // Aᵀ·y = κK(κQᵀ(y/den)): O(N·d·c), no row is ever formed.
  at::Tensor compute_apply(int64_t b, const HeadGroup& g, int64_t h, const at::Tensor& x,
                           bool transposed) const override {
    const at::Tensor q = g.q[b][h], k = g.k[b][h];  // (N, d)
    const at::Tensor den = normalised               // (N, 1): row sums, or 1 for raw rows
                               ? safe_divisor(at::matmul(q, k.sum(0)).unsqueeze(1))
                               : at::ones({q.size(0), 1}, q.options());
    if (transposed) return at::matmul(k, at::matmul(q.t(), x / den));
    return at::matmul(q, at::matmul(k.t(), x)) / den;
  }
};

class LinearAttention : public AttentionMechanism, public HeadOutputSource {
 public:
  std::vector<HeadColumns> head_columns() const override {
    return head_major_columns("proj.weight", config().heads, config().head_dim());
  }
  explicit LinearAttention(const MechanismConfig& c) : AttentionMechanism("linear", c) {
    qkv_ = add_layer<LinearLayer>(*this, "qkv", c.dim, 3 * c.dim, c.flag("qkv_bias"));
    proj_ = add_layer<LinearLayer>(*this, "proj", c.dim, c.dim, true);
    eps_ = c.option("eps");
    kernel_ = static_cast<Kernel>(c.int_option("feature_map"));
  }

 protected:
  at::Tensor run(const at::Tensor& x, const TokenLayout& layout, TraceRequest* request) override {
    const int64_t heads = config().heads;
    auto [q_raw, k_raw, v] = split_qkv((*qkv_)(x), heads);
    const auto [q, k] = feature_maps(kernel_, q_raw, k_raw);
    at::Tensor kv = at::matmul(k.transpose(-2, -1), v);  // (B, h, d, d)
    at::Tensor k_sum = k.sum(-2);                        // (B, h, d)
    // (B, h, N, 1); Hydra's cosine kernel divides by nothing.
    at::Tensor den = normalised(kernel_) ? at::matmul(q, k_sum.unsqueeze(-1)) + eps_
                                         : at::ones({1, 1, 1, 1}, q.options());
    at::Tensor out = at::matmul(q, kv) / den;
    if (request) {
      auto trace = std::make_shared<LinearTrace>();
      init_trace(*trace, x, layout, *request);
      trace->normalised = normalised(kernel_);
      if (signed_rows(kernel_)) trace->capabilities.push_back(capability::kSignedRows);
      trace->groups.push_back(all_heads_group(*trace, heads, q, k, v));
      trace->internals["linear.kv"] = trace->keep(kv);
      trace->internals["linear.k_sum"] = trace->keep(k_sum);
      // The rows are normalised without eps; the forward's denominator has it.
      if (wants_explicit(request))
        out = normalised(kernel_) ? explicit_mix(*trace) * ((den - eps_) / den)
                                  : explicit_mix(*trace);
      request->trace = std::move(trace);
    }
    return (*proj_)(merge_heads(out));
  }

 private:
  std::shared_ptr<LinearLayer> qkv_, proj_;
  double eps_ = 1e-6;
  Kernel kernel_ = Kernel::EluPlusOne;
};

}  // namespace

MechanismInfo linear_mechanism() {
  MechanismInfo info;
  info.name = "linear";
  info.linear_in_tokens = true;
  info.capabilities = {capability::kKvBuffer};
  info.summary =
      "linear attention, feature map elu+1 | relu | softmax | angular | cosine | mean_centred, "
      "O(N·d²)";
  info.options = {{"qkv_bias", OptionSpec::Kind::Flag, 1, 0, 1, "bias on the qkv projection"},
                  {"eps", OptionSpec::Kind::Real, 1e-6, 0, 1e9, "epsilon added to the denominator"},
                  {"feature_map", OptionSpec::Kind::Choice, 0, 0, 5,
                   "feature map of q and k (see docs/ATTENTION.md, linear)", kKernelNames}};
  info.create = [](const MechanismConfig& c) { return std::make_shared<LinearAttention>(c); };
  return info;
}

}  // namespace attnlab::attention
