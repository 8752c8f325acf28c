// `attnlab analyze` on Swin (swin_mini: 8×8 grid, window 4; stage 1 blocks unshifted and
// shifted by 2, PatchMerging to a 4×4 stage 2 that fits one window): every analysis whose
// inputs a Swin has runs (per-window maps on the full grid, rollout and gradient rollout
// across windows and the patch merging, Grad-CAM, rank, spectra of the attention outputs,
// locality) and those it lacks are skipped with the reason; a query's map is zero outside
// its window — the un-shifted-back window in image positions in a shifted block, where
// the masked wrap-around keys carry next to nothing.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "core/io/npy.h"
#include "core/io/torch_bridge.h"
#include "tests/support/cli_runner.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_path.h"

namespace {

namespace fs = std::filesystem;
using attnlab::testing::parity_dir;
using attnlab::testing::run_cli;

std::string analyze(const std::string& out, const std::string& options) {
  return "analyze --model " + parity_dir() + "/swin_mini.safetensors --images " +
         std::string(ATTNLAB_SOURCE_DIR) + "/assets/demo.png --out " + out + " " + options;
}

at::Tensor npy(const std::string& path) {
  return attnlab::io::to_torch(attnlab::io::read_npy(path));
}

TEST(SwinAnalyze, EveryAnalysisASwinSupportsRunsAndTheOthersSaySo) {
  const std::string out = attnlab::testing::unique_temp_path("swin_all");
  const auto r = run_cli(analyze(out, ""));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("warning"), std::string::npos) << r.out;
  for (const char* skipped : {"anchors: skipped", "mask: skipped"})
    EXPECT_NE(r.out.find(skipped), std::string::npos) << skipped << "\n" << r.out;
  std::ifstream in(out + "/swin_mini__settings.json");
  const auto side = nlohmann::json::parse(in);
  std::set<std::string> files;
  for (const auto& f : side.at("files")) {
    files.insert(f.at("file").get<std::string>());
    EXPECT_TRUE(fs::exists(out + "/" + f.at("file").get<std::string>())) << f.dump();
  }
  EXPECT_EQ(side.at("layers").size(), 4u);
  std::vector<std::string> want = {"rollout/swin_mini__rollout__demo__q4-4.npy",
                                   "gradcam/swin_mini__gradcam__demo.npy",
                                   "gradrollout/swin_mini__gradrollout__demo.npy",
                                   "swin_mini__locality_heads.csv",
                                   "swin_mini__rank_layers.csv",
                                   "swin_mini__spectra_layers.csv",
                                   "swin_mini__explanations.csv"};
  for (const char* layer : {"L00", "L01", "L02", "L03"}) {
    const std::string l = layer;
    want.push_back("maps/swin_mini__maps__demo__" + l + "__q4-4__heads.npy");
    want.push_back("maps/swin_mini__maps__demo__" + l + "__q4-4__fused.npy");
    want.push_back("rank_sigma/swin_mini__rank_sigma__" + l + "__output.npy");
    want.push_back("spectra/swin_mini__spectra__" + l + "__output__log_amplitude.npy");
  }
  for (const auto& f : want) EXPECT_TRUE(files.count(f)) << f << "\n" << r.out;
  // The hierarchical carry: rollout and gradient rollout live on stage 1's 8×8 grid.
  EXPECT_EQ(npy(out + "/rollout/swin_mini__rollout__demo__q4-4.npy").sizes(),
            (at::IntArrayRef{8, 8}));
  const at::Tensor grad = npy(out + "/gradrollout/swin_mini__gradrollout__demo.npy");
  EXPECT_EQ(grad.sizes(), (at::IntArrayRef{8, 8}));
  EXPECT_TRUE(at::isfinite(grad).all().item<bool>());
  // Stage 2 (4×4, one window): every query sees the whole grid.
  EXPECT_GT(npy(out + "/maps/swin_mini__maps__demo__L02__q4-4__heads.npy").min().item<float>(),
            0.0f);
  fs::remove_all(out);
}

// Weight of a (heads, 8, 8) map outside rows [y0, y1) × columns [x0, x1).
double outside(const at::Tensor& map, int64_t y0, int64_t y1, int64_t x0, int64_t x1) {
  at::Tensor m = map.to(at::kDouble).clone();
  m.slice(1, y0, y1).slice(2, x0, x1).zero_();
  return m.abs().max().item<double>();
}

double inside_sum(const at::Tensor& map, int64_t y0, int64_t y1, int64_t x0, int64_t x1) {
  return map[0].slice(0, y0, y1).slice(1, x0, x1).sum().item<double>();
}

TEST(SwinAnalyze, AQuerysMapIsZeroOutsideItsWindow) {
  const std::string out = attnlab::testing::unique_temp_path("swin_window");
  ASSERT_EQ(run_cli(analyze(out, "--analyses maps --query 4,4")).code, 0);
  const std::string maps = out + "/maps/swin_mini__maps__demo__";
  // Block 0 (W-MSA): the query (4, 4) sits in the window rows 4–7, columns 4–7.
  const at::Tensor w0 = npy(maps + "L00__q4-4__heads.npy");
  EXPECT_EQ(outside(w0, 4, 8, 4, 8), 0.0);
  EXPECT_NEAR(inside_sum(w0, 4, 8, 4, 8), 1.0, 1e-5);
  // Block 1 (SW-MSA, shift 2): its window, rolled back, is rows 2–5, columns 2–5.
  const at::Tensor w1 = npy(maps + "L01__q4-4__heads.npy");
  EXPECT_EQ(outside(w1, 2, 6, 2, 6), 0.0);
  EXPECT_NEAR(inside_sum(w1, 2, 6, 2, 6), 1.0, 1e-5);
  fs::remove_all(out);

  // The corner query (0, 0) of the shifted block: its window wraps round both borders
  // (rows 6, 7, 0, 1 × columns 6, 7, 0, 1); the mask keeps it to its own region, the
  // 2×2 corner, and the wrapped keys get e^-100 of the weight.
  ASSERT_EQ(run_cli(analyze(out, "--analyses maps --query 0,0")).code, 0);
  const at::Tensor c1 = npy(maps + "L01__q0-0__heads.npy");
  EXPECT_NEAR(inside_sum(c1, 0, 2, 0, 2), 1.0, 1e-5);
  EXPECT_LT(outside(c1, 0, 2, 0, 2), 1e-30);
  at::Tensor unwrapped = c1.clone();
  for (int64_t y : {0, 1, 6, 7})
    for (int64_t x : {0, 1, 6, 7}) unwrapped[0][y][x] = 0;
  EXPECT_EQ(unwrapped.abs().max().item<float>(), 0.0f) << "weight outside the wrapped window";
  fs::remove_all(out);
}

}  // namespace
