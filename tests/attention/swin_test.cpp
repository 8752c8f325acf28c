// swin (Swin W-MSA / SW-MSA): parity with the reference WindowAttention (swin_attn: out and
// the per-window probabilities) and with the shifted block (swin_block: its attention output,
// probabilities, attn_mask buffer and the whole block), the index buffer, rows on the full
// grid in image positions (zero outside the query's un-shifted window, the masked wrap
// near zero) that rebuild the forward, O(N·w²) products, the explicit form, the no-shift
// rule for a grid of one window, and refusals. Rectangular Wh×Ww windows (window_w): the
// index formula, parity with an independent re-implementation of the reference
// (swin_reference.h), rows, the shift and fit rules, the reference module's window read off
// its weights, and window_w 0 as the square window.
#include "core/attention/swin.h"

#include "tests/attention/attention_test_util.h"
#include "tests/attention/swin_reference.h"

namespace attnlab::testing {
namespace {

using attention::TokenLayout;

// Windows (nW·B, w², C) of the grid rolled by −s (the reference's layout) -> (B, H·W, C)
// tokens in image positions: window_reverse, then roll (+s, +s).
at::Tensor windows_to_tokens(const at::Tensor& win, int64_t h, int64_t w, int64_t ws, int64_t s) {
  const int64_t c = win.size(2), b = win.size(0) / ((h / ws) * (w / ws));
  at::Tensor g = win.reshape({b, h / ws, w / ws, ws, ws, c}).permute({0, 1, 3, 2, 4, 5});
  return at::roll(g.reshape({b, h, w, c}), {s, s}, {1, 2}).reshape({b, h * w, c});
}

TEST(SwinAttention, ReproducesTheReferenceWindowAttention) {
  const auto weights = parity_weights("swin_attn");
  const auto expected = parity_expected("swin_attn");
  auto attn = make("swin", 32, 2, {{"window", 4}});
  load_from(*attn, weights, "");
  attn->eval();
  const at::Tensor x = expected.at("input");  // 4 windows as 4 images of one 4×4 window
  auto [y, trace] = attn->forward_traced(x, attention::grid_layout(4, 4));
  EXPECT_LE(max_abs_diff(y, expected.at("out")), 1e-5);
  const auto ref = trace->reference_outputs();
  ASSERT_EQ(ref.size(), 1u);
  EXPECT_EQ(ref[0].first, "attn");
  EXPECT_LE(max_abs_diff(ref[0].second, expected.at("attn")), 1e-5);
  // One window per image: the rows are the window's probabilities.
  for (int64_t b = 0; b < 4; ++b)
    for (int64_t h = 0; h < 2; ++h)
      EXPECT_LE(max_abs_diff(trace->matrix(b, h), expected.at("attn")[b][h]), 1e-5);
  // The index buffer is the reference's (integers: exact).
  EXPECT_TRUE(
      at::equal(attention::swin_relative_position_index(4), weights.at("relative_position_index")));
}

class ShiftedBlock : public ::testing::Test {
 protected:
  void SetUp() override {
    weights = parity_weights("swin_block");
    expected = parity_expected("swin_block");
    attn = make("swin", 32, 2, {{"window", 4}, {"shift", 2}});
    load_from(*attn, weights, "attn.");
    attn->eval();
    normed = layer_norm(expected.at("input"), weights, "norm1", 1e-5);
  }
  nn::TensorMap weights, expected;
  std::shared_ptr<attention::AttentionMechanism> attn;
  at::Tensor normed;
  const TokenLayout layout = attention::grid_layout(8, 12);
};

TEST_F(ShiftedBlock, AttentionOutputProbabilitiesAndBlockMatchTheReference) {
  auto [y, trace] = attn->forward_traced(normed, layout);
  EXPECT_EQ(trace->window, 4);
  EXPECT_EQ(trace->window_shift, 2);
  EXPECT_LE(max_abs_diff(y, windows_to_tokens(expected.at("out.attn"), 8, 12, 4, 2)), 1e-5);
  EXPECT_LE(max_abs_diff(trace->reference_outputs()[0].second, expected.at("attn")), 1e-5);
  // The whole block: x + attn(norm1(x)), then + mlp(norm2(·)).
  const at::Tensor x = expected.at("input") + y;
  const at::Tensor out = x + timm_mlp(layer_norm(x, weights, "norm2", 1e-5), weights, "mlp");
  EXPECT_LE(max_abs_diff(out, expected.at("out")), 1e-5);
  // The block's attn_mask buffer holds exactly the mask the mechanism builds (0 / −100).
  const at::Tensor mask = attention::swin_shift_mask(8, 12, 4, 2, at::kFloat);
  EXPECT_TRUE(at::equal(mask, weights.at("attn_mask")));
}

// Each window's probabilities sit in the rows of its queries at the keys' image
// positions; nothing outside the window; the masked wrap-around is ≈ 0.
TEST_F(ShiftedBlock, RowsAreTheWindowProbabilitiesInImagePositions) {
  auto [y, trace] = attn->forward_traced(normed, layout);
  const at::Tensor attn_ref = expected.at("attn");  // (6, 2, 16, 16)
  for (int64_t h = 0; h < 2; ++h) {
    const at::Tensor rows = trace->matrix(0, h);
    at::Tensor covered = at::zeros_like(rows, at::kBool);
    for (int64_t wy = 0; wy < 2; ++wy)
      for (int64_t wx = 0; wx < 3; ++wx)
        for (int64_t i = 0; i < 16; ++i) {
          // Rolled position -> image position: +2 on both axes, wrapping.
          auto token = [&](int64_t j) {
            return ((wy * 4 + j / 4 + 2) % 8) * 12 + (wx * 4 + j % 4 + 2) % 12;
          };
          for (int64_t j = 0; j < 16; ++j) {
            const float want = attn_ref[wy * 3 + wx][h][i][j].item<float>();
            EXPECT_NEAR(rows[token(i)][token(j)].item<float>(), want, 1e-5);
            covered[token(i)][token(j)] = true;
          }
        }
    EXPECT_EQ(rows.masked_select(covered.logical_not()).abs().max().item<float>(), 0.0f)
        << "weight outside the query's window";
    // Query (0, 0) sits in the wrapped corner window: its own region (rows 0–1, cols 0–1
    // of the image) carries all of its weight, the masked rest < 1e-30.
    const at::Tensor r = rows[0].view({8, 12});
    EXPECT_NEAR(r.slice(0, 0, 2).slice(1, 0, 2).sum().item<float>(), 1.0f, 1e-5);
    EXPECT_LT(r.slice(0, 6, 8).slice(1, 10, 12).sum().item<float>(), 1e-30f);
  }
}

// Random weights and input on a non-square grid: rows·v merged and projected is the
// forward; products through the w² keys equal the matrix products; rows sum to 1.
TEST(SwinAttention, RowsRebuildTheForwardAndProductsMatchTheMatrix) {
  for (int64_t shift : {0, 2}) {
    SCOPED_TRACE("shift " + std::to_string(shift));
    at::manual_seed(5);
    auto attn = make("swin", 24, 3, {{"window", 4}, {"shift", shift}});
    attn->eval();
    const TokenLayout layout = attention::grid_layout(8, 12);
    const at::Tensor x = random_tokens(2, layout.tokens(), 24);
    auto [y, trace] = attn->forward_traced(x, layout);
    EXPECT_LE(max_abs_diff(attn->forward(x, layout), y), reordering_tolerance(y));
    auto p = attn->named_parameters();
    at::Tensor mixed = at::zeros({2, 3, layout.tokens(), 8});
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t h = 0; h < 3; ++h) {
        const at::Tensor rows = trace->matrix(b, h);
        EXPECT_LE(max_abs_diff(rows.sum(-1), at::ones({layout.tokens()})), 1e-5);
        mixed[b][h].copy_(rows_times_v(*trace, b, h));
        const at::Tensor v = at::randn({layout.tokens(), 5});
        EXPECT_LE(max_abs_diff(trace->apply(b, h, v), at::matmul(rows, v)), 1e-5);
        EXPECT_LE(max_abs_diff(trace->apply_transposed(b, h, v), at::matmul(rows.t(), v)), 1e-5);
        EXPECT_LE(max_abs_diff(trace->head_output(b, h), rows_times_v(*trace, b, h)), 1e-5);
      }
    const at::Tensor rebuilt =
        at::linear(attention::merge_heads(mixed), p["proj.weight"], p["proj.bias"]);
    EXPECT_LE(max_abs_diff(rebuilt, y), 1e-5);
  }
}

TEST(SwinAttention, ExplicitFormEqualsTheForwardWithGradients) {
  at::manual_seed(6);
  auto attn = make("swin", 16, 2, {{"window", 4}, {"shift", 2}});
  const TokenLayout layout = attention::grid_layout(8, 8);
  const at::Tensor x = random_tokens(2, layout.tokens(), 16);
  auto grads = [&](bool explicit_form) {
    at::Tensor in = x.clone().requires_grad_(true);
    attention::TraceOptions o;
    o.explicit_attention = explicit_form;
    auto [out, trace] = attn->forward_traced(in, layout, o);
    EXPECT_EQ(trace->explicit_rows.size(), explicit_form ? 2u : 0u);
    (out * at::sin(at::arange(out.numel(), at::kFloat)).view(out.sizes())).sum().backward();
    return std::make_pair(out.detach(), in.grad());
  };
  const auto plain = grads(false);
  const auto expl = grads(true);
  EXPECT_LE(max_abs_diff(expl.first, plain.first), 1e-5);
  EXPECT_LE(max_abs_diff(expl.second, plain.second), 1e-5);
}

// A grid of one window row or column: the reference builds the block without shift, and
// so does the mechanism (same output as shift 0, no mask, window_shift 0).
TEST(SwinAttention, AGridOfOneWindowRunsUnshifted) {
  at::manual_seed(8);
  auto shifted = make("swin", 16, 2, {{"window", 4}, {"shift", 2}});
  auto plain = make("swin", 16, 2, {{"window", 4}});
  auto sp = shifted->named_parameters(), pp = plain->named_parameters();
  at::NoGradGuard no_grad;
  for (const auto& kv : sp) pp[kv.key()].copy_(kv.value());
  const TokenLayout layout = attention::grid_layout(4, 8);
  const at::Tensor x = random_tokens(1, layout.tokens(), 16);
  auto [y, trace] = shifted->forward_traced(x, layout);
  EXPECT_EQ(trace->window_shift, 0);
  EXPECT_LE(max_abs_diff(y, plain->forward(x, layout)), reordering_tolerance(y));
}

// pad 1 (the default): a grid that is no multiple of the window runs as the detection
// backbone does — zero tokens appended right and bottom, the padded grid attended (shift
// mask on it), the output cropped; rows put the padding keys' weight off the layer's grid.
TEST(SwinAttention, PaddingIsTheMechanismOnTheZeroPaddedGridCropped) {
  at::manual_seed(9);
  auto attn = make("swin", 16, 2, {{"window", 4}, {"shift", 2}});
  attn->eval();
  const at::Tensor x = random_tokens(2, 6 * 5, 16);
  auto [y, trace] = attn->forward_traced(x, attention::grid_layout(6, 5));
  const at::Tensor xp = at::constant_pad_nd(x.view({2, 6, 5, 16}), {0, 0, 0, 3, 0, 2});
  const at::Tensor yp = attn->forward(xp.reshape({2, 64, 16}), attention::grid_layout(8, 8));
  const at::Tensor want = yp.view({2, 8, 8, 16}).slice(1, 0, 6).slice(2, 0, 5).reshape({2, 30, 16});
  EXPECT_LE(max_abs_diff(y, want), reordering_tolerance(want));
  EXPECT_EQ(trace->window_shift, 2);
  EXPECT_EQ(trace->groups[0].keys.size(), 64);
  const at::Tensor rows = trace->matrix(1, 1);  // (30, 64) over the padded grid
  EXPECT_LE(max_abs_diff(rows.sum(-1), at::ones({30})), 1e-5);
  const at::Tensor on_tokens =
      attention::rows_on_tokens(rows, trace->groups[0].keys, trace->layout);
  EXPECT_LT(on_tokens.sum(-1).min().item<float>(), 0.999f) << "padding keys carry weight";
  // Explicit form on the padded grid.
  attention::TraceOptions o;
  o.explicit_attention = true;
  EXPECT_LE(max_abs_diff(attn->forward_traced(x, attention::grid_layout(6, 5), o).output, y), 1e-5);
}

TEST(SwinAttention, RefusesWhatTheReferenceCannotRun) {
  auto attn = make("swin", 16, 2, {{"window", 4}, {"pad", 0}});
  auto message = [&](int64_t h, int64_t w) -> std::string {
    try {
      attn->forward(at::randn({1, h * w, 16}), attention::grid_layout(h, w));
    } catch (const attention::AttentionError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(message(6, 8).find("not a multiple of the window 4"), std::string::npos);
  EXPECT_NE(message(2, 2).find("smaller window"), std::string::npos);
  EXPECT_THROW(make("swin", 16, 2, {{"window", 4}, {"shift", 4}}), attention::AttentionError);
  // A loaded index that does not address the table.
  nn::TensorMap w;
  for (const auto& p : attn->named_parameters()) w[p.key()] = p.value().detach().clone();
  w["relative_position_index"] = at::full({16, 16}, 49, at::kLong);
  load_from(*attn, w, "");
  EXPECT_THROW(attn->forward(at::randn({1, 16, 16}), attention::grid_layout(4, 4)),
               attention::AttentionError);
}

// ---- Rectangular windows (window_w) ----

// The 2×3 window's index: shape (6, 6), rows of a (2·2 − 1)(2·3 − 1) = 15-row table; a few
// entries by hand (token t sits at (t / 3, t % 3)), then every entry against the formula.
TEST(SwinRectangular, RelativePositionIndexOfA2x3Window) {
  const at::Tensor index = attention::swin_relative_position_index(2, 3);
  EXPECT_EQ(index.sizes(), (at::IntArrayRef{6, 6}));
  EXPECT_EQ(index.scalar_type(), at::kLong);
  auto at_ = [&](int64_t i, int64_t j) { return index[i][j].item<int64_t>(); };
  EXPECT_EQ(at_(0, 0), 7);   // Δ (0, 0): (0 + 1)·5 + (0 + 2)
  EXPECT_EQ(at_(0, 5), 0);   // (0,0) − (1,2) = (−1, −2): 0·5 + 0
  EXPECT_EQ(at_(5, 0), 14);  // (1, 2): 2·5 + 4
  EXPECT_EQ(at_(1, 3), 3);   // (0,1) − (1,0) = (−1, 1): 0·5 + 3
  EXPECT_EQ(at_(3, 2), 10);  // (1,0) − (0,2) = (1, −2): 2·5 + 0
  EXPECT_TRUE(at::equal(index, swin_reference::relative_position_index(2, 3)));
  // Every one of the 3 × 5 offsets occurs: the table's 15 rows, all addressed.
  EXPECT_EQ(std::get<0>(at::_unique(index)).numel(), 15);
  // The orientation matters (3×2 is another index); the square overload is (w, w).
  EXPECT_FALSE(at::equal(attention::swin_relative_position_index(3, 2), index));
  EXPECT_TRUE(at::equal(attention::swin_relative_position_index(4),
                        attention::swin_relative_position_index(4, 4)));
  auto attn = make("swin", 24, 3, {{"window", 2}, {"window_w", 3}});
  EXPECT_EQ(attn->named_parameters()["relative_position_bias_table"].sizes(),
            (at::IntArrayRef{15, 3}));
  EXPECT_TRUE(at::equal(attn->named_buffers()["relative_position_index"], index));
}

// The mechanism against the reference's block branch (roll, window_partition,
// WindowAttention.forward with its mask, window_reverse, roll back), re-implemented in the
// test, for Wh ≠ Ww, unshifted and shifted. Tolerance: both sides are float32 and do the
// same operations (linear, q·scale·kᵀ, + bias, + mask, softmax, ·v, linear) on the same
// numbers, only batched differently (per head and window vs per window), so they differ
// by the order of the sums alone: agree_up_to_reordering (64 ulps of the values' scale).
// The mask is compared exactly: both hold only the constants 0 and −100.
TEST(SwinRectangular, ReproducesAnIndependentReferenceOfWindowAttention) {
  struct Case {
    int64_t wh, ww, h, w, s;
  };
  for (const Case& k :
       {Case{2, 3, 4, 6, 0}, Case{2, 3, 4, 6, 1}, Case{3, 2, 6, 4, 1}, Case{2, 4, 6, 8, 1}}) {
    SCOPED_TRACE(std::to_string(k.wh) + "x" + std::to_string(k.ww) + " windows on " +
                 std::to_string(k.h) + "x" + std::to_string(k.w) + ", shift " +
                 std::to_string(k.s));
    at::manual_seed(11);
    auto attn = make("swin", 24, 3, {{"window", k.wh}, {"window_w", k.ww}, {"shift", k.s}});
    attn->eval();
    auto p = attn->named_parameters();
    {
      at::NoGradGuard no_grad;  // a bias large enough to matter (the init's std is 0.02)
      p["relative_position_bias_table"].normal_(0.0, 0.5);
    }
    const at::Tensor x = random_tokens(2, k.h * k.w, 24);
    auto [y, trace] = attn->forward_traced(x, attention::grid_layout(k.h, k.w));
    const auto ref = swin_reference::attention(x, k.h, k.w, k.wh, k.ww, k.s, 3, p["qkv.weight"],
                                               p["qkv.bias"], p["proj.weight"], p["proj.bias"],
                                               p["relative_position_bias_table"]);
    EXPECT_TRUE(agree_up_to_reordering(y, ref.out));
    EXPECT_TRUE(agree_up_to_reordering(trace->reference_outputs()[0].second, ref.attn));
    EXPECT_EQ(trace->window, k.wh);
    EXPECT_EQ(trace->window_w, k.ww);
    EXPECT_EQ(trace->window_cols(), k.ww);
    EXPECT_EQ(trace->window_shift, k.s);
    if (k.s > 0) {
      EXPECT_TRUE(at::equal(attention::swin_shift_mask(k.h, k.w, k.wh, k.ww, k.s, at::kFloat),
                            swin_reference::shift_mask(k.h, k.w, k.wh, k.ww, k.s)));
    }
    // Rows: window (wy, wx) of image b is reference window b·nW + wy·(W/Ww) + wx; its token
    // t sits at (wy·Wh + t / Ww, wx·Ww + t % Ww) on the rolled grid, + (s, s) in the image.
    const int64_t n = k.wh * k.ww, nw = (k.h / k.wh) * (k.w / k.ww);
    auto image = [&](int64_t win, int64_t t) {
      const int64_t y0 = (win / (k.w / k.ww)) * k.wh + t / k.ww;
      const int64_t x0 = (win % (k.w / k.ww)) * k.ww + t % k.ww;
      return ((y0 + k.s) % k.h) * k.w + (x0 + k.s) % k.w;
    };
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t h = 0; h < 3; ++h) {
        at::Tensor want = at::zeros({k.h * k.w, k.h * k.w});
        for (int64_t win = 0; win < nw; ++win)
          for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < n; ++j)
              want[image(win, i)][image(win, j)] = ref.attn[b * nw + win][h][i][j];
        const at::Tensor rows = trace->matrix(b, h);
        EXPECT_TRUE(agree_up_to_reordering(rows, want));
        const at::Tensor v = at::randn({k.h * k.w, 5});
        EXPECT_TRUE(agree_up_to_reordering(trace->apply(b, h, v), at::matmul(rows, v)));
        EXPECT_TRUE(
            agree_up_to_reordering(trace->apply_transposed(b, h, v), at::matmul(rows.t(), v)));
      }
  }
}

// Rows sum to 1 (a softmax over the Wh·Ww keys: 64 ulps of 1) and are the matrix the
// explicit form computes the output from; also on a padded grid (3×4 -> 4×6).
TEST(SwinRectangular, RowsSumToOneAndEqualTheExplicitMatrix) {
  for (const auto& [gh, gw] : {std::pair<int64_t, int64_t>{4, 6}, {3, 4}}) {
    SCOPED_TRACE(std::to_string(gh) + "x" + std::to_string(gw));
    at::manual_seed(12);
    auto attn = make("swin", 16, 2, {{"window", 2}, {"window_w", 3}, {"shift", 1}});
    const TokenLayout layout = attention::grid_layout(gh, gw);
    const at::Tensor x = random_tokens(2, layout.tokens(), 16);
    attention::TraceOptions o;
    o.explicit_attention = true;
    auto [y, trace] = attn->forward_traced(x, layout, o);
    ASSERT_EQ(trace->explicit_rows.size(), 2u);
    EXPECT_TRUE(agree_up_to_reordering(y, attn->forward(x, layout)));
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t h = 0; h < 2; ++h) {
        const at::Tensor rows = trace->matrix(b, h);
        EXPECT_EQ(rows.size(1), 24);  // the keys: the (padded) 4×6 grid
        EXPECT_TRUE(agree_up_to_reordering(rows.sum(-1), at::ones({layout.tokens()})));
        EXPECT_TRUE(agree_up_to_reordering(rows, trace->explicit_rows[size_t(h)][b]));
      }
  }
}

// window_w 0 (the default) and window_w = window are the square window: same parameters,
// same output as the config without window_w, and a trace that says square (window_w 0).
TEST(SwinRectangular, WindowWZeroIsTheSquareWindow) {
  at::manual_seed(13);
  auto square = make("swin", 16, 2, {{"window", 4}, {"shift", 2}});
  const TokenLayout layout = attention::grid_layout(8, 12);
  const at::Tensor x = random_tokens(1, layout.tokens(), 16);
  const at::Tensor want = square->forward(x, layout);
  for (double ww : {0.0, 4.0}) {
    auto other = make("swin", 16, 2, {{"window", 4}, {"window_w", ww}, {"shift", 2}});
    auto sp = square->named_parameters(), op = other->named_parameters();
    at::NoGradGuard no_grad;
    for (const auto& kv : sp) {
      ASSERT_EQ(op[kv.key()].sizes(), kv.value().sizes()) << kv.key();
      op[kv.key()].copy_(kv.value());
    }
    EXPECT_TRUE(at::equal(other->named_buffers()["relative_position_index"],
                          square->named_buffers()["relative_position_index"]));
    auto [y, trace] = other->forward_traced(x, layout);
    EXPECT_TRUE(agree_up_to_reordering(y, want));
    EXPECT_EQ(trace->window, 4);
    EXPECT_EQ(trace->window_w, 0);
    EXPECT_EQ(trace->window_cols(), 4);
  }
  const auto& info = attention::mechanism_info("swin");
  attention::MechanismConfig c;
  c.heads = 2;
  c.options = {{"window", 4}, {"window_w", 0}};  // as make_mechanism fills them
  EXPECT_EQ(info.score_elements(c, layout), 2.0 * 96 * 16);
  c.options["window_w"] = 3;
  EXPECT_EQ(info.score_elements(c, layout), 2.0 * 96 * 12);
}

// One shift on both axes, < min(Wh, Ww); none when the grid fits in the window along
// either axis; the window a model would fit to a small grid, per axis.
TEST(SwinRectangular, ShiftAndFitRulesPerAxis) {
  EXPECT_EQ(attention::swin_effective_shift(4, 6, 2, 3, 1), 1);
  EXPECT_EQ(attention::swin_effective_shift(2, 6, 2, 3, 1), 0);  // H ≤ Wh
  EXPECT_EQ(attention::swin_effective_shift(4, 3, 2, 3, 1), 0);  // W ≤ Ww
  EXPECT_EQ(attention::swin_effective_shift(4, 8, 4, 2), 0);     // square: min(H, W) ≤ w
  EXPECT_EQ(attention::swin_effective_shift(8, 8, 4, 2), 2);
  EXPECT_EQ(attention::swin_fitted_window(1, 6, 2, 3), std::make_pair(int64_t{1}, int64_t{3}));
  EXPECT_EQ(attention::swin_fitted_window(4, 2, 2, 3), std::make_pair(int64_t{2}, int64_t{2}));
  EXPECT_THROW(make("swin", 16, 2, {{"window", 2}, {"window_w", 3}, {"shift", 2}}),
               attention::AttentionError);
  auto attn = make("swin", 16, 2, {{"window", 2}, {"window_w", 3}, {"shift", 1}});
  auto [y, trace] = attn->forward_traced(random_tokens(1, 12, 16), attention::grid_layout(2, 6));
  EXPECT_EQ(trace->window_shift, 0);
  auto unpadded = make("swin", 16, 2, {{"window", 2}, {"window_w", 3}, {"pad", 0}});
  try {
    unpadded->forward(at::randn({1, 6, 16}), attention::grid_layout(1, 6));
    ADD_FAILURE() << "a 1×6 grid is no multiple of 2×3 windows";
  } catch (const attention::AttentionError& e) {
    EXPECT_NE(std::string(e.what()).find("window 1, window_w 3"), std::string::npos) << e.what();
  }
}

// The reference module's window from a state dict alone: the shapes are symmetric in Wh, Ww,
// the index's values say which is which (2×3 and 3×2 apart); the fixture's 4×4 stays square.
TEST(SwinRectangular, ReferenceModuleReadsTheWindowFromTheWeights) {
  const auto& module = *attention::mechanism_info("swin").reference_module;
  auto fitted = [&](const nn::TensorMap& w) {
    attention::MechanismConfig c;
    module.fit_to_weights(c, {w.begin(), w.end()});
    return std::make_pair(c.option("window"), c.option("window_w"));
  };
  for (const auto& [wh, ww] : {std::pair<int64_t, int64_t>{2, 3}, {3, 2}, {1, 4}, {5, 5}}) {
    auto attn = make("swin", 8, 2, {{"window", wh}, {"window_w", ww}});
    nn::TensorMap w;
    for (const auto& p : attn->named_parameters()) w[p.key()] = p.value().detach();
    for (const auto& p : attn->named_buffers()) w[p.key()] = p.value();
    EXPECT_EQ(fitted(w), std::make_pair(double(wh), wh == ww ? 0.0 : double(ww)));
  }
  EXPECT_EQ(fitted(parity_weights("swin_attn")), std::make_pair(4.0, 0.0));
}

}  // namespace
}  // namespace attnlab::testing
