// The explicit form of every registered mechanism (TraceOptions::explicit_attention): the
// layer's output computed from its implicit attention materialised as (N, K) matrices must
// equal the ordinary forward (≤ 1e-5), and gradients through it must equal the ordinary
// forward's, so that gradient-weighted rollout explains the real layer. A mechanism added
// to the registry is checked here without touching this file.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdio>
#include <string>

#include "core/attention/registry.h"
#include "tests/attention/attention_test_util.h"

namespace attnlab::testing {
namespace {

using attention::TokenLayout;

// Grid-only mechanisms get a 5×7 grid (odd, so HiLo pads); the others a cls token too.
TokenLayout layout_for(const attention::MechanismInfo& info) {
  TokenLayout layout;
  layout.height = 5;
  layout.width = 7;
  if (!info.needs_grid) layout.prefix = {"cls"};
  return layout;
}

struct Outputs {
  at::Tensor out, input_grad;
  std::shared_ptr<const attention::AttentionTrace> trace;
};

Outputs run(attention::AttentionMechanism& m, const at::Tensor& x, const TokenLayout& layout,
            bool explicit_form) {
  at::Tensor input = x.detach().clone().requires_grad_(true);
  attention::TraceOptions options;
  options.explicit_attention = explicit_form;
  auto [out, trace] = m.forward_traced(input, layout, options);
  for (const at::Tensor& rows : trace->explicit_rows) rows.retain_grad();
  // A fixed, non-symmetric readout so every output entry matters to the gradient.
  const at::Tensor readout = at::sin(at::arange(out.numel(), at::kFloat)).view(out.sizes());
  (out * readout).sum().backward();
  return {out.detach(), input.grad(), trace};
}

class ExplicitForm : public ::testing::TestWithParam<std::string> {};

TEST_P(ExplicitForm, EqualsTheForwardAndItsGradients) {
  const attention::MechanismInfo& info = attention::mechanism_info(GetParam());
  const TokenLayout layout = layout_for(info);
  for (bool training : {false, true}) {
    torch::manual_seed(7);
    auto m = make(GetParam(), 16, 2);
    m->train(training);  // Castling's sparse branch only runs in training mode
    const at::Tensor x = at::randn({2, layout.tokens(), 16});
    const Outputs plain = run(*m, x, layout, false);
    const Outputs expl = run(*m, x, layout, true);
    SCOPED_TRACE(GetParam() + (training ? " (training)" : " (eval)"));
    const double out_delta = max_abs_diff(plain.out, expl.out);
    const double grad_delta = max_abs_diff(plain.input_grad, expl.input_grad);
    std::printf("[explicit] %s%s: max|out delta| = %.3g, max|input-gradient delta| = %.3g\n",
                GetParam().c_str(), training ? " (training)" : "", out_delta, grad_delta);
    EXPECT_LE(out_delta, 1e-5);
    EXPECT_LE(grad_delta, 1e-4);
    EXPECT_GT(plain.input_grad.abs().max().item<double>(), 1e-3);

    // One explicit matrix per head, (B, N, K), carrying autograd history.
    EXPECT_TRUE(plain.trace->explicit_rows.empty());
    ASSERT_EQ(static_cast<int64_t>(expl.trace->explicit_rows.size()), expl.trace->heads);
    for (int64_t h = 0; h < expl.trace->heads; ++h) {
      const at::Tensor& rows = expl.trace->explicit_rows[static_cast<size_t>(h)];
      EXPECT_EQ(rows.sizes(),
                (at::IntArrayRef{2, layout.tokens(), expl.trace->group_of(h).keys.size()}));
      // The output was computed from this very tensor: the readout's gradient reaches it.
      ASSERT_TRUE(rows.grad().defined());
      EXPECT_GT(rows.grad().abs().max().item<double>(), 1e-4);
      EXPECT_LE(max_abs_diff(rows[1].detach(), plain.trace->matrix(1, h)), 1e-6);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryMechanism, ExplicitForm,
                         ::testing::ValuesIn(attention::mechanism_names()),
                         [](const auto& p) { return p.param; });

TEST(ExplicitFormLimits, RefusesLayersAboveTheTokenLimit) {
  auto m = make("linear", 8, 2);
  TokenLayout layout;
  layout.height = 65;
  layout.width = 64;  // 4160 tokens > 4096
  attention::TraceOptions options;
  options.explicit_attention = true;
  const at::Tensor x = at::randn({1, layout.tokens(), 8});
  try {
    m->forward_traced(x, layout, options);
    FAIL() << "a 4160-token layer was run through its explicit form";
  } catch (const attention::AttentionError& e) {
    EXPECT_NE(std::string(e.what()).find("4096"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("4160"), std::string::npos) << e.what();
  }
  // The ordinary traced forward of the same layer is unaffected.
  EXPECT_NO_THROW(m->forward_traced(x, layout));
}

}  // namespace
}  // namespace attnlab::testing
