// Images: the bundled demo loads as RGB; corrupt, empty and missing files raise IoError
// naming the file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/io/image_io.h"
#include "core/io/io_error.h"

namespace attnlab::io {
namespace {

TEST(ImageIo, DemoImageLoads) {
  RgbImage img = load_rgb_image(std::string(ATTNLAB_SOURCE_DIR) + "/assets/demo.png");
  EXPECT_GT(img.width, 0);
  EXPECT_GT(img.height, 0);
  EXPECT_EQ(img.rgb.size(), size_t(img.width) * img.height * 3);
}

TEST(ImageIo, BadInputsRaise) {
  auto dir = std::filesystem::temp_directory_path();
  auto corrupt = dir / "attnlab_corrupt.png";
  std::ofstream(corrupt, std::ios::binary) << "\x89PNG\r\n\x1a\n garbage that is not a png";
  auto empty = dir / "attnlab_empty.jpg";
  std::ofstream(empty, std::ios::binary).close();
  for (const auto& p : {corrupt.string(), empty.string(), std::string("/nonexistent/x.png")}) {
    try {
      load_rgb_image(p);
      FAIL() << p;
    } catch (const IoError& e) {
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
    }
  }
}

TEST(ImageIo, HugeImageRefused) {
  ImageLimits tight;
  tight.max_pixels = 100;
  EXPECT_THROW(load_rgb_image(std::string(ATTNLAB_SOURCE_DIR) + "/assets/demo.png", tight), IoError);
}

}  // namespace
}  // namespace attnlab::io
