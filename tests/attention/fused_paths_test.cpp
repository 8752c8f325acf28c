// Issue 65: which path each forward of a softmax-core mechanism takes. The forms whose output
// or bookkeeping needs the attention matrices — the explicit form (TraceOptions::
// explicit_attention: the output computed from the matrices), a forward whose operations a
// runtime::MacCounter counts (a fused kernel hides the two products), and any forward in an
// EagerAttentionScope — never take the fused path, for every mechanism that calls the core;
// the plain and the traced forward of the same layers do where the build has it, so the
// counts below do see a fused call when there is one.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>

#include "core/attention/fused_attention.h"
#include "core/runtime/mac_counter.h"
#include "tests/attention/attention_paths_during.h"
#include "tests/attention/attention_test_util.h"
#include "tests/attention/fused_mechanism_cases.h"

namespace attnlab::testing {
namespace {

// The cases cover every registered mechanism whose forward calls the core (each run once
// with its default options, as the registry-wide tests run them), and no other.
TEST(FusedPaths, EveryMechanismThatCallsTheCoreHasACase) {
  std::set<std::string> calling, cased;
  at::NoGradGuard no_grad;
  for (const auto& info : attention::mechanisms()) {
    auto m = make(info.name, 32, 2);
    m->eval();
    const attention::TokenLayout layout = registry_test_layout(info);
    const at::Tensor x = random_tokens(1, layout.tokens(), 32);
    const auto c = attention_paths_during([&] { m->forward(x, layout); });
    if (c.fused + c.eager > 0) calling.insert(info.name);
  }
  for (const FusedCase& c : fused_cases()) cased.insert(c.mechanism);
  EXPECT_EQ(calling, cased);
}

TEST(FusedPaths, FormsThatNeedTheMatricesNeverTakeTheFusedPath) {
  const std::string unavailable = fused_path_unavailable();
  const bool fused = unavailable.empty();
  at::NoGradGuard no_grad;
  for (const FusedCase& c : fused_cases()) {
    SCOPED_TRACE(c.label);
    auto m = make_fused_case(c);
    const int64_t calls = int64_t(c.projections.size());
    const at::Tensor x = random_tokens(1, c.layout.tokens(), kFusedCaseDim);
    const std::function<void()> forwards[] = {[&] { m->forward(x, c.layout); },
                                              [&] { m->forward_traced(x, c.layout); }};
    for (const auto& forward : forwards) {  // the control: fused where it can be
      const auto p = attention_paths_during(forward);
      EXPECT_EQ(p.fused, fused ? calls : 0);
      EXPECT_EQ(p.eager, fused ? 0 : calls);
    }
    attention::TraceOptions explicit_form;
    explicit_form.explicit_attention = true;
    const auto e = attention_paths_during([&] { m->forward_traced(x, c.layout, explicit_form); });
    EXPECT_EQ(e.fused, 0) << "the explicit form reached the fused core";
    EXPECT_EQ(e.eager, 0) << "the explicit form computed the core's output it replaces";
    {
      const runtime::MacCounter counter;
      for (const auto& forward : forwards) {
        const auto p = attention_paths_during(forward);
        EXPECT_EQ(p.fused, 0) << "a counted forward took the fused path";
        EXPECT_EQ(p.eager, calls);
      }
    }
    {
      const attention::EagerAttentionScope eager;
      for (const auto& forward : forwards) {
        const auto p = attention_paths_during(forward);
        EXPECT_EQ(p.fused, 0) << "a forward in an EagerAttentionScope took the fused path";
        EXPECT_EQ(p.eager, calls);
      }
    }
  }
  if (!fused)
    GTEST_SKIP() << "every forward checked, but none could take a fused path here: " << unavailable;
}

}  // namespace
}  // namespace attnlab::testing
