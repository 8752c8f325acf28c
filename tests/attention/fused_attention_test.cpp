// The fused softmax attention (issue 51; core/attention/fused_attention.h): which path each
// forward takes, in this build and in one with LibTorch >= 2.0, and the fused kernel's
// numerics against the float64 truth wherever the build has it (skipped, and said, in a
// LibTorch 1.13 build; bench/gpu_check runs the same comparison against the eager path on
// the GPU machine's torch 2.x).
#include <gtest/gtest.h>
#include <torch/version.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "core/attention/fused_attention.h"
#include "core/attention/registry.h"
#include "core/runtime/mac_counter.h"
#include "tests/attention/attention_core_bound.h"
#include "tests/attention/attention_paths_during.h"
#include "tests/support/precision_skip.h"

namespace {

using namespace attnlab;
using attention::attention_path_counts;
using attnlab::testing::attention_paths_during;
using attnlab::testing::bound_excess;
using attnlab::testing::core_error_bound;
using attnlab::testing::core_truth;

std::shared_ptr<attention::AttentionMechanism> small_softmax() {
  attention::MechanismConfig c;
  c.dim = 16;
  c.heads = 2;
  auto m = attention::make_mechanism("softmax", c);
  m->eval();
  return m;
}

TEST(FusedAttention, TheGuardFollowsTheLibTorchVersion) {
  EXPECT_EQ(attention::fused_attention_built(), TORCH_VERSION_MAJOR >= 2)
      << attention::fused_attention_description();
  const std::string description = attention::fused_attention_description();
  EXPECT_NE(description.find(TORCH_VERSION), std::string::npos) << description;
  if (!attention::fused_attention_built()) {
    EXPECT_FALSE(attention::fused_attention_enabled());
    const at::Tensor q = at::randn({1, 2, 4, 8});
    try {
      attention::fused_softmax_attention(q, q, q, 0.5);
      FAIL() << "the fused path ran in a build without it";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("2.0"), std::string::npos) << e.what();
    }
  }
}

TEST(FusedAttention, AnUntracedForwardIsFusedWhereTheBuildHasIt) {
  auto m = small_softmax();
  const auto layout = attention::grid_layout(3, 3);
  const at::Tensor x = at::randn({2, 9, 16});
  at::NoGradGuard no_grad;
  const auto plain = attention_paths_during([&] { m->forward(x, layout); });
  const bool fused = attention::fused_attention_enabled();
  EXPECT_EQ(plain.fused, fused ? 1 : 0);
  EXPECT_EQ(plain.eager, fused ? 0 : 1);
  // A traced forward needs no matrix for its output either: its maps come from the
  // recorded q, k, v.
  const auto traced = attention_paths_during([&] { m->forward_traced(x, layout); });
  EXPECT_EQ(traced.fused, fused ? 1 : 0);
}

TEST(FusedAttention, TheExplicitFormCountingAndTheEagerScopeStayEager) {
  auto m = small_softmax();
  const auto layout = attention::grid_layout(3, 3);
  const at::Tensor x = at::randn({1, 9, 16});
  at::NoGradGuard no_grad;
  attention::TraceOptions o;
  o.explicit_attention = true;  // the output is computed from the matrices themselves
  EXPECT_EQ(attention_paths_during([&] { m->forward_traced(x, layout, o); }).fused, 0);
  {
    const runtime::MacCounter counter;  // a fused kernel would hide the two products
    EXPECT_EQ(attention_paths_during([&] { m->forward(x, layout); }).fused, 0);
  }
  {
    const attention::EagerAttentionScope eager;
    EXPECT_FALSE(attention::fused_attention_enabled());
    const auto c = attention_paths_during([&] { m->forward(x, layout); });
    EXPECT_EQ(c.fused, 0);
    EXPECT_EQ(c.eager, 1);
  }
}

TEST(FusedAttention, BothPathsMatchTheFloat64Truth) {
  at::manual_seed(3);
  struct Case {
    std::vector<int64_t> q, k;
    bool bias, scale_queries;
  };
  // (B, h, N, d) with N != K (SRA, Lo-Fi), Hi-Fi's and Swin's 5-d windows, with Swin's bias.
  const Case cases[] = {{{2, 3, 10, 8}, {2, 3, 10, 8}, false, false},
                        {{1, 2, 12, 8}, {1, 2, 3, 8}, false, false},
                        {{2, 2, 4, 9, 8}, {2, 2, 4, 9, 8}, false, false},
                        {{1, 2, 4, 9, 8}, {1, 2, 4, 9, 8}, true, true}};
  std::string refused;  // bf16, where this LibTorch cannot run it on the CPU: why
  for (const auto dtype : {at::kFloat, at::kBFloat16}) {
    if (dtype == at::kBFloat16) refused = runtime::precision_refusal(dtype, c10::Device(c10::kCPU));
    if (!refused.empty()) continue;
    const double u = attnlab::testing::unit_roundoff(dtype);
    for (const auto& c : cases) {
      const at::Tensor q = at::randn(c.q).to(dtype), k = at::randn(c.k).to(dtype);
      const at::Tensor v = at::randn(c.k).to(dtype);
      attention::ScoreForm form;
      form.scale_queries = c.scale_queries;
      if (c.bias) {  // (h, 1, N, N) bias, then a (windows, N, N) mask of 0 and -100
        const int64_t n = c.q[c.q.size() - 2];
        form.biases = {at::randn({c.q[1], 1, n, n}).to(dtype),
                       (at::rand({c.q[2], n, n}) > 0.7).to(dtype) * -100.0};
      }
      const double scale = 1.0 / std::sqrt(8.0);
      const at::Tensor want = core_truth(q, k, v, scale, form.biases);
      const at::Tensor tol = core_error_bound(q, k, v, scale, form.biases, c.scale_queries, u);
      const auto excess = [&](const at::Tensor& got) {
        EXPECT_EQ(got.scalar_type(), dtype);
        return bound_excess(got, want, tol);
      };
      EXPECT_LE(excess(attention::eager_softmax_attention(q, k, v, scale, form)), 0.0);
      if (attention::fused_attention_built()) {
        EXPECT_LE(excess(attention::fused_softmax_attention(q, k, v, scale, form)), 0.0);
      }
    }
  }
  if (!refused.empty()) GTEST_SKIP() << "fp32 checked; " << refused;
  if (!attention::fused_attention_built())
    GTEST_SKIP() << "eager checked; the fused path is not in this build: "
                 << attention::fused_attention_description();
}

}  // namespace
