// dat (DAT deformable attention, DAttentionBaseline): module parity with the reference fixture
// (out, pos, reference, attn; ≤ 1e-5), rows over the tokens (attn times the bilinear sampling)
// that rebuild the forward with dat.value_rest, the products and map factors, refusals, and a
// configuration the fixture does not cover (tanh offsets, G = 2 of 4 heads, a table of another
// size than the grid) against SPEC_COMPARISON's formulas written out here in float64 loops.
#include <cmath>
#include <cstdio>

#include "core/attention/map_factors.h"
#include "tests/attention/attention_test_util.h"

namespace attnlab::testing {
namespace {

using attention::TokenLayout;

TEST(DatAttention, ReproducesTheReferenceModule) {
  const auto weights = parity_weights("dat_attn");
  const auto expected = parity_expected("dat_attn");
  const std::map<std::string, double> options{{"n_groups", 2}, {"stride", 2},
                                              {"ksize", 5},    {"offset_range_factor", -1},
                                              {"q_h", 8},      {"q_w", 6}};
  auto attn = make("dat", 32, 2, options);
  load_from(*attn, weights, "");  // strict: the reference's names and shapes
  attn->eval();
  const at::Tensor image = expected.at("input");  // (1, 32, 8, 6) NCHW
  const at::Tensor x = image.flatten(2).transpose(1, 2).contiguous();
  auto [y, trace] = attn->forward_traced(x, attention::grid_layout(8, 6));
  const double d_out = max_abs_diff(y.transpose(1, 2).reshape(image.sizes()), expected.at("out"));
  const double d_pos = max_abs_diff(trace->internal("dat.pos"), expected.at("pos"));
  const double d_ref = max_abs_diff(trace->internal("dat.reference"), expected.at("reference"));
  const double d_attn = max_abs_diff(trace->internal("dat.attn"), expected.at("attn"));
  std::printf("[dat] fixture max|delta|: out %.3g pos %.3g reference %.3g attn %.3g\n", d_out,
              d_pos, d_ref, d_attn);
  EXPECT_LE(d_out, 1e-5);
  EXPECT_LE(d_pos, 1e-5);
  EXPECT_LE(d_ref, 1e-5);
  EXPECT_LE(d_attn, 1e-5);
  // Without use_pe the module has no table: the fixture's is unexpected.
  auto bare = make("dat", 32, 2, {{"n_groups", 2}, {"stride", 2}, {"ksize", 5}, {"use_pe", 0}});
  EXPECT_THROW(load_from(*bare, weights, ""), nn::StateLoadError);
}

// Wider draws than the default init, so that offsets move the samples off the reference
// points (and, with f > 0, partly off the grid) and the table's bias matters.
void dat_widen_parameters(attention::AttentionMechanism& m) {
  at::NoGradGuard no_grad;
  auto p = m.named_parameters();
  p["conv_offset.3.weight"].normal_(0, 1.5);
  if (p.contains("rpe_table")) p["rpe_table"].normal_(0, 0.5);
}

// Rows · v (the token values proj_v(x)) plus dat.value_rest, merged, through proj_out, is
// the forward; the products, map factors and row sums agree with the rows.
void dat_expect_rows_rebuild_forward(attention::AttentionMechanism& m, const at::Tensor& x,
                                     const TokenLayout& layout, bool rows_sum_to_one) {
  auto [y, trace] = m.forward_traced(x, layout);
  at::Tensor mixed = trace->internal("dat.value_rest").clone();
  for (int64_t b = 0; b < x.size(0); ++b)
    for (int64_t h = 0; h < trace->heads; ++h) {
      const at::Tensor rows = trace->matrix(b, h);
      EXPECT_GE(rows.min().item<double>(), 0.0);
      if (rows_sum_to_one)
        EXPECT_LE(max_abs_diff(rows.sum(1), at::ones({layout.tokens()})), 1e-5);
      else
        EXPECT_LE(rows.sum(1).max().item<double>(), 1 + 1e-5);
      mixed[b][h] += rows_times_v(*trace, b, h);
      const at::Tensor v = at::randn({layout.tokens(), 3});
      EXPECT_LE(max_abs_diff(trace->apply(b, h, v), at::matmul(rows, v)), 1e-5);
      EXPECT_LE(max_abs_diff(trace->apply_transposed(b, h, v), at::matmul(rows.t(), v)), 1e-5);
      const auto* source = dynamic_cast<const attention::MapFactorSource*>(trace.get());
      ASSERT_NE(source, nullptr);
      const auto f = source->map_factors(b, h);
      ASSERT_TRUE(f.has_value());
      EXPECT_LE(max_abs_diff(at::matmul(f->left, f->right.t()), rows), 1e-5);
    }
  auto p = m.named_parameters();
  const at::Tensor rebuilt = at::linear(attention::merge_heads(mixed),
                                        p["proj_out.weight"].flatten(1), p["proj_out.bias"]);
  EXPECT_LE(max_abs_diff(rebuilt, y), 1e-5);
}

TEST(DatAttention, RowsOverTheTokensRebuildTheForward) {
  at::manual_seed(3);
  // G = 2 and tanh offsets that reach off the grid: value_rest carries the rest.
  auto grouped = make("dat", 24, 4,
                      {{"n_groups", 2},
                       {"stride", 2},
                       {"ksize", 3},
                       {"offset_range_factor", 3},
                       {"q_h", 4},
                       {"q_w", 3}});
  grouped->eval();
  dat_widen_parameters(*grouped);
  dat_expect_rows_rebuild_forward(*grouped, random_tokens(2, 35, 24), attention::grid_layout(7, 5),
                                  false);
  const auto t = grouped->forward_traced(random_tokens(1, 35, 24), attention::grid_layout(7, 5));
  EXPECT_GT(t.trace->internal("dat.value_rest").abs().max().item<double>(), 1e-3);
  EXPECT_EQ(t.trace->internal("dat.pos").sizes(), (at::IntArrayRef{1, 2, 4, 3, 2}));
  // G = 1 with clamped offsets: every sample lies on the grid, rows sum to 1 and rows·v is
  // the whole head output.
  auto single = make("dat", 16, 2, {{"stride", 1}, {"ksize", 3}});
  single->eval();
  dat_widen_parameters(*single);
  dat_expect_rows_rebuild_forward(*single, random_tokens(2, 30, 16), attention::grid_layout(6, 5),
                                  true);
  const auto s = single->forward_traced(random_tokens(1, 30, 16), attention::grid_layout(6, 5));
  EXPECT_LE(s.trace->internal("dat.value_rest").abs().max().item<double>(), 1e-5);
}

// SPEC_COMPARISON's DAT, written out in float64: the bilinear sampler (align_corners True,
// zero padding) as loops over the four corners, used for x's samples (as a dense Ns×N matrix
// S_g per group) and for the table at (q_grid − pos)/2.
struct DatSpecSample {
  std::vector<std::pair<int64_t, double>> taps;  // (row-major pixel, weight) inside the grid
};
DatSpecSample dat_spec_sample(double y, double x, int64_t height, int64_t width) {
  const double py = (y + 1) / 2 * double(height - 1), px = (x + 1) / 2 * double(width - 1);
  const double fy = std::floor(py), fx = std::floor(px);
  DatSpecSample s;
  for (int cy = 0; cy < 2; ++cy)
    for (int cx = 0; cx < 2; ++cx) {
      const int64_t yy = int64_t(fy) + cy, xx = int64_t(fx) + cx;
      const double w = (cy ? py - fy : 1 - (py - fy)) * (cx ? px - fx : 1 - (px - fx));
      if (yy >= 0 && yy < height && xx >= 0 && xx < width) s.taps.push_back({yy * width + xx, w});
    }
  return s;
}

// At bf16 the sampling corners are still exact integers: bf16 rounds 575 to 576, so on a
// 24×24 grid a corner index computed in the model's precision fell past the last token
// (gather refused it here; on the H200 it was a device-side assert at 112×112). The bf16
// forward's corners are those of its own positions, computed in float64.
TEST(DatAttention, SamplesExactTokensAtBf16) {
  at::manual_seed(5);
  auto attn = make("dat", 16, 2, {{"stride", 1}, {"ksize", 3}, {"offset_range_factor", 2}});
  attn->eval();
  dat_widen_parameters(*attn);
  attn->to(at::kBFloat16);
  const at::Tensor x = random_tokens(1, 576, 16).to(at::kBFloat16);
  const auto t = attn->forward_traced(x, attention::grid_layout(24, 24));
  ASSERT_TRUE(at::isfinite(t.output.to(at::kFloat)).all().item<bool>());
  const at::Tensor idx = t.trace->internal("dat.sample_index");
  EXPECT_GE(idx.min().item<int64_t>(), 0);
  EXPECT_LT(idx.max().item<int64_t>(), 576);
  const at::Tensor pos = t.trace->internal("dat.pos").to(at::kDouble).reshape({-1, 2});
  const at::Tensor flat = idx.reshape({-1, 4});
  int64_t checked = 0;
  for (int64_t s = 0; s < pos.size(0); s += 37, ++checked) {
    const DatSpecSample want =
        dat_spec_sample(pos[s][0].item<double>(), pos[s][1].item<double>(), 24, 24);
    for (const auto& [token, w] : want.taps) {
      bool found = false;
      for (int64_t c = 0; c < 4; ++c) found |= flat[s][c].item<int64_t>() == token;
      EXPECT_TRUE(found) << "sample " << s << " misses token " << token;
    }
  }
  EXPECT_GT(checked, 10);
}

TEST(DatAttention, TanhOffsetsAndGroupsFollowTheSpec) {
  const int64_t dim = 16, heads = 4, groups = 2, height = 6, width = 5, n = height * width;
  const double f = 2.0;
  auto m = make("dat", dim, heads,
                {{"n_groups", groups},
                 {"stride", 1},
                 {"ksize", 3},
                 {"offset_range_factor", f},
                 {"q_h", 5},
                 {"q_w", 7}});
  m->eval();
  at::manual_seed(11);
  dat_widen_parameters(*m);
  const at::Tensor x = random_tokens(1, n, dim, 13);
  auto [y, trace] = m->forward_traced(x, attention::grid_layout(height, width));

  auto p = m->named_parameters();
  const auto P = [&](const std::string& name) { return p[name].detach().to(at::kDouble); };
  const at::Tensor xd = x[0].to(at::kDouble);  // (N, C)
  const auto conv1x1 = [&](const std::string& name, const at::Tensor& t) {
    return at::linear(t, P(name + ".weight").flatten(1), P(name + ".bias"));
  };
  const int64_t cg = dim / groups, d = dim / heads, hg = heads / groups;
  const at::Tensor q = conv1x1("proj_q", xd);  // (N, C)
  // Offset network per group: depthwise 3×3 (pad 1), LayerNorm over channels, GELU, 1×1.
  at::Tensor off = at::conv2d(q.t().reshape({groups, cg, height, width}), P("conv_offset.0.weight"),
                              P("conv_offset.0.bias"), {1, 1}, {1, 1}, {1, 1}, cg);
  off = at::layer_norm(off.permute({0, 2, 3, 1}), {cg}, P("conv_offset.1.norm.weight"),
                       P("conv_offset.1.norm.bias"), 1e-5);
  off = at::gelu(off).matmul(P("conv_offset.3.weight").flatten(1).t());  // (G, Hk, Wk, 2)
  const int64_t hk = height, wk = width, ns = hk * wk;
  at::Tensor pos = at::empty({groups, hk, wk, 2}, at::kDouble);
  at::Tensor s_mat = at::zeros({groups, ns, n}, at::kDouble);
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t i = 0; i < hk; ++i)
      for (int64_t j = 0; j < wk; ++j) {
        const double py = (i + 0.5) / double(hk - 1) * 2 - 1 +
                          std::tanh(off[g][i][j][0].item<double>()) * f / double(hk - 1);
        const double px = (j + 0.5) / double(wk - 1) * 2 - 1 +
                          std::tanh(off[g][i][j][1].item<double>()) * f / double(wk - 1);
        pos[g][i][j][0] = py;
        pos[g][i][j][1] = px;
        for (const auto& [t, w] : dat_spec_sample(py, px, height, width).taps)
          s_mat[g][i * wk + j][t] += w;
      }
  // x's channels of group g sampled through S_g; then proj_k, proj_v over all channels.
  at::Tensor sampled = at::empty({ns, dim}, at::kDouble);
  for (int64_t g = 0; g < groups; ++g)
    sampled.slice(1, g * cg, (g + 1) * cg) =
        at::matmul(s_mat[g], xd.slice(1, g * cg, (g + 1) * cg));
  const at::Tensor k = conv1x1("proj_k", sampled), v = conv1x1("proj_v", sampled);
  const at::Tensor table = P("rpe_table");  // (h, 9, 13)
  at::Tensor out = at::empty({n, dim}, at::kDouble);
  for (int64_t h = 0; h < heads; ++h) {
    const int64_t g = h / hg;
    at::Tensor logits =
        at::matmul(q.slice(1, h * d, (h + 1) * d), k.slice(1, h * d, (h + 1) * d).t()) /
        std::sqrt(double(d));
    const at::Tensor flat_table = table[h].flatten();
    for (int64_t qi = 0; qi < n; ++qi)
      for (int64_t s = 0; s < ns; ++s) {
        const double gy = double(qi / width) / double(height - 1) * 2 - 1;
        const double gx = double(qi % width) / double(width - 1) * 2 - 1;
        const double dy = (gy - pos[g][s / wk][s % wk][0].item<double>()) * 0.5;
        const double dx = (gx - pos[g][s / wk][s % wk][1].item<double>()) * 0.5;
        double b = 0;
        for (const auto& [t, w] : dat_spec_sample(dy, dx, table.size(1), table.size(2)).taps)
          b += w * flat_table[t].item<double>();
        logits[qi][s] += b;
      }
    const at::Tensor a = at::softmax(logits, -1);
    out.slice(1, h * d, (h + 1) * d) = at::matmul(a, v.slice(1, h * d, (h + 1) * d));
    EXPECT_LE(max_abs_diff(trace->matrix(0, h), at::matmul(a, s_mat[g]).to(at::kFloat)), 1e-5)
        << "head " << h << ": rows = attn · S_g";
  }
  const at::Tensor expected = conv1x1("proj_out", out).to(at::kFloat);
  const double d_out = max_abs_diff(y[0], expected);
  std::printf("[dat] spec (tanh offsets, G = 2, 5×7 table on 6×5) max|delta| out %.3g\n", d_out);
  EXPECT_LE(d_out, 1e-5);
  EXPECT_LE(max_abs_diff(trace->internal("dat.pos")[0], pos.to(at::kFloat)), 1e-5);
}

TEST(DatAttention, RefusesWhatItDoesNotImplementWithAMessage) {
  for (const char* mode : {"dwc_pe", "fixed_pe", "log_cpb", "no_off"}) {
    try {
      make("dat", 32, 2, {{mode, 1}});
      FAIL() << mode << " = 1 was accepted";
    } catch (const attention::AttentionError& e) {
      EXPECT_NE(std::string(e.what()).find(mode), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(make("dat", 32, 2, {{"n_groups", 3}}), attention::AttentionError);
  auto coarse = make("dat", 32, 2, {{"stride", 4}, {"ksize", 4}});
  try {
    coarse->forward(at::randn({1, 24, 32}), attention::grid_layout(6, 4));
    FAIL() << "a 1×1 key grid ran";
  } catch (const attention::AttentionError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("dat"), std::string::npos) << what;
    EXPECT_NE(what.find("stride 4"), std::string::npos) << what;
    EXPECT_NE(what.find("6×4"), std::string::npos) << what;
  }
  EXPECT_NO_THROW(coarse->forward(at::randn({1, 64, 32}), attention::grid_layout(8, 8)));
}

}  // namespace
}  // namespace attnlab::testing
