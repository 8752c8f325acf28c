// Implicit rows are O(N·d): at N = 12544 tokens (a 112×112 grid) a row query of any
// mechanism must not allocate anything near an N×N tensor, and the forward of a
// mechanism registered as linear in tokens must not either. Measured with the counting
// CPU allocator (runtime::CpuMemoryProbe); a control shows the probe does see N×N.
#include <ATen/ATen.h>

#include "core/runtime/memory_probe.h"
#include "tests/attention/attention_test_util.h"

namespace attnlab::testing {
namespace {

constexpr int64_t kSide = 112;
constexpr int64_t kTokens = kSide * kSide;  // 12544
constexpr int64_t kRowMemoryDim = 32;
constexpr int64_t kRowMemoryHeads = 2;
// One N×N float32 matrix is 629 MB; allow a row query 1/100 of that (6.3 MB), which is
// still > 100× what an O(N·d) row needs here (N·d·4 B = 0.8 MB per head).
constexpr int64_t kNxNBytes = kTokens * kTokens * 4;
constexpr int64_t kRowBudget = kNxNBytes / 100;

TEST(RowMemory, TheProbeSeesAnNxNAllocation) {
  runtime::CpuMemoryProbe probe;
  const int64_t n = 1024;
  at::Tensor a = at::randn({n, 8});
  probe.reset_peak();
  at::Tensor scores = at::matmul(a, a.t());
  EXPECT_GE(probe.largest_block(), n * n * 4);
  EXPECT_GE(probe.live_bytes(), n * n * 4);
}

class LinearMechanismAt12544 : public ::testing::TestWithParam<std::string> {};

TEST_P(LinearMechanismAt12544, ForwardAndRowQueryAllocateNoNxNTensor) {
  auto m = make(GetParam(), kRowMemoryDim, kRowMemoryHeads);
  m->eval();
  at::NoGradGuard no_grad;
  const auto layout = attention::grid_layout(kSide, kSide);
  at::Tensor x = random_tokens(1, kTokens, kRowMemoryDim);

  runtime::CpuMemoryProbe probe;
  auto [out, trace] = m->forward_traced(x, layout);
  const int64_t forward_largest = probe.largest_block();
  EXPECT_LT(forward_largest, kNxNBytes / 16) << "forward allocated an N×N-sized block";

  const int64_t before = probe.live_bytes();
  probe.reset_peak();
  auto rows = trace->rows_all_heads(0, kTokens / 2 + kSide / 2);  // a central query
  EXPECT_EQ(rows.size(), static_cast<size_t>(trace->heads));
  EXPECT_EQ(rows[0].weights.size(0), kTokens);
  EXPECT_LT(probe.largest_block(), kRowBudget);
  EXPECT_LT(probe.peak_bytes() - before, kRowBudget);
  std::cout << "[ " << GetParam() << " ] N=" << kTokens << " forward largest block "
            << forward_largest << " B; row query peak " << (probe.peak_bytes() - before)
            << " B (an N×N matrix is " << kNxNBytes << " B)\n";
}

std::vector<std::string> linear_mechanisms() {
  std::vector<std::string> names;
  for (const auto& m : attention::mechanisms())
    if (m.linear_in_tokens) names.push_back(m.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Registry, LinearMechanismAt12544, ::testing::ValuesIn(linear_mechanisms()),
                         [](const auto& p) { return p.param; });

TEST(RowMemory, TheLinearMechanismsAreRegisteredAsLinear) {
  for (const char* name : {"linear", "castling", "rala", "anchor"})
    EXPECT_TRUE(attention::mechanism_info(name).linear_in_tokens) << name;
}

}  // namespace
}  // namespace attnlab::testing
