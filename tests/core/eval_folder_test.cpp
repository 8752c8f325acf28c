// `attnlab eval --dataset folder:DIR` end to end: the folder is listed (classes sorted,
// files sorted), streamed a batch at a time through the model's own preprocessing, an
// unreadable image is reported and skipped (exit status 1), and the accuracy is the one the
// model gives image by image. The folder is built from the committed Fashion-MNIST
// samples (assets/fashion-mnist, 3 per class) and evaluated with the zoo's softmax model.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <opencv2/imgcodecs.hpp>
#include <regex>
#include <string>
#include <vector>

#include "core/data/batches.h"
#include "core/data/image_dataset.h"
#include "core/io/image_io.h"
#include "core/io/tensor_file.h"
#include "models/backbone.h"
#include "models/checkpoint_loading.h"
#include "models/model_config.h"
#include "tests/support/cli_runner.h"
#include "tests/support/temp_path.h"

namespace attnlab::testing {
namespace {
namespace fs = std::filesystem;

const std::string kSource = ATTNLAB_SOURCE_DIR;
const std::string kModel = kSource + "/models/zoo/softmax.safetensors";

// DIR/<NN-class>/<sample>.png for every committed sample ("00-t-shirt-top-00019.png" goes
// to class "00-t-shirt-top"), so the sorted class folders are the labels 0..9.
std::vector<data::LabelledFile> copy_samples(const fs::path& dir) {
  std::vector<data::LabelledFile> samples;
  for (const auto& e : fs::directory_iterator(kSource + "/assets/fashion-mnist")) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() != ".png") continue;
    const std::string cls = name.substr(0, name.rfind('-'));
    fs::create_directories(dir / cls);
    fs::copy_file(e.path(), dir / cls / name);
    samples.push_back({(dir / cls / name).string(), std::stoi(name.substr(0, 2))});
  }
  return samples;
}

TEST(EvalFolder, ListingHasSortedClassesAndFilesAndNoPixels) {
  TempDir dir("listing");
  for (const char* cls : {"zebra", "ant", "empty"}) fs::create_directories(dir.path / cls);
  for (const char* f : {"zebra/b.png", "zebra/a.png", "ant/c.jpg"})
    std::ofstream(dir.path / f) << "not decoded";
  const data::FolderListing l = data::list_image_folder(dir.path.string());
  EXPECT_EQ(l.class_names, (std::vector<std::string>{"ant", "zebra"}));  // "empty" has no file
  ASSERT_EQ(l.files.size(), 3u);
  EXPECT_EQ(fs::path(l.files[0].path).filename(), "c.jpg");
  EXPECT_EQ(l.files[0].label, 0);
  EXPECT_EQ(fs::path(l.files[1].path).filename(), "a.png");
  EXPECT_EQ(l.files[2].label, 1);
  EXPECT_EQ(data::folder_of_spec("folder:" + dir.path.string()), dir.path.string());
  EXPECT_EQ(data::folder_of_spec(dir.path.string()), dir.path.string());
  EXPECT_EQ(data::folder_of_spec("fashion-mnist:test"), "");
  EXPECT_THROW(data::list_image_folder((dir.path / "empty").string()), data::DatasetError);
}

TEST(EvalFolder, BatchesComeOutAtOneShapeAndNameWhatFailed) {
  TempDir dir("batch");
  const fs::path a = dir.path / "a.png", tall = dir.path / "tall.png", bad = dir.path / "bad.png";
  cv::imwrite(a.string(), cv::Mat(6, 8, CV_8UC3, cv::Scalar(0, 0, 255)));     // red, 8×6
  cv::imwrite(tall.string(), cv::Mat(9, 4, CV_8UC3, cv::Scalar(255, 0, 0)));  // blue, 4×9
  std::ofstream(bad) << "not a png";
  image::Preprocessing p = image::imagenet_eval(0, 0);  // no resize, no crop
  p.mean = {0, 0, 0};
  p.std = {1, 1, 1};
  const std::vector<data::LabelledFile> files = {
      {a.string(), 3}, {bad.string(), 1}, {tall.string(), 2}, {a.string(), 4}};
  std::array<int64_t, 2> shape{0, 0};
  const data::FileBatch b = data::load_file_batch(files, 0, 10, p, shape);
  EXPECT_EQ(shape, (std::array<int64_t, 2>{6, 8}));
  ASSERT_EQ(b.images.sizes(), (at::IntArrayRef{2, 3, 6, 8}));
  EXPECT_EQ(b.labels[0].item<int64_t>(), 3);
  EXPECT_EQ(b.labels[1].item<int64_t>(), 4);
  EXPECT_EQ(b.images[0][0].min().item<float>(), 1.0f);  // red, RGB order
  EXPECT_EQ(b.images[0][2].max().item<float>(), 0.0f);
  ASSERT_EQ(b.failed.size(), 2u);
  EXPECT_EQ(b.failed[0].path, bad.string());
  EXPECT_EQ(b.failed[1].path, tall.string());
  EXPECT_NE(b.failed[1].error.find("4×9"), std::string::npos) << b.failed[1].error;
  // A crop gives every image one shape: the tall one is read too.
  std::array<int64_t, 2> cropped{0, 0};
  p.crop = 4;
  EXPECT_EQ(data::load_file_batch(files, 2, 1, p, cropped).size(), 1);
  EXPECT_EQ(cropped, (std::array<int64_t, 2>{4, 4}));
}

TEST(EvalFolderCli, StreamsThroughTheModelsPreprocessingAndSkipsABrokenImage) {
  TempDir dir("eval");
  const fs::path data = dir.path / "set";
  std::vector<data::LabelledFile> samples = copy_samples(data);
  ASSERT_EQ(samples.size(), 30u);
  std::sort(samples.begin(), samples.end(),
            [](const auto& x, const auto& y) { return x.path < y.path; });
  // Each class's first sample again, 8 rows taller (4 black rows above and below): the
  // model's preprocessing (short side 28 kept, centre crop 28) gives back the sample
  // itself, so it must be classified as the sample is. Squashing it to 28×28 would not.
  for (int c = 0; c < 10; ++c) {
    const data::LabelledFile s =
        *std::find_if(samples.begin(), samples.end(), [&](const auto& x) { return x.label == c; });
    const cv::Mat img = cv::imread(s.path, cv::IMREAD_GRAYSCALE);
    ASSERT_EQ(img.rows, 28);
    cv::Mat tall(36, 28, CV_8UC1, cv::Scalar(0));
    img.copyTo(tall(cv::Rect(0, 4, 28, 28)));
    cv::imwrite((fs::path(s.path).parent_path() / "tall.png").string(), tall);
    samples.push_back({s.path, c});  // classified as its original
  }
  std::ofstream(data / "00-t-shirt-top" / "broken.png") << "not a png";

  // What the model predicts for each sample on its own: normalised here by hand with the
  // config's mean/std (28×28 needs no resize or crop), not through image::preprocess.
  const nlohmann::json config = models::config_from_metadata(io::read_tensor_file(kModel).metadata);
  const float mean = config["preprocessing"]["mean"][0], sd = config["preprocessing"]["std"][0];
  auto model = models::load_model(config, kModel).model;
  model->eval();
  at::NoGradGuard no_grad;
  int64_t sure = 0, unsure = 0;  // correct with a clear margin; top-2 logits too close to call
  for (const auto& s : samples) {
    const io::RgbImage im = io::load_rgb_image(s.path);
    at::Tensor x = at::from_blob(const_cast<uint8_t*>(im.rgb.data()), {28, 28, 3}, at::kByte)
                       .permute({2, 0, 1})
                       .to(at::kFloat)
                       .div(255)
                       .sub(mean)
                       .div(sd)
                       .unsqueeze(0);
    const at::Tensor logits = model->run(x).logits[0];
    const auto top2 = logits.topk(2);
    const double gap = (std::get<0>(top2)[0] - std::get<0>(top2)[1]).item<double>();
    if (gap < 1e-3)
      unsure += 1;
    else
      sure += std::get<1>(top2)[0].item<int64_t>() == s.label;
  }
  ASSERT_GE(sure, 20);  // the zoo model is ~88% accurate on Fashion-MNIST

  const std::string eval =
      "--threads 1 eval --model " + kModel + " --dataset folder:" + data.string();
  CliRun r = run_cli(eval + " --batch 7");
  EXPECT_EQ(r.code, 1) << r.out;  // the broken image
  EXPECT_NE(r.out.find("broken.png: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(skipped)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("eval: [41/41]"), std::string::npos) << r.out;  // progress, every file
  EXPECT_NE(r.out.find("bilinear resize 28, center crop 28"), std::string::npos) << r.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(accuracy [0-9.]+% \((\d+)/(\d+)\) on )")))
      << r.out;
  EXPECT_EQ(std::stoll(m[2]), 40);
  EXPECT_GE(std::stoll(m[1]), sure);
  EXPECT_LE(std::stoll(m[1]), sure + unsure);
  EXPECT_NE(r.out.find("(1 unreadable skipped)"), std::string::npos) << r.out;

  // --limit counts files: the first 5 are class 0's three samples, broken.png, tall.png.
  r = run_cli(eval + " --limit 5 --batch 2");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("/4) on folder:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(first 5 images, 1 unreadable skipped)"), std::string::npos) << r.out;

  // Without the broken file: exit status 0, the same count.
  fs::remove(data / "00-t-shirt-top" / "broken.png");
  r = run_cli(eval);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("/40) on folder:" + data.string() + "\n"), std::string::npos) << r.out;

  // A folder with no image in it at all is an error, and so is one whose every file fails.
  fs::create_directories(dir.path / "bad" / "cls");
  std::ofstream(dir.path / "bad" / "cls" / "x.png") << "nope";
  r = run_cli("--threads 1 eval --model " + kModel + " --dataset " + (dir.path / "bad").string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("no image could be read"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace attnlab::testing
