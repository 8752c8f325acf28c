// The contract every registered mechanism keeps, checked generically over the registry:
// traced and untraced forwards agree, the trace covers every head, rows agree with the
// matrix, images in a batch are independent, gradients flow, bad input is refused with
// a message, and (when CUDA is present) the GPU computes what the CPU computes.
#include <ATen/ATen.h>

#include "core/analysis/anchors.h"
#include "core/attention/capabilities.h"
#include "core/attention/castling.h"
#include "core/runtime/device.h"
#include "tests/attention/attention_test_util.h"

namespace attnlab::testing {
namespace {

using attention::AttentionError;
using attention::TokenLayout;

constexpr int64_t kDim = 32;
constexpr int64_t kHeads = 2;

class EveryMechanism : public ::testing::TestWithParam<std::string> {
 protected:
  const attention::MechanismInfo& info() const { return attention::mechanism_info(GetParam()); }
};

TEST_P(EveryMechanism, TracedAndUntracedForwardsAgreeAndTheTraceCoversEveryHead) {
  at::manual_seed(1);
  auto m = make(GetParam(), kDim, kHeads);
  m->eval();
  const TokenLayout layout = registry_test_layout(info());
  at::Tensor x = random_tokens(2, layout.tokens(), kDim);
  at::Tensor plain = m->forward(x, layout);
  auto [traced, trace] = m->forward_traced(x, layout);
  EXPECT_EQ(plain.sizes(), x.sizes());
  EXPECT_LE(max_abs_diff(plain, traced), reordering_tolerance(plain));
  EXPECT_EQ(trace->mechanism, GetParam());
  EXPECT_EQ(trace->batch, 2);
  const int64_t heads = info().heads_are_channels ? kDim : kHeads;
  // Heads of C / heads dims each; a trace may have more of them (MechanismInfo::trace_heads).
  const int64_t all_heads = info().trace_heads ? info().trace_heads(m->config()) : heads;
  EXPECT_EQ(trace->heads, all_heads);
  // head_dim is the width of every trace head's values (and head_output): C / heads, unless
  // the trace splits a head's channels between trace heads (PolaFormer: two maps, d/2 each).
  if (!info().trace_heads) {
    EXPECT_EQ(trace->head_dim, kDim / heads);
  }
  int64_t covered = 0;
  for (const auto& g : trace->groups) {
    covered += g.num_heads;
    EXPECT_EQ(g.v.size(3), trace->head_dim) << g.name;
    EXPECT_EQ(g.q.size(1), g.num_heads) << g.name;
    EXPECT_EQ(g.k.size(2), g.keys.size()) << g.name << ": keys in k vs the key space";
    EXPECT_EQ(g.v.size(2), g.keys.size()) << g.name;
    EXPECT_FALSE(g.q.requires_grad()) << "trace tensors are detached";
  }
  EXPECT_EQ(covered, all_heads);
}

// The capabilities a mechanism declares reach its traces, and each one is really offered
// (and none is offered undeclared): analyses choose layers by them, never by name.
TEST_P(EveryMechanism, TheTraceOffersExactlyTheDeclaredCapabilities) {
  namespace cap = attention::capability;
  at::manual_seed(2);
  auto m = make(GetParam(), kDim, kHeads);
  m->eval();
  const TokenLayout layout = registry_test_layout(info());
  auto [out, trace] = m->forward_traced(random_tokens(1, layout.tokens(), kDim), layout);
  EXPECT_EQ(trace->capabilities, info().capabilities);
  EXPECT_EQ(trace->offers(cap::kBranchOutputs), !trace->branch_outputs().empty());
  EXPECT_EQ(trace->offers(cap::kKvBuffer), !trace->rank_matrices(0).empty());
  EXPECT_EQ(trace->offers(cap::kLocalWindows), trace->window > 0);
  bool anchors = true, mask = true;
  try {
    analysis::anchor_assignment(*trace, 0);
  } catch (const attention::TraceQueryError&) {
    anchors = false;
  }
  try {
    attention::castling_threshold(*trace);
  } catch (const attention::TraceQueryError&) {
    mask = false;
  }
  EXPECT_EQ(trace->offers(cap::kAnchorAssignment), anchors);
  EXPECT_EQ(trace->offers(cap::kAuxiliaryMask), mask);
  for (const auto& [branch, f] : trace->branch_outputs()) {
    EXPECT_EQ(f.dim(), 4) << branch << ": (B, H, W, C)";
    EXPECT_EQ(f.size(1), layout.height) << branch;
    EXPECT_EQ(f.size(2), layout.width) << branch;
  }
  // Signed rows: a mechanism without the capability gives no negative weight.
  if (!trace->offers(cap::kSignedRows)) {
    EXPECT_GE(trace->matrix(0, 0).min().item<double>(), -1e-6) << GetParam();
  }
}

// What a mechanism declares for small models is a set of its own, valid options.
TEST_P(EveryMechanism, SmallModelOptionsAreValidOptions) {
  std::map<std::string, double> options = info().small_model_options;
  EXPECT_NO_THROW(make(GetParam(), kDim, kHeads, options)) << GetParam();
}

TEST_P(EveryMechanism, RowsEqualTheMatrixRowsAndAreFinite) {
  auto m = make(GetParam(), kDim, kHeads);
  m->eval();
  const TokenLayout layout = registry_test_layout(info());
  auto [out, trace] = m->forward_traced(random_tokens(2, layout.tokens(), kDim), layout);
  for (int64_t h = 0; h < trace->heads; ++h) {
    at::Tensor full = trace->matrix(1, h);
    EXPECT_EQ(full.size(0), layout.tokens());
    EXPECT_TRUE(at::isfinite(full).all().item<bool>());
    for (int64_t q : {int64_t{0}, layout.tokens() / 2, layout.tokens() - 1}) {
      auto r = trace->row(1, q, h);
      EXPECT_EQ(r.weights.size(0), r.keys.size());
      EXPECT_LE(max_abs_diff(r.weights, full[q]), 1e-6) << "head " << h << " query " << q;
      EXPECT_EQ(attention::row_on_tokens(r, layout).size(0), layout.tokens());
    }
  }
  EXPECT_EQ(trace->rows_all_heads(0, 3).size(), static_cast<size_t>(trace->heads));
}

TEST_P(EveryMechanism, ImagesInABatchAreIndependent) {
  auto m = make(GetParam(), kDim, kHeads);
  m->eval();
  const TokenLayout layout = registry_test_layout(info());
  at::Tensor x = random_tokens(3, layout.tokens(), kDim);
  at::Tensor all = m->forward(x, layout);
  at::Tensor one = m->forward(x.slice(0, 1, 2), layout);
  EXPECT_LE(max_abs_diff(all.slice(0, 1, 2), one), 1e-5);
}

TEST_P(EveryMechanism, GradientsReachEveryParameter) {
  auto m = make(GetParam(), kDim, kHeads);
  m->train();
  const TokenLayout layout = registry_test_layout(info());
  at::Tensor x = random_tokens(1, layout.tokens(), kDim).requires_grad_(true);
  m->forward(x, layout).pow(2).sum().backward();
  for (const auto& p : m->named_parameters()) {
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    EXPECT_TRUE(at::isfinite(p.value().grad()).all().item<bool>()) << p.key();
  }
  EXPECT_TRUE(x.grad().defined());
}

TEST_P(EveryMechanism, RefusesInputThatDoesNotFitWithAMessage) {
  auto m = make(GetParam(), kDim, kHeads);
  const TokenLayout layout = registry_test_layout(info());
  auto message_of = [&](const at::Tensor& x, const TokenLayout& l) -> std::string {
    try {
      m->forward(x, l);
    } catch (const AttentionError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(message_of(at::randn({1, layout.tokens(), kDim + 1}), layout).find("channels"),
            std::string::npos);
  EXPECT_NE(message_of(at::randn({1, layout.tokens() + 1, kDim}), layout).find("tokens"),
            std::string::npos);
  EXPECT_NE(message_of(at::randn({layout.tokens(), kDim}), layout).find("(B, N, C)"),
            std::string::npos);
  if (info().needs_grid) {
    TokenLayout with_cls = layout;
    with_cls.prefix = {"cls"};
    EXPECT_NE(message_of(at::randn({1, with_cls.tokens(), kDim}), with_cls).find("prefix"),
              std::string::npos);
  }
  auto [out, trace] = m->forward_traced(at::randn({1, layout.tokens(), kDim}), layout);
  EXPECT_THROW(trace->row(0, layout.tokens(), 0), attention::TraceQueryError);
  EXPECT_THROW(trace->row(0, 0, trace->heads), attention::TraceQueryError);
  EXPECT_THROW(trace->row(1, 0, 0), attention::TraceQueryError);
  EXPECT_THROW(trace->matrix(0, 0, 4), attention::TraceQueryError);
}

TEST_P(EveryMechanism, CudaComputesWhatTheCpuComputes) {
  if (!runtime::cuda_available()) GTEST_SKIP() << "no CUDA device in this build / machine";
  auto m = make(GetParam(), kDim, kHeads);
  m->eval();
  const TokenLayout layout = registry_test_layout(info());
  at::Tensor x = random_tokens(2, layout.tokens(), kDim);
  auto [cpu_out, cpu_trace] = m->forward_traced(x, layout);
  at::Tensor cpu_row = cpu_trace->row(1, 5, kHeads - 1).weights;
  m->to(at::Device(at::kCUDA));
  auto [gpu_out, gpu_trace] = m->forward_traced(x.cuda(), layout);
  EXPECT_TRUE(gpu_out.is_cuda());
  EXPECT_TRUE(gpu_trace->groups[0].q.is_cuda()) << "the trace stays on the device";
  EXPECT_LE(max_abs_diff(gpu_out, cpu_out), 1e-4);
  EXPECT_LE(max_abs_diff(gpu_trace->row(1, 5, kHeads - 1).weights, cpu_row), 1e-4);
}

INSTANTIATE_TEST_SUITE_P(Registry, EveryMechanism,
                         ::testing::ValuesIn(attention::mechanism_names()),
                         [](const auto& p) { return p.param; });

TEST(MechanismRegistry, UnknownNamesAndOptionsAreRefusedWithWhatIsAccepted) {
  try {
    make("flash", 32, 2);
    FAIL() << "an unknown mechanism was accepted";
  } catch (const AttentionError& e) {
    EXPECT_NE(std::string(e.what()).find("softmax"), std::string::npos) << e.what();
  }
  try {
    make("softmax", 32, 2, {{"window", 2}});
    FAIL() << "an unknown option was accepted";
  } catch (const AttentionError& e) {
    EXPECT_NE(std::string(e.what()).find("qkv_bias"), std::string::npos) << e.what();
  }
  EXPECT_THROW(make("softmax", 32, 2, {{"qkv_bias", 0.5}}), AttentionError);
  EXPECT_THROW(make("softmax", 30, 4), AttentionError);  // heads do not divide dim
  EXPECT_THROW(make("softmax", 0, 1), AttentionError);
}

TEST(MechanismRegistry, EveryMechanismHasASummaryAndUniqueName) {
  std::set<std::string> seen;
  for (const auto& m : attention::mechanisms()) {
    EXPECT_FALSE(m.summary.empty()) << m.name;
    EXPECT_TRUE(seen.insert(m.name).second) << m.name;
    EXPECT_TRUE(static_cast<bool>(m.create)) << m.name;
  }
}

// option_text names a choice by its value and prints anything else as a number: a
// negative value (HiLo's lofi_heads -1, "from alpha") included, which UBSan once caught
// being converted to an index before it was checked (`mechanisms` printed it).
TEST(MechanismRegistry, OptionTextPrintsChoicesByNameAndOtherValuesAsNumbers) {
  using attention::option_text;
  using attention::OptionSpec;
  const OptionSpec choice("feature_map", OptionSpec::Kind::Choice, 0, 0, 1, "", {"elu", "relu"});
  EXPECT_EQ(option_text(choice, 1), "relu");
  EXPECT_EQ(option_text(choice, -1), "-1");
  EXPECT_EQ(option_text(choice, 2), "2");
  const OptionSpec integer("lofi_heads", OptionSpec::Kind::Integer, -1, -1, 1e9, "");
  EXPECT_EQ(option_text(integer, -1), "-1");
  EXPECT_EQ(option_text(integer, 3), "3");
}

}  // namespace
}  // namespace attnlab::testing
