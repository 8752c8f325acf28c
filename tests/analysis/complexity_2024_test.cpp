// The complexity report's counts for the 2023–25 mechanisms against their closed forms,
// written out here from SPEC_COMPARISON's definitions (not from the tool's output), for the
// same ViT-B layer as complexity_test.cpp (C = 768, 12 heads of d = 64, 14×14 tokens) with
// every option at its default. Counts are integers, so they must be equal. The table in
// docs/COMPLEXITY.md ("The 2023–25 mechanisms") is these numbers.
#include <gtest/gtest.h>

#include "app/session/complexity.h"

namespace attnlab::testing {
namespace {

constexpr int64_t kC = 768, kN = 196, kD = 64, kSide = 14;

int64_t macs(const session::ComplexityRun& run, const char* g) {
  return run.group_macs(g);
}

TEST(Complexity2024, AgentAttentionGoesThroughFortyNineAgents) {
  const int64_t a = 49, p = 7;  // agent_num 49: the grid's queries pooled to 7×7
  for (const char* name : {"agent", "agent_pvt"}) {
    SCOPED_TRACE(name);
    const auto run = session::count_mechanism(name, kC, 12, {}, kSide, kSide);
    EXPECT_EQ(macs(run, "projections"), 4 * kN * kC * kC);  // q, k, v, proj
    // agents·kᵀ (A × N per channel) and q·agentsᵀ (N × A).
    EXPECT_EQ(macs(run, "scores"), 2 * kN * a * kC);
    // agent_attn·v and q_attn·V_a, plus the pooling written as (p×H)·X·(W×p) per channel.
    EXPECT_EQ(macs(run, "aggregation"), 2 * kN * a * kC + kC * p * (kSide * kSide + kSide * p));
    EXPECT_EQ(macs(run, "convs"), 9 * kN * kC);  // the depthwise 3×3 on v
  }
}

TEST(Complexity2024, MllaHasNoValueOrOutputProjection) {
  const auto run = session::count_mechanism("mlla", kC, 12, {}, kSide, kSide);
  EXPECT_EQ(macs(run, "projections"), 2 * kN * kC * kC);  // qk only: v = x
  // Σ rope(φk)ᵀ v and rope(φq)·kv (N·d·d per head each), and the normaliser φq·mean φk.
  EXPECT_EQ(macs(run, "aggregation"), 2 * kN * kD * kC + kN * kC);
  EXPECT_EQ(macs(run, "scores"), 0);
  EXPECT_EQ(macs(run, "convs"), 9 * kN * kC);  // LePE
}

TEST(Complexity2024, InlineAddsAPredictedDepthwiseKernel) {
  const auto run = session::count_mechanism("inline", kC, 12, {}, kSide, kSide);
  EXPECT_EQ(macs(run, "projections"), 4 * kN * kC * kC);
  EXPECT_EQ(macs(run, "aggregation"), 2 * kN * kD * kC + kN * kC);  // Σkᵀv, q·kv, q·k̄
  // The residual's grouped 1×1 convs on the one mean token (C → C, C → 9C, groups of d
  // inputs), then each image's 3×3 depthwise kernels on the grid.
  EXPECT_EQ(macs(run, "convs"), kC * kD + 9 * kC * kD + 9 * kN * kC);
}

TEST(Complexity2024, PolaFormerMixesTwoMapsPerHead) {
  const auto run = session::count_mechanism("pola", kC, 12, {}, kSide, kSide);
  EXPECT_EQ(macs(run, "projections"), 5 * kN * kC * kC);  // qg, kv (2C each), proj
  // Per map and head: Σ φkᵀ v_half (N·2d·d/2), φq·kv (the same), φq·mean φk (N·2d).
  EXPECT_EQ(macs(run, "aggregation"), 2 * (2 * kN * kD * kC + 2 * kN * kC));
  EXPECT_EQ(macs(run, "convs"), 25 * kN * kC);  // the 5×5 dwc, weights shared by the heads
}

TEST(Complexity2024, BiformerScoresOnlyTheRoutedRegions) {
  // n_win 7 on 14×14: 49 regions of 2×2 pixels, each routed to topk 4 of them.
  const int64_t regions = 49, w2 = 4, k = 4;
  const auto run = session::count_mechanism("biformer", kC, 12, {}, kSide, kSide);
  EXPECT_EQ(macs(run, "projections"), 4 * kN * kC * kC);  // qkv (2·qk + C) with qk = C, wo
  // Region-level routing logits (S² × S² over qk = C), then every pixel against k·w² keys.
  EXPECT_EQ(macs(run, "scores"), regions * regions * kC + kN * k * w2 * kC);
  EXPECT_EQ(macs(run, "aggregation"), kN * k * w2 * kC);
  EXPECT_EQ(macs(run, "convs"), 9 * kN * kC);  // LePE, side 3
}

TEST(Complexity2024, DeformableAttentionScoresTheSampledPoints) {
  const int64_t samples = kN;  // stride 1: one sample per position
  const auto run = session::count_mechanism("dat", kC, 12, {}, kSide, kSide);
  EXPECT_EQ(macs(run, "projections"), 4 * kN * kC * kC);  // proj_q, k, v, out (1×1)
  EXPECT_EQ(macs(run, "scores"), kN * samples * kC);
  EXPECT_EQ(macs(run, "aggregation"), kN * samples * kC);
  // The offset network: depthwise 3×3 on the queries, then Cg → 2 offsets per sample.
  EXPECT_EQ(macs(run, "convs"), 9 * kN * kC + 2 * kC * samples);
  EXPECT_EQ(macs(run, "norms"), samples * kC);  // its LayerNorm over the channels
}

}  // namespace
}  // namespace attnlab::testing
