// efficientvit (EfficientViT LiteMLA): module parity with the reference fixture (out, the
// qkv conv, the multi-scale branch, the attention result fed to proj; ≤ 1e-5), the rows
// (summing to 1, rebuilding the forward through proj and BatchNorm, the O(N) products),
// the h·(1+S) traced heads, a query whose ReLU features vanish (a zero row and a zero
// output, as the reference's eps gives) and the refusals.
#include "tests/attention/attention_test_util.h"

namespace attnlab::testing {
namespace {

using attention::TokenLayout;

// (B, C, H, W) -> (B, N, C) tokens and back.
at::Tensor efficientvit_to_tokens(const at::Tensor& image) {
  return image.flatten(2).transpose(1, 2).contiguous();
}
at::Tensor efficientvit_to_image(const at::Tensor& tokens, int64_t h, int64_t w) {
  return tokens.transpose(1, 2).reshape({tokens.size(0), tokens.size(2), h, w});
}

// The attention result the trace's internals give, (B, H'·d, H, W) as proj consumes it.
at::Tensor mixed_from_internals(const attention::AttentionTrace& t, double eps) {
  const auto& g = t.group_of(0);
  const at::Tensor den = at::matmul(g.q, t.internal("efficientvit.k_sum").unsqueeze(-1));
  const at::Tensor out = at::matmul(g.q, t.internal("efficientvit.kv")) / (den + eps);
  return out.transpose(-2, -1).reshape(
      {t.batch, t.heads * t.head_dim, t.layout.height, t.layout.width});
}

// proj: the 1×1 conv and the eval-mode BatchNorm, from the module's own tensors.
at::Tensor project(attention::AttentionMechanism& m, const at::Tensor& mixed) {
  auto p = m.named_parameters();
  auto b = m.named_buffers();
  const at::Tensor y = at::conv2d(mixed, p["proj.conv.weight"]);
  return at::batch_norm(y, p["proj.norm.weight"], p["proj.norm.bias"], b["proj.norm.running_mean"],
                        b["proj.norm.running_var"], false, 0.1, 1e-5, false);
}

TEST(EfficientVitAttention, ReproducesTheReferenceModule) {
  const auto weights = parity_weights("efficientvit_attn");
  const auto expected = parity_expected("efficientvit_attn");
  // in_channels 32, dim 16, heads null -> 32 // 16 = 2 heads; scales (5,).
  auto attn = make("efficientvit", 32, 2, {{"head_dim", 16}, {"scale", 5}});
  load_from(*attn, weights, "");
  attn->eval();
  const at::Tensor image = expected.at("input");  // (1, 32, 8, 6)
  const auto layout = attention::grid_layout(8, 6);
  auto [y, trace] = attn->forward_traced(efficientvit_to_tokens(image), layout);
  EXPECT_LE(max_abs_diff(efficientvit_to_image(y, 8, 6), expected.at("out")), 1e-5);
  const at::Tensor qkv = trace->internal("efficientvit.qkv");  // (1, 192, 8, 6)
  EXPECT_LE(max_abs_diff(qkv.slice(1, 0, 96), expected.at("out.qkv")), 1e-5);
  EXPECT_LE(max_abs_diff(qkv.slice(1, 96), expected.at("out.aggreg.0")), 1e-5);
  EXPECT_LE(max_abs_diff(mixed_from_internals(*trace, 1e-15), expected.at("in.proj")), 1e-5);
  EXPECT_EQ(trace->heads, 4);  // 2 heads + the 5×5 branch's 2
  EXPECT_EQ(trace->head_dim, 16);
  // The per-head [q | k | v] layout: head 1's v is channels 80..95 of the qkv conv.
  EXPECT_LE(max_abs_diff(trace->group_of(1).v[0][1],
                         expected.at("out.qkv")[0].slice(0, 80, 96).reshape({16, 48}).t()),
            1e-5);
}

TEST(EfficientVitAttention, RowsSumToOneAndRebuildTheForward) {
  const int64_t c = 24;
  auto attn = make("efficientvit", c, 3, {{"scale", 3}});
  attn->eval();
  const TokenLayout layout = attention::grid_layout(5, 6);
  const at::Tensor x = random_tokens(2, layout.tokens(), c);
  auto [y, trace] = attn->forward_traced(x, layout);
  ASSERT_EQ(trace->heads, 6);
  const int64_t n = layout.tokens(), d = trace->head_dim;
  at::Tensor mixed = at::zeros({2, trace->heads, n, d});
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < trace->heads; ++h) {
      const at::Tensor rows = trace->matrix(b, h);
      const auto& g = trace->group_of(h);
      const at::Tensor den = at::matmul(g.q[b][h], g.k[b][h].sum(0)).unsqueeze(1);
      const at::Tensor alive = (den > 0).squeeze(1);
      const at::Tensor sums = at::masked_select(rows.sum(1), alive);
      EXPECT_LE(max_abs_diff(sums, at::ones_like(sums)), 1e-5);
      EXPECT_GE(rows.min().item<double>(), 0.0);
      mixed[b][h] = rows_times_v(*trace, b, h) * (den / (den + 1e-15));
      const at::Tensor v = at::randn({n, 3});
      EXPECT_LE(max_abs_diff(trace->apply(b, h, v), at::matmul(rows, v)), 1e-5);
      EXPECT_LE(max_abs_diff(trace->apply_transposed(b, h, v), at::matmul(rows.t(), v)), 1e-5);
    }
  const at::Tensor image = mixed.transpose(-2, -1).reshape({2, trace->heads * d, 5, 6});
  EXPECT_LE(max_abs_diff(efficientvit_to_tokens(project(*attn, image)), y), 1e-5);
  // The KV buffer, one d×d matrix per traced head.
  const auto ranks = trace->rank_matrices(1);
  ASSERT_EQ(ranks.size(), 1u);
  EXPECT_EQ(ranks[0].matrices.sizes(), (at::IntArrayRef{6, d, d}));
}

// A head whose q weights are zero: ReLU(q) = 0 for every token, 0 / (0 + eps) in the
// reference, a zero output. Its rows (and its multi-scale twin's) are zero and finite.
TEST(EfficientVitAttention, AQueryWithNoFeaturesHasAZeroRowAndAZeroOutput) {
  const int64_t c = 16;
  auto attn = make("efficientvit", c, 2);  // d = 8, heads [q|k|v] at channels 0, 24
  attn->eval();
  {
    at::NoGradGuard no_grad;
    attn->named_parameters()["qkv.conv.weight"].slice(0, 0, 8).zero_();
  }
  const TokenLayout layout = attention::grid_layout(4, 4);
  const at::Tensor x = random_tokens(1, 16, c);
  auto [y, trace] = attn->forward_traced(x, layout);
  EXPECT_TRUE(at::isfinite(y).all().item<bool>());
  for (int64_t h : {0, 2}) {  // head 0 and the branch's copy of it
    const at::Tensor rows = trace->matrix(0, h);
    EXPECT_TRUE(at::isfinite(rows).all().item<bool>());
    EXPECT_EQ(rows.abs().max().item<double>(), 0.0);  // exact: 0 / 1 of all-zero scores
  }
  EXPECT_LE(
      max_abs_diff(mixed_from_internals(*trace, 1e-15).slice(1, 0, 8), at::zeros({1, 8, 4, 4})),
      0.0);
  attention::TraceOptions options;
  options.explicit_attention = true;
  auto [y_explicit, unused] = attn->forward_traced(x, layout, options);
  EXPECT_LE(max_abs_diff(y_explicit, y), 1e-5);
}

TEST(EfficientVitAttention, HeadDimAndBranchOptions) {
  // h·d need not be C (the reference's explicit heads): 2 heads of 8 on 32 channels.
  auto narrow = make("efficientvit", 32, 2, {{"head_dim", 8}, {"scale", 0}});
  auto p = narrow->named_parameters();
  EXPECT_EQ(p["qkv.conv.weight"].sizes(), (at::IntArrayRef{48, 32, 1, 1}));
  EXPECT_EQ(p["proj.conv.weight"].sizes(), (at::IntArrayRef{32, 16, 1, 1}));
  EXPECT_FALSE(p.contains("aggreg.0.0.weight"));
  EXPECT_FALSE(narrow->named_buffers().contains("proj.norm.num_batches_tracked"));
  const TokenLayout layout = attention::grid_layout(3, 5);
  auto [y, trace] = narrow->forward_traced(random_tokens(1, 15, 32), layout);
  EXPECT_EQ(trace->heads, 2);
  EXPECT_EQ(trace->head_dim, 8);
  EXPECT_EQ(y.sizes(), (at::IntArrayRef{1, 15, 32}));
  auto wide = make("efficientvit", 32, 2, {{"use_bias", 1}});
  EXPECT_TRUE(wide->named_parameters().contains("aggreg.0.1.bias"));
  EXPECT_EQ(wide->named_parameters()["aggreg.0.0.weight"].sizes(), (at::IntArrayRef{96, 1, 5, 5}));
  try {
    make("efficientvit", 32, 2, {{"scale", 4}});
    FAIL() << "an even branch kernel was accepted";
  } catch (const attention::AttentionError& e) {
    EXPECT_NE(std::string(e.what()).find("efficientvit"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("odd"), std::string::npos) << e.what();
  }
}

// scales = (3, 5) (options scale 3, scale2 5): two branches after the qkv conv, h·(1 + 2)
// heads, proj over 3·h·d channels; the forward written out here as the reference's
// LiteMLA.relu_linear_att computes it ((B, heads, 3d, N), v padded with a row of ones).
TEST(EfficientVitAttention, SeveralScalesAreTheReferencesTupleInOrder) {
  const int64_t c = 16, d = 8, h = 2;
  auto attn = make("efficientvit", c, h, {{"scale", 3}, {"scale2", 5}});
  attn->eval();
  auto p = attn->named_parameters();
  EXPECT_EQ(p["aggreg.0.0.weight"].sizes(), (at::IntArrayRef{48, 1, 3, 3}));
  EXPECT_EQ(p["aggreg.1.0.weight"].sizes(), (at::IntArrayRef{48, 1, 5, 5}));
  EXPECT_EQ(p["aggreg.1.1.weight"].sizes(), (at::IntArrayRef{48, 8, 1, 1}));  // 3h groups
  EXPECT_EQ(p["proj.conv.weight"].sizes(), (at::IntArrayRef{16, 48, 1, 1}));
  const TokenLayout layout = attention::grid_layout(5, 4);
  const at::Tensor x = random_tokens(2, 20, c);
  auto [y, trace] = attn->forward_traced(x, layout);
  EXPECT_EQ(trace->heads, 6);
  const at::Tensor image = efficientvit_to_image(x, 5, 4);
  const at::Tensor qkv = at::conv2d(image, p["qkv.conv.weight"]);
  std::vector<at::Tensor> multi = {qkv};
  for (const int64_t i : {0, 1}) {
    const int64_t side = i == 0 ? 3 : 5;
    const std::string b = "aggreg." + std::to_string(i);
    const std::vector<int64_t> one = {1, 1}, zero = {0, 0}, pad = {side / 2, side / 2};
    const at::Tensor spatial =
        at::conv2d(qkv, p[b + ".0.weight"], at::Tensor(), one, pad, one, 3 * h * d);
    multi.push_back(at::conv2d(spatial, p[b + ".1.weight"], at::Tensor(), one, zero, one, 3 * h));
  }
  const at::Tensor all = at::cat(multi, 1).reshape({2, -1, 3 * d, 20});
  const at::Tensor q = at::relu(all.narrow(2, 0, d)), k = at::relu(all.narrow(2, d, d));
  const at::Tensor v = at::constant_pad_nd(all.narrow(2, 2 * d, d), {0, 0, 0, 1}, 1.0);
  const at::Tensor out = at::matmul(at::matmul(v, k.transpose(-1, -2)), q);
  const at::Tensor mixed =
      (out.narrow(2, 0, d) / (out.narrow(2, d, 1) + 1e-15)).reshape({2, -1, 5, 4});
  EXPECT_EQ(mixed.size(1), 48);
  EXPECT_LE(max_abs_diff(efficientvit_to_tokens(project(*attn, mixed)), y), 1e-5);
  // The tuple is given in order: a branch after a 0 is refused.
  EXPECT_THROW(make("efficientvit", c, h, {{"scale", 0}, {"scale2", 5}}),
               attention::AttentionError);
}

// Training mode normalises with the batch's statistics (biased variance, eps 1e-5), as
// nn.BatchNorm2d does, and updates the running ones.
TEST(EfficientVitAttention, TrainingUsesBatchStatistics) {
  auto attn = make("efficientvit", 16, 2);
  const TokenLayout layout = attention::grid_layout(4, 4);
  const at::Tensor x = random_tokens(2, 16, 16);
  attn->train();
  auto [y, trace] = attn->forward_traced(x, layout);
  const at::Tensor z =
      at::conv2d(mixed_from_internals(*trace, 1e-15), attn->named_parameters()["proj.conv.weight"]);
  const std::vector<int64_t> dims{0, 2, 3};
  const at::Tensor mean = z.mean(dims, /*keepdim=*/true);
  const at::Tensor var = z.var(dims, /*unbiased=*/false, /*keepdim=*/true);
  // weight 1 and bias 0 as initialised: y is z standardised per channel.
  EXPECT_LE(max_abs_diff(efficientvit_to_image(y, 4, 4), (z - mean) / at::sqrt(var + 1e-5)), 1e-5);
  EXPECT_GT(attn->named_buffers()["proj.norm.running_mean"].abs().max().item<double>(), 0.0);
}

}  // namespace
}  // namespace attnlab::testing
