// swin (Swin W-MSA / SW-MSA): parity with the reference WindowAttention (swin_attn: out and
// the per-window probabilities) and with the shifted block (swin_block: its attention output,
// probabilities, attn_mask buffer and the whole block), the index buffer, rows on the full
// grid in image positions (zero outside the query's un-shifted window, the masked wrap
// near zero) that rebuild the forward, O(N·w²) products, the explicit form, the no-shift
// rule for a grid of one window, and refusals.
#include "core/attention/swin.h"

#include "tests/attention/attention_test_util.h"

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

}  // namespace
}  // namespace attnlab::testing
