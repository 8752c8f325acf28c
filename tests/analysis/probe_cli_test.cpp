// `attnlab probe` end to end: a probe per block of a zoo model on a small ImageFolder tree
// cut from assets/fashion-mnist, its table (accuracies in [0, 1], sizes of the split, the
// logit lens's accuracy beside them) and its figure; a missing folder and a one-class
// folder refused by name before anything is written, an unreadable image skipped and said.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/analysis/export.h"
#include "tests/support/cli_runner.h"
#include "tests/support/temp_path.h"

namespace attnlab::testing {
namespace {

namespace fs = std::filesystem;

std::string repo_file(const std::string& rel) {
  return std::string(ATTNLAB_SOURCE_DIR) + "/" + rel;
}

double number_at(const analysis::Table& t, size_t row, const std::string& column) {
  return t.rows.at(row).at(t.column(column)).number();
}

// Three classes of the shipped Fashion-MNIST samples (3 images each), in the ImageFolder
// layout the probe reads; class folders named so that their sorted order is the model's
// class order (as `eval` assumes).
fs::path fashion_folder(const fs::path& root, const std::vector<std::string>& classes) {
  for (const auto& c : classes) {
    fs::create_directories(root / c);
    for (const auto& e : fs::directory_iterator(repo_file("assets/fashion-mnist")))
      if (e.path().filename().string().rfind(c, 0) == 0)
        fs::copy_file(e.path(), root / c / e.path().filename());
  }
  return root;
}

TEST(ProbeCli, TrainsAProbePerBlockOfAZooModel) {
  TempDir dir("probe");
  const fs::path data =
      fashion_folder(dir.path / "data", {"00-t-shirt-top", "01-trouser", "02-pullover"});
  const auto r =
      run_cli("probe --model " + repo_file("models/zoo/softmax.safetensors") +
              " --dataset folder:" + data.string() + " --out " + dir.file("out") + " --every 3");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("probe: 9 images"), std::string::npos) << r.out;
  const auto t = analysis::read_table_csv(dir.file("out/softmax__probe.csv"));
  ASSERT_EQ(t.rows.size(), 4u);  // the zoo's 4 blocks
  for (size_t row = 0; row < t.rows.size(); ++row) {
    EXPECT_EQ(number_at(t, row, "layer"), double(row));
    EXPECT_EQ(number_at(t, row, "train_images"), 6.0);  // the 3rd of each class is held out
    EXPECT_EQ(number_at(t, row, "test_images"), 3.0);
    EXPECT_EQ(number_at(t, row, "features"), 128.0);  // the zoo's width, mean of the grid tokens
    for (const char* c : {"train_accuracy", "test_accuracy", "lens_test_accuracy"}) {
      const double a = number_at(t, row, c);
      EXPECT_TRUE(a >= 0 && a <= 1) << c << " " << a;
    }
    EXPECT_TRUE(std::isfinite(number_at(t, row, "loss")));
  }
  for (const char* ext : {"png", "svg", "pdf"})
    EXPECT_GT(fs::file_size(dir.file(std::string("out/softmax__probe.") + ext)), 1000u) << ext;
  EXPECT_TRUE(fs::exists(dir.file("out/softmax__settings.json")));
}

TEST(ProbeCli, BadFoldersAreRefusedByName) {
  TempDir dir("probe_bad");
  const std::string model = " --model " + repo_file("models/zoo/softmax.safetensors");
  const auto missing = run_cli("probe" + model + " --dataset folder:" + dir.file("nowhere") +
                               " --out " + dir.file("out"));
  EXPECT_EQ(missing.code, 2) << missing.out;
  EXPECT_NE(missing.out.find("nowhere"), std::string::npos) << missing.out;
  const fs::path one = fashion_folder(dir.path / "one", {"01-trouser"});
  const auto single =
      run_cli("probe" + model + " --dataset folder:" + one.string() + " --out " + dir.file("out"));
  EXPECT_EQ(single.code, 2) << single.out;
  EXPECT_NE(single.out.find("at least 2 classes"), std::string::npos) << single.out;
  EXPECT_FALSE(fs::exists(dir.file("out")));  // refused before anything is written
  // An unreadable image is skipped and said; the rest is probed, and the status says so.
  const fs::path two = fashion_folder(dir.path / "two", {"00-t-shirt-top", "01-trouser"});
  std::ofstream(two / "01-trouser" / "broken.png") << "not a png";
  const auto r = run_cli("probe" + model + " --dataset folder:" + two.string() + " --out " +
                         dir.file("out") + " --every 2");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("broken.png"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(skipped)"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(dir.file("out/softmax__probe.csv")));
}

}  // namespace
}  // namespace attnlab::testing
