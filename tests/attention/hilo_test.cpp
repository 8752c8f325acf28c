// hilo: parity with LITv2's HiLo (litv2_mini stages 3 and 4, the padded 15×13 module),
// the rows·V reassembly per branch, window/row properties, padding and crop, options.
#include <iostream>

#include "tests/attention/attention_test_util.h"

namespace attnlab::testing {
namespace {

using attention::TokenLayout;

// Prints the measured value so that the report can quote it, then checks it.
void expect_close(double diff, const std::string& what, double tol = 1e-5) {
  std::cout << "[hilo] max |delta| " << what << " = " << diff << "\n";
  EXPECT_LE(diff, tol) << what;
}

at::Tensor param(const attention::AttentionMechanism& m, const std::string& name) {
  return m.named_parameters()[name];
}

// LITv2 DWMlp: fc1 -> depthwise 3×3 conv (bias, padding 1) on the H×W grid -> GELU -> fc2.
at::Tensor dw_mlp(const at::Tensor& x, const nn::TensorMap& w, const std::string& p, int64_t height,
                  int64_t width) {
  at::Tensor h = at::linear(x, w.at(p + ".fc1.weight"), w.at(p + ".fc1.bias"));
  const int64_t b = h.size(0), c = h.size(2);
  at::Tensor img = h.transpose(1, 2).reshape({b, c, height, width});
  img = at::conv2d(img, w.at(p + ".dwconv.dwconv.weight"), w.at(p + ".dwconv.dwconv.bias"), 1, 1, 1,
                   c);
  h = at::gelu(img.flatten(2).transpose(1, 2));
  return at::linear(h, w.at(p + ".fc2.weight"), w.at(p + ".fc2.bias"));
}

TEST(HiLoAttention, MatchesLitv2MiniStage3Block0OutputAndBranchOutputs) {
  auto w = parity_weights("litv2_mini");
  auto e = parity_expected("litv2_mini");
  auto attn = make("hilo", 64, 2, {{"window", 2}, {"alpha", 0.9}});
  load_from(*attn, w, "layers.2.blocks.0.attn.");
  at::Tensor x = layer_norm(e.at("out.layers.1"), w, "layers.2.blocks.0.norm1", 1e-5);
  auto [out, trace] = attn->forward_traced(x, attention::grid_layout(14, 14));
  expect_close(max_abs_diff(out, e.at("out.layers.2.blocks.0.attn")), "litv2_mini attn output");
  expect_close(max_abs_diff(trace->internal("hilo.hifi_out"), e.at("hifi.layers.2.blocks.0")),
               "litv2_mini hifi branch");
  expect_close(max_abs_diff(trace->internal("hilo.lofi_out"), e.at("lofi.layers.2.blocks.0")),
               "litv2_mini lofi branch");
}

TEST(HiLoAttention, MatchesLitv2MiniStage4BlockWhichIsAllLoFiWithWindow1) {
  // Stage 4's only block takes out.layers.2 (stage 3 after its DTM downsample) on 7×7;
  // its attention output is not a fixture tensor, the block output out.layers.3 is.
  auto w = parity_weights("litv2_mini");
  auto e = parity_expected("litv2_mini");
  auto attn = make("hilo", 128, 4, {{"window", 1}, {"alpha", 0.9}});
  load_from(*attn, w, "layers.3.blocks.0.attn.");
  at::Tensor x = e.at("out.layers.2");
  at::Tensor y = x + attn->forward(layer_norm(x, w, "layers.3.blocks.0.norm1", 1e-5),
                                   attention::grid_layout(7, 7));
  y = y +
      dw_mlp(layer_norm(y, w, "layers.3.blocks.0.norm2", 1e-5), w, "layers.3.blocks.0.mlp", 7, 7);
  expect_close(max_abs_diff(y, e.at("out.layers.3")), "litv2_mini stage-4 block output");
}

TEST(HiLoAttention, MatchesReferenceOnPadded15x13Grid) {
  auto w = parity_weights("hilo_padded");
  auto e = parity_expected("hilo_padded");
  auto attn = make("hilo", 64, 4, {{"window", 2}, {"alpha", 0.5}});
  load_from(*attn, w, "");
  at::Tensor out = attn->forward(e.at("input"), attention::grid_layout(15, 13));
  expect_close(max_abs_diff(out, e.at("out")), "hilo_padded output");
}

// out == cat[h_proj(rows·V of the Hi-Fi heads), l_proj(rows·V of the Lo-Fi heads)].
void check_rows_times_values(int64_t height, int64_t width) {
  const int64_t c = 48, heads = 4, d = 12;
  auto attn = make("hilo", c, heads, {{"window", 2}, {"alpha", 0.5}});
  const TokenLayout layout = attention::grid_layout(height, width);
  auto [out, trace] = attn->forward_traced(random_tokens(2, layout.tokens(), c), layout);
  ASSERT_EQ(trace->groups.size(), 2u);
  EXPECT_EQ(trace->groups[0].name, "hifi");
  EXPECT_EQ(trace->groups[1].name, "lofi");
  EXPECT_EQ(trace->window, 2);  // what viewers outline
  // Queries (and Hi-Fi keys) live on the padded grid; Lo-Fi keys on the pooled grid.
  const int64_t hp = (height + 1) / 2 * 2, wp = (width + 1) / 2 * 2;
  for (const auto& g : trace->groups) {
    EXPECT_EQ(g.query_grid_w, wp);
    EXPECT_EQ(g.q.sizes(), at::IntArrayRef({2, 2, hp * wp, d}));
    EXPECT_EQ(g.k.size(2), g.keys.size());
  }
  EXPECT_EQ(trace->groups[0].first_head, 0);
  EXPECT_EQ(trace->groups[0].keys.key_w * trace->groups[0].keys.cell, wp);
  EXPECT_EQ(trace->groups[1].first_head, 2);
  EXPECT_EQ(trace->groups[1].keys.key_h, hp / 2);
  EXPECT_EQ(trace->groups[1].keys.cell, 2);
  EXPECT_EQ(trace->internal("hilo.pooled").sizes(), at::IntArrayRef({2, hp * wp / 4, c}));
  for (int64_t b = 0; b < 2; ++b) {
    std::vector<at::Tensor> hi, lo;
    for (int64_t h = 0; h < heads; ++h) (h < 2 ? hi : lo).push_back(rows_times_v(*trace, b, h));
    at::Tensor rebuilt = at::cat(
        {at::linear(at::cat(hi, -1), param(*attn, "h_proj.weight"), param(*attn, "h_proj.bias")),
         at::linear(at::cat(lo, -1), param(*attn, "l_proj.weight"), param(*attn, "l_proj.bias"))},
        -1);
    ASSERT_EQ(rebuilt.size(1), 2 * 2 * d);
    expect_close(max_abs_diff(rebuilt, out[b]), "rows*V " + layout.describe());
  }
}

TEST(HiLoAttention, OutputIsProjectedRowsTimesValuesOnDivisibleGrid) {
  check_rows_times_values(6, 8);
}

TEST(HiLoAttention, OutputIsProjectedRowsTimesValuesOnOddGrid) {
  check_rows_times_values(7, 5);
}

TEST(HiLoAttention, HiFiRowsStayInTheirWindowAndLoFiRowsSumToOneOverPooledKeys) {
  const int64_t s = 2, height = 7, width = 5, wp = 6;
  auto attn = make("hilo", 32, 4, {{"window", s}, {"alpha", 0.5}});
  const TokenLayout layout = attention::grid_layout(height, width);
  auto [out, trace] = attn->forward_traced(random_tokens(1, layout.tokens(), 32, 3), layout);
  for (int64_t h : {0, 1}) {  // Hi-Fi heads: keys are the padded 8×6 grid
    at::Tensor m = trace->matrix(0, h);
    ASSERT_EQ(m.sizes(), at::IntArrayRef({height * width, 8 * wp}));
    at::Tensor inside = at::zeros(m.sizes(), at::kBool);
    auto in = inside.accessor<bool, 2>();
    for (int64_t t = 0; t < height * width; ++t) {
      const int64_t y0 = t / width / s * s, x0 = t % width / s * s;
      for (int64_t i = 0; i < s; ++i)
        for (int64_t j = 0; j < s; ++j) in[t][(y0 + i) * wp + x0 + j] = true;
    }
    EXPECT_EQ(m.masked_select(inside.logical_not()).abs().max().item<float>(), 0.0f);
    EXPECT_GT(m.masked_select(inside).min().item<float>(), 0.0f);
    at::Tensor sums = m.sum(-1);
    expect_close(max_abs_diff(sums, at::ones_like(sums)), "hifi row sums");
  }
  for (int64_t h : {2, 3}) {  // Lo-Fi heads: keys are the pooled 4×3 grid
    at::Tensor m = trace->matrix(0, h);
    ASSERT_EQ(m.sizes(), at::IntArrayRef({height * width, 12}));
    at::Tensor sums = m.sum(-1);
    expect_close(max_abs_diff(sums, at::ones_like(sums)), "lofi row sums");
  }
  // One row equals the same row of the matrix.
  auto r = trace->row(0, 17, 1);
  EXPECT_LE(max_abs_diff(r.weights, trace->matrix(0, 1)[17]), 1e-7);
}

TEST(HiLoAttention, Window1EqualsGlobalSoftmaxWithTheSplitWeights) {
  auto hilo = make("hilo", 48, 4, {{"window", 1}});
  auto softmax = make("softmax", 48, 4);
  ASSERT_FALSE(hilo->named_parameters().contains("h_qkv.weight"));
  nn::TensorMap w;
  w["qkv.weight"] = at::cat({param(*hilo, "l_q.weight"), param(*hilo, "l_kv.weight")});
  w["qkv.bias"] = at::cat({param(*hilo, "l_q.bias"), param(*hilo, "l_kv.bias")});
  w["proj.weight"] = param(*hilo, "l_proj.weight");
  w["proj.bias"] = param(*hilo, "l_proj.bias");
  load_from(*softmax, w, "");
  const TokenLayout layout = attention::grid_layout(5, 6);
  at::Tensor x = random_tokens(2, layout.tokens(), 48, 11);
  expect_close(max_abs_diff(hilo->forward(x, layout), softmax->forward(x, layout)),
               "window 1 vs softmax");
}

// Odd grid: right shape, finite, and Hi-Fi outputs in windows wholly inside the grid equal
// HiLo run on the divisible sub-grid made of those windows (windows are independent).
void check_padding_and_crop(int64_t height, int64_t width, int64_t s) {
  const int64_t c = 32;
  auto attn = make("hilo", c, 4, {{"window", s}, {"alpha", 0.5}});
  const TokenLayout layout = attention::grid_layout(height, width);
  at::Tensor x = random_tokens(2, layout.tokens(), c, 5);
  auto [out, trace] = attn->forward_traced(x, layout);
  EXPECT_EQ(out.sizes(), x.sizes());
  EXPECT_TRUE(out.isfinite().all().item<bool>());
  const at::Tensor& hifi = trace->internal("hilo.hifi_out");
  EXPECT_EQ(hifi.sizes(), at::IntArrayRef({2, height, width, c / 2}));
  EXPECT_EQ(trace->internal("hilo.lofi_out").sizes(), at::IntArrayRef({2, height, width, c / 2}));
  const int64_t sub_h = height / s * s, sub_w = width / s * s;
  at::Tensor sub = x.reshape({2, height, width, c}).slice(1, 0, sub_h).slice(2, 0, sub_w);
  auto sub_trace =
      attn->forward_traced(sub.reshape({2, sub_h * sub_w, c}), attention::grid_layout(sub_h, sub_w))
          .trace;
  expect_close(max_abs_diff(hifi.slice(1, 0, sub_h).slice(2, 0, sub_w),
                            sub_trace->internal("hilo.hifi_out")),
               "hifi on whole windows of " + layout.describe());
}

TEST(HiLoAttention, PadsAndCropsA7x5GridWithWindow2) {
  check_padding_and_crop(7, 5, 2);
}

TEST(HiLoAttention, PadsAndCropsA3x4GridWithWindow3) {
  check_padding_and_crop(3, 4, 3);
}

TEST(HiLoAttention, LoFiRowOnTokensSumsToTheShareOfRealPositions) {
  const int64_t s = 3, height = 3, width = 4;  // padded 3×6, pooled 1×2
  auto attn = make("hilo", 32, 2, {{"window", s}, {"alpha", 0.5}});
  const TokenLayout layout = attention::grid_layout(height, width);
  auto [out, trace] = attn->forward_traced(random_tokens(1, layout.tokens(), 32, 9), layout);
  auto r = trace->row(0, 5, 1);
  ASSERT_EQ(r.keys.cell, s);
  ASSERT_EQ(r.weights.size(0), 2);
  at::Tensor on_tokens = attention::row_on_tokens(r, layout);
  ASSERT_EQ(on_tokens.size(0), layout.tokens());
  // Pooled key 0 covers 9 real positions, key 1 covers 3 real and 6 padding positions.
  const double expected = r.weights[0].item<double>() + r.weights[1].item<double>() * 3.0 / 9.0;
  EXPECT_NEAR(on_tokens.sum().item<double>(), expected, 1e-6);
  EXPECT_LT(on_tokens.sum().item<double>(), 1.0);
}

TEST(HiLoAttention, LofiHeadsAndAlphaChooseTheSplitAndBranchesWithoutHeadsHaveNoModules) {
  auto keys = [](const attention::AttentionMechanism& m) {
    std::string all;
    for (const auto& p : m.named_parameters()) all += p.key() + " ";
    return all;
  };
  // 12 heads, alpha 0.9: 10 Lo-Fi + 2 Hi-Fi (LITv2-S stage 3), d = 8.
  auto s3 = make("hilo", 96, 12);
  EXPECT_EQ(param(*s3, "l_q.weight").size(0), 80);
  EXPECT_EQ(param(*s3, "h_qkv.weight").size(0), 3 * 16);
  EXPECT_EQ(keys(*make("hilo", 32, 4, {{"lofi_heads", 0}})),
            "h_qkv.weight h_qkv.bias h_proj.weight h_proj.bias ");
  EXPECT_EQ(keys(*make("hilo", 32, 4, {{"lofi_heads", 4}, {"qkv_bias", 0}})),
            "l_q.weight l_kv.weight l_proj.weight l_proj.bias ");
  // All-Hi-Fi trace: one group, no Lo-Fi internals.
  auto hi = make("hilo", 32, 4, {{"alpha", 0}});
  auto trace = hi->forward_traced(random_tokens(1, 16, 32), attention::grid_layout(4, 4)).trace;
  ASSERT_EQ(trace->groups.size(), 1u);
  EXPECT_EQ(trace->groups[0].name, "hifi");
  EXPECT_FALSE(trace->has_internal("hilo.lofi_out"));
  EXPECT_FALSE(trace->has_internal("hilo.pooled"));
}

void expect_refused(const std::map<std::string, double>& options, const std::string& needle) {
  try {
    make("hilo", 32, 4, options);
    ADD_FAILURE() << "accepted options that should be refused (" << needle << ")";
  } catch (const attention::AttentionError& err) {
    const std::string msg = err.what();
    EXPECT_NE(msg.find("hilo"), std::string::npos) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
  }
}

TEST(HiLoAttention, RefusesBadOptionsAndPrefixTokens) {
  expect_refused({{"alpha", 1.5}}, "alpha");
  expect_refused({{"alpha", -0.1}}, "alpha");
  expect_refused({{"lofi_heads", 5}}, "lofi_heads = 5 exceeds the 4 heads");
  expect_refused({{"window", 0}}, "window");
  expect_refused({{"window", 1}, {"lofi_heads", 2}}, "window 1");
  auto attn = make("hilo", 32, 4);
  TokenLayout layout = attention::grid_layout(4, 4);
  layout.prefix = {"cls"};
  try {
    attn->forward(random_tokens(1, layout.tokens(), 32), layout);
    ADD_FAILURE() << "prefix tokens were accepted";
  } catch (const attention::AttentionError& err) {
    EXPECT_NE(std::string(err.what()).find("prefix"), std::string::npos) << err.what();
  }
}

}  // namespace
}  // namespace attnlab::testing
