// linear (kernel attention): the O(N·d²) forward against a direct N×N evaluation of the
// SPEC formula for every kernel, the implicit rows, the KV buffer, prefix tokens, options.
#include <cmath>
#include <iostream>

#include "core/attention/capabilities.h"
#include "tests/attention/attention_test_util.h"

namespace attnlab::testing {
namespace {

using attention::TokenLayout;

TokenLayout cls_grid(int64_t h, int64_t w) {
  TokenLayout l = attention::grid_layout(h, w);
  l.prefix = {"cls"};
  return l;
}

at::Tensor kappa(const at::Tensor& x) {
  return at::elu(x) + 1.0;
}

// q, k, v (B, h, N, d) straight from the module's qkv parameters, in double precision.
std::vector<at::Tensor> direct_qkv(attention::AttentionMechanism& m, const at::Tensor& x,
                                   int64_t heads) {
  auto p = m.named_parameters();
  at::Tensor y =
      at::linear(x.to(at::kDouble), p["qkv.weight"].to(at::kDouble), p["qkv.bias"].to(at::kDouble));
  const int64_t b = x.size(0), n = x.size(1), c = x.size(2);
  std::vector<at::Tensor> out;
  for (const auto& part : y.chunk(3, -1))
    out.push_back(part.reshape({b, n, heads, c / heads}).permute({0, 2, 1, 3}));
  return out;
}

TEST(LinearAttention, OutputIsProjOfRowsTimesValuesAndRowsSumToOne) {
  auto attn = make("linear", 48, 3);
  TokenLayout layout = cls_grid(5, 7);
  at::Tensor x = random_tokens(2, layout.tokens(), 48);
  auto [out, trace] = attn->forward_traced(x, layout);
  ASSERT_EQ(trace->mechanism, "linear");
  ASSERT_EQ(trace->groups.size(), 1u);
  auto params = attn->named_parameters();
  for (int64_t b = 0; b < 2; ++b) {
    std::vector<at::Tensor> heads;
    for (int64_t h = 0; h < 3; ++h) {
      heads.push_back(rows_times_v(*trace, b, h));
      at::Tensor m = trace->matrix(b, h);
      EXPECT_TRUE((m > 0).all().item<bool>()) << "kernel weights are positive";
      at::Tensor sums = m.sum(-1);
      const double sum_err = max_abs_diff(sums, at::ones_like(sums));
      std::cout << "linear rows sum-to-one b" << b << " h" << h << ": " << sum_err << "\n";
      EXPECT_LE(sum_err, 1e-5);
    }
    at::Tensor rebuilt = at::linear(at::cat(heads, -1), params["proj.weight"], params["proj.bias"]);
    const double d = max_abs_diff(rebuilt, out[b]);
    std::cout << "linear proj(rows·V) vs output, image " << b << ": " << d << "\n";
    EXPECT_LE(d, 1e-5);
  }
  // A single row equals the matrix's row; it spans all N tokens including the cls token.
  auto r = trace->row(1, 3, 2);
  EXPECT_EQ(r.weights.size(0), layout.tokens());
  EXPECT_EQ(r.keys.prefix, 1);
  EXPECT_LE(max_abs_diff(r.weights, trace->matrix(1, 2)[3]), 1e-7);
}

TEST(LinearAttention, OutputEqualsDirectQuadraticFormula) {
  // Small N: evaluate out_i = Σ_j (κq_i·κk_j) v_j / (Σ_j κq_i·κk_j + eps) with the N×N
  // kernel matrix, in double. A large eps shows that eps sits in the denominator only.
  for (double eps : {1e-6, 5.0}) {
    auto attn = make("linear", 32, 4, {{"eps", eps}});
    TokenLayout layout = cls_grid(3, 4);
    at::Tensor x = random_tokens(2, layout.tokens(), 32, 11);
    at::Tensor out = attn->forward(x, layout);
    auto qkv = direct_qkv(*attn, x, 4);
    at::Tensor kern = at::matmul(kappa(qkv[0]), kappa(qkv[1]).transpose(-2, -1));  // (B,h,N,N)
    at::Tensor mixed = at::matmul(kern, qkv[2]) / (kern.sum(-1, true) + eps);
    at::Tensor merged = mixed.permute({0, 2, 1, 3}).reshape({2, layout.tokens(), 32});
    auto p = attn->named_parameters();
    at::Tensor ref =
        at::linear(merged, p["proj.weight"].to(at::kDouble), p["proj.bias"].to(at::kDouble));
    const double d = max_abs_diff(out, ref);
    std::cout << "linear vs direct N×N formula (eps " << eps << "): " << d << "\n";
    EXPECT_LE(d, 1e-5);
  }
}

TEST(LinearAttention, KvAndKeySumInternalsEqualTheDirectSums) {
  auto attn = make("linear", 24, 2);
  TokenLayout layout = cls_grid(3, 3);
  at::Tensor x = random_tokens(2, layout.tokens(), 24, 5);
  auto [out, trace] = attn->forward_traced(x, layout);
  const at::Tensor& kv = trace->internal("linear.kv");
  const at::Tensor& k_sum = trace->internal("linear.k_sum");
  EXPECT_EQ(kv.sizes(), at::IntArrayRef({2, 2, 12, 12}));
  EXPECT_EQ(k_sum.sizes(), at::IntArrayRef({2, 2, 12}));
  EXPECT_FALSE(kv.requires_grad());
  auto qkv = direct_qkv(*attn, x, 2);
  at::Tensor k = kappa(qkv[1]), v = qkv[2];
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 2; ++h) {
      at::Tensor sum_kv = at::zeros({12, 12}, at::kDouble);
      at::Tensor sum_k = at::zeros({12}, at::kDouble);
      for (int64_t j = 0; j < layout.tokens(); ++j) {
        sum_kv += at::outer(k[b][h][j], v[b][h][j]);
        sum_k += k[b][h][j];
      }
      const double d_kv = max_abs_diff(kv[b][h], sum_kv);
      const double d_k = max_abs_diff(k_sum[b][h], sum_k);
      std::cout << "linear.kv / linear.k_sum vs direct sums b" << b << " h" << h << ": " << d_kv
                << " / " << d_k << "\n";
      EXPECT_LE(d_kv, 1e-5);
      EXPECT_LE(d_k, 1e-5);
    }
  // The trace's q and k are the features κ(q), κ(k), not the raw projections.
  EXPECT_LE(max_abs_diff(trace->groups[0].k, k), 1e-5);
  EXPECT_LE(max_abs_diff(trace->groups[0].q, kappa(qkv[0])), 1e-5);
}

TEST(LinearAttention, ClsPrefixIsJustTheFirstTokenOfTheSequence) {
  // Linear attention has no notion of position: a cls + 4×4 layout and a plain 1×17 grid
  // over the same tokens must give the same output, and the cls token is a key like any.
  auto attn = make("linear", 16, 2);
  TokenLayout with_cls = cls_grid(4, 4);
  at::Tensor x = random_tokens(1, with_cls.tokens(), 16, 3);
  auto [out, trace] = attn->forward_traced(x, with_cls);
  at::Tensor plain = attn->forward(x, attention::grid_layout(1, 17));
  EXPECT_LE(max_abs_diff(out, plain), reordering_tolerance(plain));
  at::Tensor m = trace->matrix(0, 1);
  EXPECT_EQ(m.sizes(), at::IntArrayRef({17, 17}));
  EXPECT_GT(m.select(1, 0).min().item<double>(), 0.0) << "every query attends to cls";
  // Permuting the tokens permutes the output (equivariance, prefix included).
  at::Tensor perm = at::randperm(17, at::kLong);
  at::Tensor out_perm = attn->forward(x.index_select(1, perm), with_cls);
  const double d = max_abs_diff(out_perm, out.index_select(1, perm));
  std::cout << "linear permutation equivariance with cls: " << d << "\n";
  EXPECT_LE(d, 1e-5);
}

// The kernel ablations: each kernel's N×N matrix written out in double from its definition
// (not through a feature map): elu+1 and relu as κ(q)·κ(k); softmax as Efficient
// attention's softmax over q's features times the softmax over the tokens of k's; angular
// as 1/2 + cos(q, k)/π. The forward equals kern·v / (row sum + eps), the rows are
// kern / row sum and sum to 1.
TEST(LinearAttention, EveryKernelMatchesItsDirectDefinition) {
  const auto& info = attention::mechanism_info("linear");
  const int64_t heads = 4;
  for (const std::string kernel :
       {"elu+1", "relu", "softmax", "angular", "cosine", "mean_centred"}) {
    SCOPED_TRACE(kernel);
    auto attn = make("linear", 32, heads,
                     {{"feature_map", attention::option_from_text(info, "feature_map", kernel)}});
    TokenLayout layout = cls_grid(3, 4);
    at::Tensor x = random_tokens(2, layout.tokens(), 32, 13);
    auto [out, trace] = attn->forward_traced(x, layout);
    auto qkv = direct_qkv(*attn, x, heads);
    const at::Tensor& q = qkv[0];
    const at::Tensor& k = qkv[1];
    at::Tensor kern;
    if (kernel == "elu+1") kern = at::matmul(kappa(q), kappa(k).transpose(-2, -1));
    if (kernel == "relu") kern = at::matmul(at::relu(q), at::relu(k).transpose(-2, -1));
    if (kernel == "softmax")
      kern = at::matmul(at::softmax(q, -1), at::softmax(k, -2).transpose(-2, -1));
    const at::Tensor cosine = at::cosine_similarity(q.unsqueeze(3), k.unsqueeze(2), -1, 0.0);
    if (kernel == "angular") kern = 0.5 + cosine / std::acos(-1.0);
    if (kernel == "cosine") kern = cosine;
    if (kernel == "mean_centred") {
      const at::Tensor qc = q - q.mean(-2, true), kc = k - k.mean(-2, true);
      kern = 1.0 + at::matmul(qc, kc.transpose(-2, -1)) / std::sqrt(double(q.size(-1)));
    }
    // Hydra's cosine kernel is not normalised: its rows are the raw similarities.
    const bool raw = kernel == "cosine";
    const at::Tensor sums = raw ? at::ones_like(kern.sum(-1, true)) : kern.sum(-1, true);
    at::Tensor mixed = at::matmul(kern, qkv[2]) / (raw ? sums : sums + 1e-6);
    at::Tensor merged = mixed.permute({0, 2, 1, 3}).reshape({2, layout.tokens(), 32});
    auto p = attn->named_parameters();
    at::Tensor ref =
        at::linear(merged, p["proj.weight"].to(at::kDouble), p["proj.bias"].to(at::kDouble));
    EXPECT_LE(max_abs_diff(out, ref), 1e-5);
    for (int64_t h = 0; h < heads; ++h)
      EXPECT_LE(max_abs_diff(trace->matrix(1, h), kern[1][h] / sums[1][h]), 1e-5) << h;
    // Their rows can be negative, and the trace says so (diverging colour scales).
    EXPECT_EQ(trace->offers(attention::capability::kSignedRows),
              kernel == "cosine" || kernel == "mean_centred");
    // Mean-centred keys sum to zero over the tokens: every row sums to N before it is
    // normalised (float64 here, so to rounding).
    if (kernel == "mean_centred") {
      EXPECT_LE(max_abs_diff(sums, at::full_like(sums, double(layout.tokens()))), 1e-9);
    }
  }
}

// relu: a query whose features are all ≤ 0 attends to nothing — its row is zero, not NaN,
// and the forward gives it a zero mixture (0 / eps).
TEST(LinearAttention, ReluKernelGivesAZeroRowToAQueryWithNoPositiveFeature) {
  const auto& info = attention::mechanism_info("linear");
  auto attn = make("linear", 8, 1,
                   {{"feature_map", attention::option_from_text(info, "feature_map", "relu")}});
  {
    at::NoGradGuard no_grad;
    auto p = attn->named_parameters();
    p["qkv.weight"].slice(0, 0, 8).zero_();  // q = its bias
    p["qkv.bias"].slice(0, 0, 8).fill_(-1.0);
  }
  const TokenLayout layout = attention::grid_layout(2, 3);
  auto [out, trace] = attn->forward_traced(random_tokens(1, 6, 8), layout);
  const at::Tensor rows = trace->matrix(0, 0);
  EXPECT_TRUE(at::isfinite(rows).all().item<bool>());
  EXPECT_EQ(rows.abs().sum().item<double>(), 0.0);
  EXPECT_TRUE(at::isfinite(out).all().item<bool>());
}

TEST(LinearAttention, KernelIsChosenByNameAndAnUnknownNameIsRefused) {
  const auto& info = attention::mechanism_info("linear");
  EXPECT_EQ(attention::option_from_text(info, "feature_map", "softmax"), 2.0);
  EXPECT_EQ(attention::option_from_text(info, "eps", "0.5"), 0.5);
  try {
    attention::option_from_text(info, "feature_map", "cosh");
    ADD_FAILURE() << "an unknown kernel was accepted";
  } catch (const attention::AttentionError& e) {
    EXPECT_NE(std::string(e.what()).find("elu+1, relu, softmax, angular, cosine, mean_centred"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(attention::option_from_text(info, "eps", "small"), attention::AttentionError);
  EXPECT_THROW(make("linear", 16, 2, {{"feature_map", 6}}), attention::AttentionError);
  EXPECT_THROW(make("linear", 16, 2, {{"feature_map", 0.5}}), attention::AttentionError);
}

TEST(LinearAttention, OptionsAndBadInputAreChecked) {
  EXPECT_EQ(make("linear", 16, 2)->named_parameters().size(), 4u);
  EXPECT_EQ(make("linear", 16, 2, {{"qkv_bias", 0}})->named_parameters().size(), 3u);
  EXPECT_THROW(make("linear", 16, 2, {{"eps", -1.0}}), attention::AttentionError);
  EXPECT_THROW(make("linear", 16, 3), attention::AttentionError);  // heads must divide C
  auto attn = make("linear", 16, 2);
  EXPECT_NO_THROW(attn->forward(random_tokens(1, 10, 16), cls_grid(3, 3)));
  EXPECT_THROW(attn->forward(random_tokens(1, 9, 16), cls_grid(3, 3)), attention::AttentionError);
  EXPECT_THROW(attn->forward(random_tokens(1, 10, 12), cls_grid(3, 3)), attention::AttentionError);
}

}  // namespace
}  // namespace attnlab::testing
