// `attnlab train`, `eval`, `zoo` and `export-samples` end to end on a tiny ImageFolder set:
// files written, refusals, resume, and the index built from the exported record.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>

#include "tests/support/cli_runner.h"
#include "tests/support/temp_path.h"

namespace attnlab {
namespace {
namespace fs = std::filesystem;
using testing::run_cli;

// Two classes of 8×8 images: dark and bright.
fs::path make_folder(const fs::path& root) {
  for (int c = 0; c < 2; ++c) {
    fs::create_directories(root / (c ? "bright" : "dark"));
    for (int i = 0; i < 4; ++i)
      cv::imwrite((root / (c ? "bright" : "dark") / ("im" + std::to_string(i) + ".png")).string(),
                  cv::Mat(8, 8, CV_8UC1, cv::Scalar(c ? 200 + i : 20 + i)));
  }
  return root;
}

TEST(TrainCli, TrainsExportsEvaluatesAndIndexes) {
  testing::TempDir dir("cli");
  const fs::path data = make_folder(dir.path / "data");
  const fs::path run = dir.path / "run", zoo = dir.path / "zoo";
  const std::string common = "--threads 1 train --mechanism linear --dataset " + data.string() +
                             " --folder-image-size 8 --image-size 8 --width 32 --depth 1 "
                             "--steps 3 --batch 4 --warmup 1 --out " +
                             run.string() + " --export " + (zoo / "tiny.safetensors").string();
  auto r = run_cli(common);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("train [########################] 3/3"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(zoo / "tiny.safetensors"));
  std::ifstream metrics(run / "metrics.csv");
  int lines = 0;
  for (std::string line; std::getline(metrics, line);) ++lines;
  EXPECT_EQ(lines, 4);  // header + one row per step
  const auto summary = nlohmann::json::parse(std::ifstream(run / "summary.json"));
  EXPECT_EQ(summary["mechanism"], "linear");
  EXPECT_EQ(summary["steps"], 3);
  EXPECT_FALSE(summary.contains("accuracy"));  // a folder set has no test split by default

  // The same command again would mix two runs: refused; with --resume it continues.
  r = run_cli(common);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--resume"), std::string::npos) << r.out;
  r = run_cli(common + " --resume --test-dataset " + data.string());
  EXPECT_EQ(r.code, 1) << r.out;  // a resumed run must keep its settings (test_set differs)
  EXPECT_NE(r.out.find("'test_set'"), std::string::npos) << r.out;
  r = run_cli(common + " --resume");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("resumed from"), std::string::npos) << r.out;

  r = run_cli("--threads 1 eval --model " + (zoo / "tiny.safetensors").string() + " --dataset " +
              data.string() + " --limit 6");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("(first 6 images)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("/6) on"), std::string::npos) << r.out;

  // The exported file's record has no test accuracy, so it cannot enter a zoo index.
  r = run_cli("zoo " + zoo.string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("malformed"), std::string::npos) << r.out;
}

TEST(TrainCli, UsageErrorsAreNamed) {
  auto r = run_cli("train --mechanism softmax");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("--out"), std::string::npos) << r.out;
  r = run_cli("train --out /tmp/x --mechanism softmax --preset deit_tiny_patch16_224");
  EXPECT_EQ(r.code, 2) << r.out;
  r = run_cli("eval --model nothing.safetensors");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("--dataset"), std::string::npos) << r.out;
  r = run_cli("train --out /tmp/x --mechanism softmax --dataset /nonexistent/dir");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("unknown dataset"), std::string::npos) << r.out;
}

TEST(ExportSamplesCli, WritesPngsAndAnIndex) {
  testing::TempDir dir("samples");
  const fs::path data = make_folder(dir.path / "data");
  const auto r = run_cli("export-samples --dataset folder:" + data.string() +
                         " --per-class 2 --out " + (dir.path / "out").string());
  ASSERT_EQ(r.code, 0) << r.out;
  int pngs = 0;
  for (const auto& e : fs::directory_iterator(dir.path / "out"))
    pngs += e.path().extension() == ".png";
  EXPECT_EQ(pngs, 4);
  EXPECT_TRUE(fs::exists(dir.path / "out" / "index.csv"));
}

}  // namespace
}  // namespace attnlab
