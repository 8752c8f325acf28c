// Images: the bundled demo loads as RGB; corrupt, empty and missing files raise IoError
// naming the file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/io/image_header.h"
#include "core/io/image_io.h"
#include "core/io/io_error.h"
#include "tests/support/temp_path.h"

namespace attnlab::io {
namespace {

TEST(ImageIo, DemoImageLoads) {
  RgbImage img = load_rgb_image(std::string(ATTNLAB_SOURCE_DIR) + "/assets/demo.png");
  EXPECT_GT(img.width, 0);
  EXPECT_GT(img.height, 0);
  EXPECT_EQ(img.rgb.size(), size_t(img.width) * img.height * 3);
}

TEST(ImageIo, BadInputsRaise) {
  auto corrupt = std::filesystem::path(attnlab::testing::unique_temp_path("corrupt.png"));
  std::ofstream(corrupt, std::ios::binary) << "\x89PNG\r\n\x1a\n garbage that is not a png";
  auto empty = std::filesystem::path(attnlab::testing::unique_temp_path("empty.jpg"));
  std::ofstream(empty, std::ios::binary).close();
  for (const auto& p : {corrupt.string(), empty.string(), std::string("/nonexistent/x.png")}) {
    try {
      load_rgb_image(p);
      FAIL() << p;
    } catch (const IoError& e) {
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
    }
  }
  std::filesystem::remove(corrupt);
  std::filesystem::remove(empty);
}

TEST(ImageIo, HugeImageRefused) {
  ImageLimits tight;
  tight.max_pixels = 100;
  EXPECT_THROW(load_rgb_image(std::string(ATTNLAB_SOURCE_DIR) + "/assets/demo.png", tight),
               IoError);
}

TEST(ImageIo, HugeDeclaredSizeRefusedBeforeDecoding) {
  // A PNG whose IHDR claims 100000 x 100000 pixels (30 GB decoded): refused by the header.
  auto p = std::filesystem::temp_directory_path() / "attnlab_huge.png";
  const unsigned char png[] = {0x89, 'P',  'N', 'G', '\r', '\n', 0x1a, '\n', 0,    0, 0,
                               13,   'I',  'H', 'D', 'R',  0,    0x01, 0x86, 0xA0, 0, 0x01,
                               0x86, 0xA0, 8,   2,   0,    0,    0,    0,    0,    0, 0};
  std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(png), sizeof png);
  try {
    load_rgb_image(p.string());
    FAIL();
  } catch (const IoError& e) {
    EXPECT_EQ(e.kind(), IoErrorKind::LimitExceeded) << e.what();
    EXPECT_NE(std::string(e.what()).find("100000x100000"), std::string::npos) << e.what();
  }
  std::filesystem::remove(p);
}

TEST(ImageIo, HeaderPeekKnowsCommonFormats) {
  RgbImage demo = load_rgb_image(std::string(ATTNLAB_SOURCE_DIR) + "/assets/demo.png");
  const unsigned char gif[] = {'G', 'I', 'F', '8', '9', 'a', 0x40, 0x01, 0x00, 0x01};
  auto g = peek_image_size(ByteView(gif, sizeof gif));
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->width, 320);
  EXPECT_EQ(g->height, 256);
  // A minimal JPEG marker walk: SOI, APP0 (len 4), SOF0 with height 256, width 320.
  const unsigned char jpg[] = {0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0x00, 0x00, 0xFF,
                               0xC0, 0x00, 0x11, 0x08, 0x01, 0x00, 0x01, 0x40, 0x03};
  auto j = peek_image_size(ByteView(jpg, sizeof jpg));
  ASSERT_TRUE(j.has_value());
  EXPECT_EQ(j->width, 320);
  EXPECT_EQ(j->height, 256);
  EXPECT_EQ(demo.width, 320);
  EXPECT_FALSE(peek_image_size(ByteView(gif, 3)).has_value());
}

}  // namespace
}  // namespace attnlab::io
