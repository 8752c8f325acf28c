// biformer (BiFormer bi-level routing attention): module parity with the reference fixture
// (out, route_idx exactly, route_weight, the LePE term, the token attention rebuilt from the
// trace's rows, the result fed to wo; ≤ 1e-5), block-sparse rows that sum to 1 and rebuild
// the forward with LePE, auto_pad on a grid n_win does not divide with qk_dim ≠ C (no
// fixture: checked against SPEC_COMPARISON's formulas written out here as a dense masked
// softmax), the state dict's names, and the refused options.
#include <cstdio>

#include "tests/attention/attention_test_util.h"

namespace attnlab::testing {
namespace {

using attention::TokenLayout;

// Token (padded-grid) indices of each region's pixels, (S², rh·rw): regions and pixels
// row-major, as the reference numbers them.
at::Tensor biformer_region_tokens(int64_t s, int64_t rh, int64_t rw, int64_t grid_w) {
  at::Tensor t = at::empty({s * s, rh * rw}, at::kLong);
  for (int64_t ry = 0; ry < s; ++ry)
    for (int64_t rx = 0; rx < s; ++rx)
      for (int64_t py = 0; py < rh; ++py)
        for (int64_t px = 0; px < rw; ++px)
          t[ry * s + rx][py * rw + px] = (ry * rh + py) * grid_w + rx * rw + px;
  return t;
}

// The reference's `attn` (B·S², h, w², k·w²) read off the trace's rows (unpadded grid).
at::Tensor biformer_attn_from_rows(const attention::AttentionTrace& t, int64_t s) {
  const at::Tensor idx = t.internal("biformer.route_idx");
  const int64_t rh = t.layout.height / s, rw = t.layout.width / s, topk = idx.size(2);
  const at::Tensor tokens = biformer_region_tokens(s, rh, rw, t.layout.width);
  std::vector<at::Tensor> out;
  for (int64_t b = 0; b < t.batch; ++b) {
    std::vector<at::Tensor> heads;
    for (int64_t h = 0; h < t.heads; ++h) heads.push_back(t.matrix(b, h));
    for (int64_t r = 0; r < s * s; ++r) {
      const at::Tensor keys = tokens.index_select(0, idx[b][r]).reshape({topk * rh * rw});
      std::vector<at::Tensor> per_head;
      for (const at::Tensor& m : heads)
        per_head.push_back(m.index_select(0, tokens[r]).index_select(1, keys));
      out.push_back(at::stack(per_head));
    }
  }
  return at::stack(out);
}

// rows·v per head on the layer's tokens, merged, plus the cropped LePE term: what enters wo.
at::Tensor biformer_mixed_from_rows(const attention::AttentionTrace& t) {
  std::vector<at::Tensor> images;
  const at::Tensor lepe = t.internal("biformer.lepe")
                              .slice(2, 0, t.layout.height)
                              .slice(3, 0, t.layout.width)
                              .flatten(2)
                              .transpose(1, 2);
  for (int64_t b = 0; b < t.batch; ++b) {
    std::vector<at::Tensor> heads;
    for (int64_t h = 0; h < t.heads; ++h) heads.push_back(rows_times_v(t, b, h));
    images.push_back(at::cat(heads, 1) + lepe[b]);
  }
  return at::stack(images);
}

TEST(BiformerAttention, ReproducesTheReferenceModule) {
  const auto weights = parity_weights("biformer_attn");
  const auto expected = parity_expected("biformer_attn");
  auto attn =
      make("biformer", 32, 2,
           {{"n_win", 4}, {"topk", 4}, {"qk_dim", 32}, {"side_dwconv", 5}, {"auto_pad", 0}});
  load_from(*attn, weights, "");
  attn->eval();
  const at::Tensor input = expected.at("input");  // (1, 8, 12, 32) NHWC
  auto [y, trace] = attn->forward_traced(input.reshape({1, 96, 32}), attention::grid_layout(8, 12));
  const double d_out = max_abs_diff(y.reshape({1, 8, 12, 32}), expected.at("out"));
  const double d_weight =
      max_abs_diff(trace->internal("biformer.route_weight"), expected.at("route_weight"));
  const double d_lepe = max_abs_diff(trace->internal("biformer.lepe"), expected.at("out.lepe"));
  const double d_attn = max_abs_diff(biformer_attn_from_rows(*trace, 4), expected.at("attn"));
  const double d_wo =
      max_abs_diff(biformer_mixed_from_rows(*trace).reshape({1, 8, 12, 32}), expected.at("in.wo"));
  std::printf("[biformer parity] out %.3g route_weight %.3g lepe %.3g attn %.3g in.wo %.3g\n",
              d_out, d_weight, d_lepe, d_attn, d_wo);
  EXPECT_TRUE(at::equal(trace->internal("biformer.route_idx"), expected.at("route_idx")));
  EXPECT_LE(d_out, 1e-5);
  EXPECT_LE(d_weight, 1e-5);
  EXPECT_LE(d_lepe, 1e-5);
  EXPECT_LE(d_attn, 1e-5);
  EXPECT_LE(d_wo, 1e-5);
  EXPECT_EQ(trace->window, 2);
  EXPECT_EQ(trace->window_w, 3);
  EXPECT_TRUE(at::equal(trace->internal("biformer.region"), at::tensor({2, 3}, at::kLong)));
}

// Rows are a softmax over the routed regions' pixels, zero elsewhere; rows·v plus LePE
// through wo is the forward, explicit form included.
TEST(BiformerAttention, BlockSparseRowsRebuildTheForward) {
  auto attn = make("biformer", 24, 3, {{"n_win", 3}, {"topk", 2}, {"qk_dim", 12}});
  attn->eval();
  const TokenLayout layout = attention::grid_layout(5, 7);  // padded to 6×9, regions 2×3
  const at::Tensor x = random_tokens(2, 35, 24);
  auto [y, trace] = attn->forward_traced(x, layout);
  const at::Tensor idx = trace->internal("biformer.route_idx");
  const at::Tensor tokens = biformer_region_tokens(3, 2, 3, 9);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 3; ++h) {
      const at::Tensor m = trace->matrix(b, h);  // (35, 54)
      ASSERT_EQ(m.size(1), 54);
      EXPECT_LE(max_abs_diff(m.sum(1), at::ones({35})), 1e-5);
      for (int64_t q : {int64_t{0}, int64_t{17}, int64_t{34}}) {
        const int64_t gy = q / 7, gx = q % 7, region = (gy / 2) * 3 + gx / 3;
        const at::Tensor keys = tokens.index_select(0, idx[b][region]).reshape({-1});
        EXPECT_NEAR(m[q].index_select(0, keys).sum().item<double>(), 1.0, 1e-5);
        EXPECT_EQ(at::count_nonzero(m[q]).item<int64_t>(), keys.numel());
      }
      const at::Tensor v = at::randn({35, 2});
      const at::Tensor spread = attention::rows_on_tokens(m, trace->group_of(h).keys, layout);
      EXPECT_LE(max_abs_diff(trace->apply(b, h, v), at::matmul(spread, v)), 1e-5);
      EXPECT_LE(max_abs_diff(trace->head_output(b, h), rows_times_v(*trace, b, h)), 1e-5);
    }
  auto p = attn->named_parameters();
  const at::Tensor rebuilt =
      at::linear(biformer_mixed_from_rows(*trace), p["wo.weight"], p["wo.bias"]);
  EXPECT_LE(max_abs_diff(rebuilt, y), 1e-5);
  attention::TraceOptions options;
  options.explicit_attention = true;
  EXPECT_LE(max_abs_diff(attn->forward_traced(x, layout, options).output, y), 1e-5);
}

// SPEC_COMPARISON's BiFormer written out densely: zero tokens padded bottom/right before
// qkv, region means, logits (s·q_r)·k_rᵀ with s from qk_scale, top-k by sorting, then per
// head an N×N softmax of s·q·kᵀ masked to the keys whose region the query's region routed
// to, plus lepe(v) on the padded image, wo, crop. Returns (out, route_idx).
std::pair<at::Tensor, at::Tensor> biformer_dense_reference(attention::AttentionMechanism& m,
                                                           const at::Tensor& x, int64_t height,
                                                           int64_t width, int64_t heads, int64_t s,
                                                           int64_t topk, int64_t qk, double scale) {
  auto p = m.named_parameters();
  const int64_t batch = x.size(0), c = x.size(2);
  const int64_t hp = (height + s - 1) / s * s, wp = (width + s - 1) / s * s, np = hp * wp;
  const int64_t rh = hp / s, rw = wp / s;
  at::Tensor grid = at::zeros({batch, hp, wp, c});
  grid.slice(1, 0, height).slice(2, 0, width).copy_(x.reshape({batch, height, width, c}));
  const at::Tensor t =
      at::linear(grid.reshape({batch, np, c}), p["qkv.qkv.weight"], p["qkv.qkv.bias"]);
  const at::Tensor q = t.slice(2, 0, qk), k = t.slice(2, qk, 2 * qk), v = t.slice(2, 2 * qk);
  at::Tensor region = at::empty({np}, at::kLong);
  at::Tensor pool = at::zeros({s * s, np});
  for (int64_t i = 0; i < np; ++i) {
    const int64_t r = (i / wp / rh) * s + (i % wp) / rw;
    region[i] = r;
    pool[r][i] = 1.0 / double(rh * rw);
  }
  const at::Tensor logits =
      at::matmul(at::matmul(pool, q) * scale, at::matmul(pool, k).transpose(1, 2));  // (B, S², S²)
  const at::Tensor route = std::get<1>(at::sort(logits, -1, true)).slice(-1, 0, topk);
  const int64_t dq = qk / heads, dv = c / heads;
  at::Tensor out = at::empty({batch, np, c});
  for (int64_t b = 0; b < batch; ++b) {
    at::Tensor allowed = at::zeros({np, np}, at::kBool);
    for (int64_t i = 0; i < np; ++i)
      for (int64_t j = 0; j < np; ++j)
        for (int64_t r = 0; r < topk; ++r)
          if (route[b][region[i].item<int64_t>()][r].item<int64_t>() == region[j].item<int64_t>())
            allowed[i][j] = true;
    for (int64_t h = 0; h < heads; ++h) {
      const at::Tensor qh = q[b].slice(1, h * dq, (h + 1) * dq);
      const at::Tensor kh = k[b].slice(1, h * dq, (h + 1) * dq);
      const at::Tensor scores = at::matmul(qh * scale, kh.t()).masked_fill(~allowed, -INFINITY);
      out[b]
          .slice(1, h * dv, (h + 1) * dv)
          .copy_(at::matmul(at::softmax(scores, -1), v[b].slice(1, h * dv, (h + 1) * dv)));
    }
  }
  const int64_t side = p["lepe.weight"].size(-1);
  const at::Tensor image = v.reshape({batch, hp, wp, c}).permute({0, 3, 1, 2});
  const at::Tensor lepe =
      at::conv2d(image, p["lepe.weight"], p["lepe.bias"], {1, 1}, {side / 2, side / 2}, {1, 1}, c);
  out = out + lepe.flatten(2).transpose(1, 2);
  out = at::linear(out, p["wo.weight"], p["wo.bias"]).reshape({batch, hp, wp, c});
  return {out.slice(1, 0, height).slice(2, 0, width).reshape({batch, height * width, c}), route};
}

TEST(BiformerAttention, AutoPadAndQkDimFollowTheSpecFormulas) {
  auto attn = make("biformer", 24, 2,
                   {{"n_win", 3},
                    {"topk", 3},
                    {"qk_dim", 16},
                    {"qk_scale", 0.3},
                    {"side_dwconv", 3},
                    {"auto_pad", 1}});
  attn->eval();
  {
    at::NoGradGuard no_grad;
    at::manual_seed(5);
    for (auto& t : attn->named_parameters()) t.value().normal_(0, 0.4);
  }
  const at::Tensor x = random_tokens(2, 35, 24, 9);  // 5×7, padded to 6×9
  auto [y, trace] = attn->forward_traced(x, attention::grid_layout(5, 7));
  const auto [ref, route] = biformer_dense_reference(*attn, x, 5, 7, 2, 3, 3, 16, 0.3);
  std::printf("[biformer spec] out %.3g\n", max_abs_diff(y, ref));
  EXPECT_LE(max_abs_diff(y, ref), 1e-5);
  EXPECT_TRUE(at::equal(trace->internal("biformer.route_idx"), route));
  // Without auto_pad the reference asserts; attnlab refuses with the grid named.
  try {
    make("biformer", 24, 2, {{"n_win", 3}, {"auto_pad", 0}})
        ->forward(x, attention::grid_layout(5, 7));
    FAIL() << "n_win 3 ran on a 5×7 grid without auto_pad";
  } catch (const attention::AttentionError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("n_win 3"), std::string::npos) << what;
    EXPECT_NE(what.find("5\xC3\x97"
                        "7"),
              std::string::npos)
        << what;
  }
}

TEST(BiformerAttention, StateDictNamesAndRefusedOptions) {
  auto attn = make("biformer", 32, 2, {{"qk_dim", 16}, {"side_dwconv", 5}});
  std::vector<std::string> names;
  for (const auto& p : attn->named_parameters()) names.push_back(p.key());
  EXPECT_EQ(names, (std::vector<std::string>{"qkv.qkv.weight", "qkv.qkv.bias", "wo.weight",
                                             "wo.bias", "lepe.weight", "lepe.bias"}));
  EXPECT_EQ(attn->named_parameters()["qkv.qkv.weight"].sizes(), (at::IntArrayRef{64, 32}));
  const auto refused = [](std::map<std::string, double> o, const std::string& word) {
    try {
      make("biformer", 32, 2, std::move(o));
      ADD_FAILURE() << "accepted: " << word;
    } catch (const attention::AttentionError& e) {
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  };
  refused({{"kv_downsample_mode", 3}}, "maxpool");
  refused({{"param_attention", 1}}, "param_attention");
  refused({{"soft_routing", 1}}, "soft_routing");
  refused({{"param_routing", 1}}, "param_routing");
  refused({{"diff_routing", 1}}, "diff_routing");
  refused({{"n_win", 2}, {"topk", 5}}, "topk 5");
  refused({{"qk_dim", 15}}, "qk_dim 15");
  refused({{"side_dwconv", 4}}, "side_dwconv");
  const auto& info = attention::mechanism_info("biformer");
  EXPECT_EQ(attention::option_from_text(info, "kv_downsample_mode", "identity"), 0.0);
  EXPECT_THROW(attention::option_from_text(info, "kv_downsample_mode", "bogus"),
               attention::AttentionError);
}

}  // namespace
}  // namespace attnlab::testing
