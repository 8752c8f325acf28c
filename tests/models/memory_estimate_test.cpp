// The forward's memory estimate (models/memory_estimate.h) against the peaks LibTorch's
// CPU allocator really reaches (runtime::CpuMemoryProbe), the budget check Backbone::run
// makes, and the budget's size parsing (core/runtime/memory_budget.h).
//
// The estimate is meant to err on the high side and stay within a small factor: the
// tests require measured ≤ estimate ≤ 4 × measured (it is 1.1–2.4 × here). Allocation sizes follow
// from the shapes alone, but the kernels' temporaries may differ between CPUs and thread counts;
// the factor leaves room for that while still failing an estimate that forgot a term
// (scores missed: far below) or counted one per head too many (far above).
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "core/attention/fused_attention.h"
#include "core/runtime/memory_budget.h"
#include "core/runtime/memory_probe.h"
#include "models/memory_estimate.h"
#include "models/model_config.h"
#include "models/model_registry.h"
#include "tests/support/fixtures.h"

namespace attnlab::testing {
namespace {

std::shared_ptr<models::Backbone> mini(const std::string& name) {
  torch::manual_seed(3);
  auto model =
      models::make_backbone(models::config_from_file(parity_dir() + "/" + name + ".config.json"));
  model->eval();
  return model;
}

// A small softmax ViT on many tokens: attention scores dominate its forward.
std::shared_ptr<models::Backbone> many_token_vit(int64_t img_size, const std::string& attention) {
  torch::manual_seed(3);
  models::Json c = {{"arch", "vit"},         {"img_size", img_size}, {"patch_size", 2},
                    {"embed_dim", 64},       {"depth", 2},           {"num_heads", 2},
                    {"mlp_ratio", 2.0},      {"num_classes", 10},    {"class_token", false},
                    {"attention", attention}};
  auto model = models::make_backbone(c);
  model->eval();
  return model;
}

// The estimate without the weights (already allocated before the probe starts) next to
// the peak of what the forward allocates, its input included.
struct Measured {
  double estimate = 0, peak = 0;
};

Measured measure(models::Backbone& model, int64_t batch, int64_t size,
                 const models::ForwardOptions& options) {
  const at::NoGradGuard no_grad;
  Measured m;
  const models::ForwardMemory e =
      models::estimate_forward_memory(model, batch, size, size, options);
  m.estimate = e.total() - e.weights;
  runtime::CpuMemoryProbe probe;
  {
    const at::Tensor images = at::randn({batch, 3, size, size});
    const models::ForwardResult r = model.run(images, options);
    EXPECT_TRUE(r.logits.defined());
  }
  m.peak = static_cast<double>(probe.peak_bytes());
  return m;
}

void expect_bounded(const Measured& m, const std::string& what) {
  std::printf("%s: estimate %.2f MB, measured peak %.2f MB (x%.2f)\n", what.c_str(),
              m.estimate / 1048576.0, m.peak / 1048576.0, m.estimate / m.peak);
  EXPECT_GE(m.estimate, m.peak) << what << ": estimate " << m.estimate << " B, measured " << m.peak;
  EXPECT_LE(m.estimate, 4.0 * m.peak)
      << what << ": estimate " << m.estimate << " B, measured " << m.peak;
}

TEST(ForwardMemoryEstimate, BoundsTheMeasuredPeakOfEveryFamily) {
  const struct {
    const char* config;
    int64_t size;
  } cases[] = {{"deit_mini", 224},
               {"anchor_deit_mini", 224},
               {"litv2_mini", 64},
               {"ravlt_mini", 64},
               {"swin_mini", 32}};
  for (const auto& c : cases) {
    auto model = mini(c.config);
    for (const bool traced : {false, true}) {
      models::ForwardOptions o;
      o.trace_attention = traced;
      expect_bounded(measure(*model, 2, c.size, o),
                     std::string(c.config) + (traced ? " traced" : " untraced"));
    }
  }
}

TEST(ForwardMemoryEstimate, CountsTheScoresOfASoftmaxOnManyTokens) {
  auto model = many_token_vit(112, "softmax");  // 56×56 = 3136 tokens, 2 heads
  auto linear = many_token_vit(112, "linear");
  const Measured l = measure(*linear, 1, 112, models::ForwardOptions{});
  expect_bounded(l, "linear at 3136 tokens");
  {
    // The eager softmax (LibTorch 1.13's only path): two heads' 3136×3136 fp32 scores,
    // before and after the softmax.
    const attention::EagerAttentionScope eager;
    const models::ForwardMemory e =
        models::estimate_forward_memory(*model, 1, 112, 112, models::ForwardOptions{});
    EXPECT_DOUBLE_EQ(e.largest_scores, 2.0 * 2 * 3136.0 * 3136.0 * 4);
    EXPECT_NE(e.largest_layer.find("blocks.0.attn"), std::string::npos) << e.largest_layer;
    expect_bounded(measure(*model, 1, 112, models::ForwardOptions{}), "eager softmax at 3136 tokens");
    // The same model with linear attention holds no N×N matrix: far less.
    EXPECT_LT(l.estimate * 4, e.total() - e.weights);
  }
  if (!attention::fused_attention_enabled()) return;  // eager is this build's only path
  // Fused (LibTorch >= 2.0): the kernel holds no N×N scores, but the estimate still counts
  // them, so it stays an upper bound (what the budget check needs) and is no longer within
  // the factor 4: 21× the measured peak here. Leaving the scores out for a fused layer is
  // left to do (docs/RELIABILITY.md, "The memory budget").
  const Measured fused = measure(*model, 1, 112, models::ForwardOptions{});
  std::printf("fused softmax at 3136 tokens: estimate %.2f MB, measured peak %.2f MB (x%.2f)\n",
              fused.estimate / 1048576.0, fused.peak / 1048576.0, fused.estimate / fused.peak);
  EXPECT_GE(fused.estimate, fused.peak);
}

TEST(ForwardMemoryEstimate, GrowsWithTheSquareOfTheTokensForSoftmaxOnly) {
  // 10⁵ tokens (a 634-pixel image in 2-pixel patches: 317² = 100489): the softmax scores
  // alone are 2 heads × 100489² × 4 B × 2 = 150 GiB; linear attention stays under 1 GiB.
  auto softmax = many_token_vit(634, "softmax");
  const double big = models::estimate_forward_memory(*softmax, 1, 634, 634, {}).total();
  EXPECT_GT(big, 150.0 * (1ull << 30));
  EXPECT_LT(big, 160.0 * (1ull << 30));
  auto linear = many_token_vit(634, "linear");
  EXPECT_LT(models::estimate_forward_memory(*linear, 1, 634, 634, {}).total(), 1.0 * (1ull << 30));
}

// Restores the default budget when a test ends, whatever it set.
struct BudgetGuard {
  ~BudgetGuard() { runtime::set_memory_budget("", ""); }
};

TEST(ForwardMemoryBudget, RefusesAForwardOverTheBudgetWithAMessageThatSaysWhatToChange) {
  const BudgetGuard guard;
  auto model = many_token_vit(112, "softmax");
  const at::Tensor images = at::randn({1, 3, 112, 112});
  runtime::set_memory_budget("64M", "--max-memory 64M");
  const at::NoGradGuard no_grad;
  try {
    model->run(images);
    FAIL() << "a forward estimated at about 180 MB ran under a 64 MB budget";
  } catch (const models::MemoryBudgetError& e) {
    const std::string m = e.what();
    for (const char* part : {"vit on 1 image of 112×112 would need about", "blocks.0.attn",
                             "56×56 grid", "over the memory budget of 64.0 MB (--max-memory 64M)",
                             "--img-size", "--max-memory SIZE"})
      EXPECT_NE(m.find(part), std::string::npos) << part << " missing from: " << m;
  }
  runtime::set_memory_budget("off", "--max-memory off");
  EXPECT_NO_THROW(model->run(images));
  runtime::set_memory_budget("1G", "--max-memory 1G");
  EXPECT_NO_THROW(model->run(images));
}

TEST(ForwardMemoryBudget, TheDefaultIsAShareOfTheAvailableRam) {
  const BudgetGuard guard;
  runtime::set_memory_budget("", "");
  const runtime::MemoryBudget b = runtime::memory_budget();
  const int64_t available = runtime::available_ram_bytes();
  ASSERT_GT(available, 0) << "/proc/meminfo has no MemAvailable";
  EXPECT_FALSE(b.set);
  // MemAvailable moves between the two reads; 5% of it is far more than it moves here.
  EXPECT_NEAR(static_cast<double>(b.bytes), runtime::kDefaultMemoryShare * available,
              0.05 * available);
  EXPECT_NE(b.origin.find("% of the"), std::string::npos) << b.origin;
}

TEST(MemorySize, ParsesBytesAndPowersOf1024) {
  EXPECT_EQ(runtime::parse_memory_size("8G"), int64_t{8} << 30);
  EXPECT_EQ(runtime::parse_memory_size("8GB"), int64_t{8} << 30);
  EXPECT_EQ(runtime::parse_memory_size("1.5 GiB"), int64_t{3} << 29);
  EXPECT_EQ(runtime::parse_memory_size("512m"), int64_t{512} << 20);
  EXPECT_EQ(runtime::parse_memory_size("2T"), int64_t{2} << 40);
  EXPECT_EQ(runtime::parse_memory_size("640K"), 640 * 1024);
  EXPECT_EQ(runtime::parse_memory_size("123456"), 123456);
  EXPECT_EQ(runtime::parse_memory_size("off"), 0);
  EXPECT_EQ(runtime::parse_memory_size("none"), 0);
  for (const char* bad : {"", "G", "8X", "-1G", "8 GBs", "nan", "inf", "1e30"})
    EXPECT_THROW(runtime::parse_memory_size(bad), std::invalid_argument) << bad;
}

TEST(MemorySize, FormatsThreeSignificantDigits) {
  EXPECT_EQ(runtime::format_bytes(512), "512 B");
  EXPECT_EQ(runtime::format_bytes(64.0 * (1 << 20)), "64.0 MB");
  EXPECT_EQ(runtime::format_bytes(1.5 * (1 << 30)), "1.50 GB");
  EXPECT_EQ(runtime::format_bytes(150.0 * (1ull << 30)), "150 GB");
}

}  // namespace
}  // namespace attnlab::testing
