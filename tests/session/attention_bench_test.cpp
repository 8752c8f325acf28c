// bench-attention's achieved rates (issue 28): each point counts the MACs and the bytes one
// forward needs, at the precision it ran at, and the table sets the rates they give
// against the device's peaks measured in the same run. The counts are checked against the
// softmax layer's formula, so a change to what is counted shows here, on any machine (the
// times themselves are not asserted: they are the machine's).
#include <gtest/gtest.h>

#include <cmath>

#include <torch/version.h>

#include <string>

#include "app/session/attention_bench.h"
#include "core/attention/fused_attention.h"
#include "core/attention/mechanism.h"
#include "core/runtime/device_peaks.h"
#include "tests/support/precision_skip.h"

namespace {

using namespace attnlab;

TEST(AttentionBench, CountsTheWorkOfAForwardAtItsPrecision) {
  session::AttentionBenchSettings s;
  s.mechanisms = {"softmax"};
  s.fused_row = false;  // softmax alone, whatever the build
  s.sides = {4};
  s.dim = 16;
  s.heads = 2;
  s.repeats = 1;
  for (const c10::ScalarType dtype : {c10::kFloat, c10::kBFloat16}) {
    s.dtype = dtype;
    if (const std::string refused = runtime::precision_refusal(dtype, s.device);
        !refused.empty()) {  // refused with the probe's reason, before any row is measured
      try {
        session::bench_attention(s);
        ADD_FAILURE() << "the bench ran though " << refused;
      } catch (const std::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()), refused);
      }
      GTEST_SKIP() << "fp32 checked; " << refused;
    }
    const auto points = session::bench_attention(s);
    ASSERT_EQ(points.size(), 1u);
    const auto& p = points[0];
    ASSERT_TRUE(p.error.empty()) << p.error;
    const int64_t n = 16, c = 16;
    // qkv (N·C·3C) and the output projection (N·C·C), scores and aggregation (N²·C each).
    EXPECT_EQ(p.macs, n * c * 3 * c + n * c * c + 2 * n * n * c);
    // Input and output (N·C each), qkv's and proj's weights and biases, at 4 or 2 bytes.
    const int64_t elements = 2 * n * c + (3 * c * c + 3 * c) + (c * c + c);
    EXPECT_EQ(p.bytes, elements * (dtype == c10::kFloat ? 4 : 2));
    EXPECT_GT(p.median_ms, 0.0);
  }
}

TEST(AttentionBench, TheTableSetsTheRatesAgainstTheMeasuredPeaks) {
  session::AttentionBenchSettings s;
  s.mechanisms = {"softmax", "linear"};
  s.fused_row = false;
  s.sides = {4};
  s.dim = 16;
  s.heads = 2;
  s.repeats = 1;
  const auto points = session::bench_attention(s);
  const auto plain = session::attention_bench_table(points, s);
  EXPECT_EQ(plain.columns.size(), 7u);  // without peaks: no rate columns
  runtime::DevicePeaks peaks;
  peaks.gflops = 100.0;
  peaks.gbytes_per_s = 10.0;
  peaks.gemm_n = 1024;
  const auto t = session::attention_bench_table(points, s, &peaks);
  ASSERT_EQ(t.columns.size(), 11u);
  EXPECT_EQ(t.columns[7], "GFLOP_per_s");
  EXPECT_EQ(t.columns[10], "of_peak_GB_per_s");
  EXPECT_NE(t.caption.find("1024^2 GEMM: 100 GFLOP/s"), std::string::npos) << t.caption;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const auto& p = points[r];
    const double seconds = p.median_ms / 1e3;
    EXPECT_DOUBLE_EQ(t.rows[r][7].number(), 2.0 * double(p.macs) / seconds / 1e9);
    EXPECT_DOUBLE_EQ(t.rows[r][8].number(), t.rows[r][7].number() / 100.0);
    EXPECT_DOUBLE_EQ(t.rows[r][9].number(), double(p.bytes) / seconds / 1e9);
    EXPECT_DOUBLE_EQ(t.rows[r][10].number(), t.rows[r][9].number() / 10.0);
  }
}

// With LibTorch >= 2.0 the fused softmax is a row of its own, counted as softmax (its warm-up
// counts eagerly: a fused kernel hides the products), and every row has its ratio to it; in a
// 1.13 build there is no such row, and naming it says why.
TEST(AttentionBench, TheFusedBaselineIsARowWhereTheBuildHasIt) {
  session::AttentionBenchSettings s;
  s.mechanisms = {"softmax", "linear"};
  s.sides = {4};
  s.dim = 16;
  s.heads = 2;
  s.repeats = 1;
  const bool built = attention::fused_attention_built();
  const auto rows = session::bench_rows(s);
  ASSERT_EQ(rows.size(), built ? 3u : 2u);
  if (!built) {
    s.mechanisms = {"softmax", session::kFusedRow};
    try {
      session::bench_rows(s);
      FAIL() << "sdpa was accepted without the fused kernel";
    } catch (const attention::AttentionError& e) {
      EXPECT_NE(std::string(e.what()).find(TORCH_VERSION), std::string::npos) << e.what();
    }
    GTEST_SKIP() << attention::fused_attention_description();
  }
  EXPECT_EQ(rows.back(), session::kFusedRow);
  const auto points = session::bench_attention(s);
  ASSERT_EQ(points.size(), 3u);
  for (const auto& p : points) ASSERT_TRUE(p.error.empty()) << p.mechanism << ": " << p.error;
  EXPECT_EQ(points[2].macs, points[0].macs);  // the same layer's work, counted the same
  const auto t = session::attention_bench_table(points, s);
  ASSERT_EQ(t.columns.size(), 9u);
  EXPECT_EQ(t.columns[7], "latency_vs_sdpa");
  EXPECT_DOUBLE_EQ(t.rows[2][7].number(), 1.0);  // sdpa against itself
  EXPECT_DOUBLE_EQ(t.rows[0][7].number(), points[0].median_ms / points[2].median_ms);
}

TEST(DevicePeaks, TheCpuPeaksAreMeasuredAndFinite) {
  const runtime::DevicePeaks p =
      runtime::measure_device_peaks(c10::Device(c10::kCPU), c10::kFloat, 1);
  EXPECT_EQ(p.gemm_n, 1024);
  EXPECT_EQ(p.copy_bytes, int64_t(64) << 20);
  EXPECT_TRUE(std::isfinite(p.gflops) && p.gflops > 0.0) << p.gflops;
  EXPECT_TRUE(std::isfinite(p.gbytes_per_s) && p.gbytes_per_s > 0.0) << p.gbytes_per_s;
}

}  // namespace
