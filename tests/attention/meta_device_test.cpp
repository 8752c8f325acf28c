// Every registered mechanism on LibTorch's `meta` device (issue 28; tests/support/
// meta_device.h): its forward, traced forward, trace rows, whole matrix, products with
// the implicit attention, head outputs, KV-buffer matrices, branch outputs and explicit
// form run on meta tensors and give meta tensors, so none of them creates a tensor on a
// fixed device or copies to the CPU in the middle: what CUDA would refuse. A test-only
// mechanism with a deliberately fixed-device tensor shows that the check catches it.
#include <ATen/ATen.h>

#include <map>
#include <vector>

#include "core/attention/registry.h"
#include "tests/attention/attention_test_util.h"
#include "tests/support/meta_device.h"

namespace attnlab::testing {
namespace {

using attention::TokenLayout;

constexpr int64_t kMetaDeviceDim = 32;
constexpr int64_t kMetaDeviceHeads = 2;

// Each part of a mechanism's use and what it gave on meta: every tensor it returns must be
// a meta tensor too (a fixed-device tensor returned as is mixes nothing, but is wrong).
std::map<std::string, MetaOutcome> run_on_meta(attention::AttentionMechanism& m,
                                               const TokenLayout& layout) {
  std::map<std::string, MetaOutcome> parts;
  const at::Tensor x = meta_tensor({2, layout.tokens(), kMetaDeviceDim});
  const auto part = [&](const std::string& name,
                        const std::function<std::vector<at::Tensor>()>& f) {
    parts[name] = meta_outcome([&] {
      for (const at::Tensor& t : f())
        if (t.defined() && !t.is_meta())
          throw std::runtime_error("returned a tensor on " + t.device().str() +
                                   ", not on the input's device (same device expected)");
    });
  };
  part("forward", [&] { return std::vector<at::Tensor>{m.forward(x, layout)}; });
  std::shared_ptr<const attention::AttentionTrace> trace;
  part("forward_traced", [&] {
    auto r = m.forward_traced(x, layout);
    trace = r.trace;
    std::vector<at::Tensor> out{r.output};
    for (const auto& g : trace->groups) out.insert(out.end(), {g.q, g.k, g.v});
    for (const auto& [name, t] : trace->internals) out.push_back(t);
    return out;
  });
  if (!trace) return parts;
  const int64_t last = trace->heads - 1, n = layout.tokens();
  part("row", [&] { return std::vector<at::Tensor>{trace->row(1, n - 1, last).weights}; });
  // Query indices are the caller's host list (rows() checks their range there).
  part("rows",
       [&] { return std::vector<at::Tensor>{trace->rows(0, 0, at::arange(3, at::kLong))}; });
  part("matrix", [&] { return std::vector<at::Tensor>{trace->matrix(0, last)}; });
  part("apply", [&] {
    return std::vector<at::Tensor>{trace->apply(0, 0, meta_tensor({n, 3})),
                                   trace->apply_transposed(1, last, meta_tensor({n}))};
  });
  part("head_output", [&] { return std::vector<at::Tensor>{trace->head_output(1, last)}; });
  part("rank_matrices", [&] {
    std::vector<at::Tensor> out;
    for (const auto& r : trace->rank_matrices(1)) out.push_back(r.matrices);
    return out;
  });
  part("branch_outputs", [&] {
    std::vector<at::Tensor> out;
    for (const auto& [name, t] : trace->branch_outputs()) out.push_back(t);
    for (const auto& [name, t] : trace->reference_outputs()) out.push_back(t);
    return out;
  });
  part("explicit_form", [&] {
    attention::TraceOptions o;
    o.explicit_attention = true;
    auto r = m.forward_traced(x, layout, o);
    std::vector<at::Tensor> out{r.output};
    out.insert(out.end(), r.trace->explicit_rows.begin(), r.trace->explicit_rows.end());
    return out;
  });
  return parts;
}

class EveryMechanismOnMeta : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryMechanismOnMeta, EveryPartRunsOnTheDeviceOfItsInput) {
  const auto& info = attention::mechanism_info(GetParam());
  auto m = make(GetParam(), kMetaDeviceDim, kMetaDeviceHeads);
  m->eval();
  move_to_meta(*m);
  for (const auto& p : m->parameters()) ASSERT_TRUE(p.is_meta());
  for (const auto& [part, outcome] : run_on_meta(*m, registry_test_layout(info)))
    EXPECT_TRUE(outcome.ok()) << GetParam() << " " << part << ": " << outcome.describe();
}

INSTANTIATE_TEST_SUITE_P(Registry, EveryMechanismOnMeta,
                         ::testing::ValuesIn(attention::mechanism_names()),
                         [](const auto& p) { return p.param; });

// A mechanism with the classic bug: a bias made with at::ones(n), on the CPU whatever the
// tokens' device. On the CPU it works; on meta (and CUDA) it cannot.
class FixedDeviceBias : public attention::AttentionMechanism {
 public:
  FixedDeviceBias() : AttentionMechanism("softmax", config()) {}
  static attention::MechanismConfig config() {
    attention::MechanismConfig c;
    c.dim = kMetaDeviceDim;
    c.heads = kMetaDeviceHeads;
    return c;
  }

 protected:
  at::Tensor run(const at::Tensor& tokens, const TokenLayout&, TraceRequest*) override {
    return tokens + at::ones({tokens.size(1), 1});  // the bug: no tokens.options()
  }
};

TEST(MetaDevice, CatchesATensorMadeOnAFixedDevice) {
  FixedDeviceBias m;
  const TokenLayout layout = attention::grid_layout(6, 4);
  EXPECT_NO_THROW(
      m.forward(at::randn({1, layout.tokens(), kMetaDeviceDim}), layout));  // fine on CPU
  const MetaOutcome o = meta_outcome([&] {
    m.forward(meta_tensor({1, layout.tokens(), kMetaDeviceDim}), layout);
  });
  EXPECT_EQ(o.kind, MetaOutcome::DeviceMixed) << o.describe();
}

TEST(MetaDevice, SortsWhatWentWrong) {
  // A copy to the CPU reads values; an op without a meta kernel is named.
  EXPECT_EQ(meta_outcome([] { (void)meta_tensor({3}).sum().item<float>(); }).kind,
            MetaOutcome::ReadsValues);
  const MetaOutcome none = classify_meta_error(
      "Could not run 'aten::bincount' with arguments from the 'Meta' backend. This could be");
  EXPECT_EQ(none.kind, MetaOutcome::NoMetaKernel);
  EXPECT_EQ(none.op, "aten::bincount");
  // LibTorch 2.x words it otherwise.
  const MetaOutcome two = classify_meta_error(
      "aten::where.self_out: attempted to run this operator with Meta tensors, but there was "
      "no fake impl or Meta kernel registered.");
  EXPECT_EQ(two.kind, MetaOutcome::NoMetaKernel);
  EXPECT_EQ(two.op, "aten::where.self_out");
  EXPECT_TRUE(meta_outcome([] { (void)(meta_tensor({2, 3}) * 2).softmax(-1); }).ok());
}

}  // namespace
}  // namespace attnlab::testing
