// The complexity report's counts against the closed-form per-layer formulas, written out
// here from each mechanism's definition (SPEC §1.1, §1.5; SPEC_COMPARISON SRA and Swin),
// not from the tool's output: one ViT-B layer (C = 768, 12 heads of 64) on 14×14 tokens,
// the setting of HiLo's complexity comparison. Counts are integers, so they must be equal.
#include <gtest/gtest.h>

#include "app/session/complexity.h"
#include "core/runtime/mac_counter.h"

namespace attnlab::testing {
namespace {

constexpr int64_t C = 768, N = 196;

int64_t group(const session::ComplexityRun& run, const char* g) {
  return run.group_macs(g);
}

TEST(Complexity, SoftmaxAttentionIsFourNCSquaredPlusTwoNSquaredC) {
  const auto run = session::count_mechanism("softmax", C, 12, {}, 14, 14);
  EXPECT_EQ(group(run, "projections"), 4 * N * C * C);  // qkv 3NC² + proj NC²
  EXPECT_EQ(group(run, "scores"), N * N * C);           // q·kᵀ over 12 heads of 64
  EXPECT_EQ(group(run, "aggregation"), N * N * C);      // A·v
  EXPECT_EQ(run.total_macs(), 4 * N * C * C + 2 * N * N * C);
  EXPECT_EQ(run.params, 4 * C * C + 4 * C);  // qkv and proj weights and biases
  ASSERT_EQ(run.layers.size(), 1u);          // all of it inside the attention layer
  EXPECT_EQ(run.layers[0].name, "softmax");
}

TEST(Complexity, SpatialReductionCountsItsConvNormAndTheReducedKeys) {
  const int64_t r = 2, m = N / (r * r);  // 7×7 reduced keys
  const auto run = session::count_mechanism("sra", C, 12, {{"sr_ratio", r}}, 14, 14);
  EXPECT_EQ(group(run, "projections"), N * C * C + 2 * m * C * C + N * C * C);  // q, kv, proj
  EXPECT_EQ(group(run, "convs"), m * C * C * r * r);  // sr: one C×C×R×R conv per reduced key
  EXPECT_EQ(group(run, "norms"), m * C);
  EXPECT_EQ(group(run, "scores"), N * m * C);
  EXPECT_EQ(group(run, "aggregation"), N * m * C);
}

TEST(Complexity, LocalWindowAttentionScoresEachTokenAgainstItsWindow) {
  // Swin's W-MSA with 7×7 windows on 14×14: every query against its 49 window keys; the
  // relative position bias is an addition (not counted).
  const auto run = session::count_mechanism("swin", C, 12, {{"window", 7}}, 14, 14);
  EXPECT_EQ(group(run, "projections"), 4 * N * C * C);
  EXPECT_EQ(group(run, "scores"), N * 49 * C);
  EXPECT_EQ(group(run, "aggregation"), N * 49 * C);
}

TEST(Complexity, HiLoSplitsTheHeadsBetweenWindowsAndPooledKeys) {
  // alpha 0.9: l = floor(12·0.9) = 10 Lo-Fi heads (640 channels), 2 Hi-Fi heads (128).
  const int64_t lo = 640, hi = 128, s = 2, pooled = N / (s * s);
  const auto run = session::count_mechanism("hilo", C, 12, {{"window", s}, {"alpha", 0.9}}, 14, 14);
  const int64_t lofi_proj = N * C * lo + pooled * C * 2 * lo + N * lo * lo;
  const int64_t hifi_proj = N * C * 3 * hi + N * hi * hi;
  EXPECT_EQ(group(run, "projections"), lofi_proj + hifi_proj);
  EXPECT_EQ(group(run, "scores"), N * pooled * lo + N * s * s * hi);
  EXPECT_EQ(group(run, "aggregation"), N * pooled * lo + N * s * s * hi);
}

TEST(Complexity, AModelCountsEveryLayerAndTheRest) {
  session::ModelRequest request;
  request.model = "deit_tiny_patch16_224";
  const auto run = session::count_model(request, 0, 0);
  EXPECT_EQ(run.height, 224);
  ASSERT_EQ(run.layers.size(), 13u);  // 12 attention layers, then the rest
  EXPECT_EQ(run.layers.back().name, "");
  // DeiT-Tiny: C = 192, 197 tokens; each attention layer 4NC² + 2N²C.
  const int64_t c = 192, n = 197;
  for (size_t i = 0; i < 12; ++i) EXPECT_EQ(run.layers[i].total(), 4 * n * c * c + 2 * n * n * c);
  // The rest: patch embedding conv (196 patches × 192 × 3·16·16), 12 MLPs (2·n·c·4c),
  // 25 LayerNorms over (n, c), the head (c × 1000) on the class token.
  const int64_t rest = 196 * c * 3 * 16 * 16 + 12 * 2 * n * c * 4 * c + 25 * n * c + c * 1000;
  EXPECT_EQ(run.layers.back().total(), rest);
  EXPECT_EQ(run.params, 5717416);  // DeiT-Tiny's published 5.7 M, exactly as timm counts
}

TEST(Complexity, NothingIsCountedOutsideACounterAndCountersDoNotLeak) {
  EXPECT_FALSE(runtime::counting_macs());
  { runtime::MacCounter counter; EXPECT_TRUE(runtime::counting_macs()); }
  EXPECT_FALSE(runtime::counting_macs());
}

}  // namespace
}  // namespace attnlab::testing
