// Datasets: Fashion-MNIST as Debian installs it (skipped when the package is absent),
// ImageFolder trees, and the batch pipeline (order, augmentation, normalisation).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <opencv2/imgcodecs.hpp>
#include <set>

#include "core/data/batches.h"
#include "core/data/image_dataset.h"
#include "tests/support/temp_path.h"

namespace attnlab::data {
namespace {

TEST(FashionMnist, DebianFilesHaveTheDocumentedCountsShapesAndLabels) {
  const std::string dir = fashion_mnist_dir();
  if (dir.empty()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  for (const auto& [split, n] :
       {std::pair<std::string, int64_t>{"train", 60000}, {"test", 10000}}) {
    const ImageDataset d = load_fashion_mnist(dir, split);
    EXPECT_EQ(d.name, "fashion-mnist:" + split);
    ASSERT_EQ(d.images.sizes(), (std::vector<int64_t>{n, 1, 28, 28}));
    EXPECT_EQ(d.images.scalar_type(), at::kByte);
    ASSERT_EQ(d.labels.sizes(), (std::vector<int64_t>{n}));
    EXPECT_EQ(d.labels.min().item<int64_t>(), 0);
    EXPECT_EQ(d.labels.max().item<int64_t>(), 9);
    // Fashion-MNIST is balanced: n/10 images of every class.
    const at::Tensor counts = at::bincount(d.labels);
    EXPECT_TRUE(counts.eq(n / 10).all().item<bool>()) << counts;
    EXPECT_EQ(d.class_names.size(), 10u);
    // Real pictures, not zeros: about 29% mean intensity.
    const double mean = d.images.to(at::kDouble).mean().item<double>() / 255.0;
    EXPECT_NEAR(mean, 0.286, 0.01);
  }
  // The first test image is an ankle boot (label 9), the second a pullover (2).
  const ImageDataset test = load_fashion_mnist(dir, "test");
  EXPECT_EQ(test.labels[0].item<int64_t>(), 9);
  EXPECT_EQ(test.labels[1].item<int64_t>(), 2);
}

TEST(FashionMnist, MissingFilesAndBadSplitsAreClearErrors) {
  testing::TempDir dir("empty");
  try {
    load_fashion_mnist(dir.path.string(), "train");
    FAIL() << "no error";
  } catch (const DatasetError& e) {
    EXPECT_NE(std::string(e.what()).find("dataset-fashion-mnist"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_fashion_mnist(dir.path.string(), "validation"), DatasetError);
  EXPECT_THROW(load_dataset("imagenet:val", 28), DatasetError);
}

TEST(ImageFolder, ClassesAreSortedSubdirectoriesAndImagesAreResized) {
  testing::TempDir dir("folder");
  for (const char* cls : {"zebra", "ant"}) {
    std::filesystem::create_directories(dir.path / cls);
    for (int i = 0; i < 2; ++i) {
      cv::Mat img(10 + i, 12, CV_8UC3, cv::Scalar(cls[0] == 'a' ? 10 : 200, 0, 0));
      cv::imwrite((dir.path / cls / ("im" + std::to_string(i) + ".png")).string(), img);
    }
  }
  const ImageDataset d = load_dataset("folder:" + dir.path.string(), 8);
  EXPECT_EQ(d.class_names, (std::vector<std::string>{"ant", "zebra"}));
  ASSERT_EQ(d.images.sizes(), (std::vector<int64_t>{4, 3, 8, 8}));
  EXPECT_EQ(d.labels.numel(), 4);
  EXPECT_EQ(d.labels[0].item<int64_t>(), 0);
  EXPECT_EQ(d.labels[3].item<int64_t>(), 1);
  // OpenCV wrote BGR (blue = 10 or 200); the set holds RGB, so blue is channel 2.
  EXPECT_EQ(d.images[0][2][4][4].item<uint8_t>(), 10);
  EXPECT_EQ(d.images[3][2][4][4].item<uint8_t>(), 200);

  std::ofstream(dir.path / "ant" / "broken.png") << "not a png";
  EXPECT_ANY_THROW(load_dataset(dir.path.string(), 8));
}

TEST(Batches, EpochOrderIsAReproduciblePermutation) {
  const auto a = epoch_order(1000, 7, 3), b = epoch_order(1000, 7, 3), c = epoch_order(1000, 7, 4);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(std::set<int64_t>(a.begin(), a.end()).size(), 1000u);
  EXPECT_EQ(*std::min_element(a.begin(), a.end()), 0);
  EXPECT_EQ(*std::max_element(a.begin(), a.end()), 999);
}

TEST(Batches, NormalisationAndGreyToRgb) {
  ImageDataset d;
  d.images = at::full({2, 1, 4, 4}, 51, at::kByte);  // 51/255 = 0.2
  d.labels = at::tensor({0, 1}, at::kLong);
  d.class_names = {"a", "b"};
  Normalisation n;
  n.mean = {0.1f, 0.2f, 0.3f};
  n.std = {0.5f, 0.5f, 0.5f};
  const at::Tensor x = make_batch(d, {1, 0}, n, nullptr, 0);
  ASSERT_EQ(x.sizes(), (std::vector<int64_t>{2, 3, 4, 4}));
  EXPECT_NEAR(x[0][0][0][0].item<float>(), 0.2f, 1e-6);
  EXPECT_NEAR(x[0][1][0][0].item<float>(), 0.0f, 1e-6);
  EXPECT_NEAR(x[0][2][0][0].item<float>(), -0.2f, 1e-6);
  EXPECT_EQ(batch_labels(d, {1, 0})[0].item<int64_t>(), 1);
}

TEST(Batches, AugmentationShiftsWithZeroFillAndIsSeeded) {
  ImageDataset d;
  d.images = at::zeros({1, 1, 5, 5}, at::kByte);
  d.images[0][0][2][2] = 255;  // one bright pixel in the centre
  d.labels = at::zeros({1}, at::kLong);
  d.class_names = {"a"};
  Normalisation n;
  n.mean = {0, 0, 0};
  n.std = {1, 1, 1};
  Augmentation aug;
  aug.max_shift = 2;
  std::set<std::pair<int64_t, int64_t>> places;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    const at::Tensor x = make_batch(d, {0}, n, &aug, seed)[0][0];
    EXPECT_TRUE(x.equal(make_batch(d, {0}, n, &aug, seed)[0][0]));  // same seed, same draw
    EXPECT_EQ(x.sum().item<float>(), 1.0f);  // the pixel moved, nothing else appeared
    const int64_t at = x.flatten().argmax().item<int64_t>();
    places.insert({at / 5, at % 5});
  }
  EXPECT_GT(places.size(), 8u);  // many of the 25 shifts (and flips) occur
}

}  // namespace
}  // namespace attnlab::data
