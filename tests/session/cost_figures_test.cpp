// The cost figures of the report and the GUI's Cost tab: the complexity sweep counts each
// model at its own size and at multiples of it (checked against the quadratic growth of
// softmax's scores, from the formula), a size a model refuses is a note and not a
// failure, the mechanism of a config is named, and the bench's figures are drawn from its
// table (latency always, memory off CUDA).
#include <gtest/gtest.h>

#include <fstream>

#include "app/session/cost_figures.h"
#include "models/config_mechanism.h"
#include "tests/support/temp_path.h"

namespace {

using namespace attnlab;

session::ModelRequest config_request(const attnlab::testing::TempDir& dir, const std::string& name,
                                     const std::string& json) {
  const std::string path = dir.file(name + ".json");
  std::ofstream(path) << json;
  return session::model_entry_request(path);  // as the report's --models and the GUI
}

const char* kTinyVit = R"({"arch": "vit", "img_size": 32, "patch_size": 8, "embed_dim": 16,
  "depth": 1, "num_heads": 2, "num_classes": 10, "class_token": false)";

TEST(ComplexitySweep, CountsEachModelAtItsOwnSizeAndAtMultiplesOfIt) {
  attnlab::testing::TempDir dir("sweep");
  const auto softmax = config_request(dir, "tiny", std::string(kTinyVit) + "}");
  std::vector<std::string> seen;
  const auto sweep = session::complexity_sweep(
      {{"tiny", softmax}}, {1, 2}, [&](int64_t, int64_t, const std::string& what) {
        if (!what.empty()) seen.push_back(what);
      });
  ASSERT_EQ(sweep.runs.size(), 2u);
  EXPECT_TRUE(sweep.notes.empty());
  EXPECT_EQ(sweep.runs[0].subject, "tiny");
  EXPECT_EQ(sweep.runs[0].height, 32);
  EXPECT_EQ(sweep.runs[1].height, 64);
  EXPECT_EQ(seen, (std::vector<std::string>{"tiny at its own size", "tiny at 64x64"}));
  // One softmax layer's scores are N²·C: 16 tokens at 32 px, 64 at 64 px (C = 16).
  EXPECT_EQ(sweep.runs[0].group_macs("scores"), 16 * 16 * 16);
  EXPECT_EQ(sweep.runs[1].group_macs("scores"), 64 * 64 * 16);
  // The figure has one line per model and says what it counts.
  const auto figure = session::complexity_sweep_figure(sweep);
  EXPECT_NE(figure.caption.find("tiny"), std::string::npos) << figure.caption;
  EXPECT_NE(figure.caption.find("fvcore"), std::string::npos) << figure.caption;
}

TEST(ComplexitySweep, ASizeAModelRefusesIsANoteAndTheRestIsCounted) {
  attnlab::testing::TempDir dir("sweep_refused");
  // FLatten's positional encoding on the keys is learned for exactly 16 tokens.
  const auto flatten = config_request(
      dir, "flat",
      std::string(kTinyVit) +
          R"(, "attention": "flatten", "attention_options": {"num_patches": 16}})");
  const auto softmax = config_request(dir, "soft", std::string(kTinyVit) + "}");
  const auto sweep = session::complexity_sweep({{"flat", flatten}, {"soft", softmax}}, {1, 2});
  ASSERT_EQ(sweep.runs.size(), 3u);  // flat at 32; soft at 32 and 64
  EXPECT_EQ(sweep.runs[0].subject, "flat");
  EXPECT_EQ(sweep.runs[2].subject, "soft");
  ASSERT_EQ(sweep.notes.size(), 1u);
  EXPECT_EQ(sweep.notes[0].rfind("flat at 64x64: ", 0), 0u) << sweep.notes[0];
  // The figure's caption says what was not counted.
  EXPECT_NE(session::complexity_sweep_figure(sweep).caption.find("Not counted: flat at 64x64"),
            std::string::npos);
}

TEST(ComplexitySweep, AModelThatDoesNotBuildThrowsAndCancelStops) {
  attnlab::testing::TempDir dir("sweep_bad");
  const auto bad = config_request(dir, "bad", R"({"arch": "vit", "embed_dim": 0})");
  EXPECT_ANY_THROW(session::complexity_sweep({{"bad", bad}}, {1, 2}));
  const auto good = config_request(dir, "tiny", std::string(kTinyVit) + "}");
  const auto none = session::complexity_sweep({{"tiny", good}}, {1, 2}, {}, [] { return true; });
  EXPECT_TRUE(none.runs.empty());
}

TEST(CostFigures, TheMechanismOfAConfig) {
  EXPECT_EQ(models::config_mechanism({{"arch", "vit"}, {"attention", "hydra"}}), "hydra");
  EXPECT_EQ(models::config_mechanism({{"arch", "vit"}}), "softmax");
  EXPECT_EQ(models::config_mechanism({{"arch", "litv2"}}), "hilo");
  EXPECT_EQ(models::config_mechanism({{"arch", "ravlt"}}), "rala");
  EXPECT_EQ(models::config_mechanism({{"arch", "swin"}}), "swin");
  EXPECT_EQ(models::config_mechanism({{"arch", "castling_deit"}}), "castling");
  EXPECT_EQ(models::config_mechanism({{"arch", "anchor_deit_distilled"}}), "anchor");
  EXPECT_EQ(models::config_mechanism({{"arch", "resnet"}}), "");
  EXPECT_EQ(models::config_mechanism(nlohmann::json::array()), "");
}

TEST(CostFigures, TheModelsBenchIsTheBaselineThenEachMechanismOnce) {
  const auto s = session::models_bench_settings({"hilo", "", "softmax", "hilo", "rala"});
  EXPECT_EQ(s.mechanisms, (std::vector<std::string>{"softmax", "hilo", "rala"}));
}

TEST(CostFigures, TheBenchDrawsLatencyAndMemoryAgainstN) {
  session::AttentionBenchSettings s;
  s.mechanisms = {"softmax", "linear"};
  // These two rows alone, in every LibTorch (a 2.x build would add its fused "sdpa" row;
  // that row's own tests: attention_bench_test.cpp).
  s.fused_row = false;
  s.sides = {2, 4};
  s.dim = 16;
  s.heads = 2;
  s.repeats = 1;
  const auto table = session::attention_bench_table(session::bench_attention(s), s);
  const auto figures = session::attention_bench_figures(table, s);
  ASSERT_EQ(figures.size(), 2u);
  EXPECT_NE(figures[0].caption.find("latency"), std::string::npos) << figures[0].caption;
  EXPECT_NE(figures[1].caption.find("memory"), std::string::npos) << figures[1].caption;
  EXPECT_NE(figures[0].caption.find("softmax and linear"), std::string::npos);
  // Cancelled before the first point: nothing is measured.
  EXPECT_TRUE(session::bench_attention(s, {}, [] { return true; }).empty());
}

}  // namespace
