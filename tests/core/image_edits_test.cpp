// What-if edits (core/image/image_edits.h): the text form round-trips, each operation
// changes exactly its square of tokens (by hand on small pictures), and bad edits are
// refused by name.
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>

#include "core/image/image_edits.h"

namespace attnlab::testing {
namespace {

using image::EditOp;

// A w×h picture whose pixel (y, x) is (y, x, y + x) (all below 256 here).
io::RgbImage ramp(int w, int h) {
  io::RgbImage im;
  im.width = w;
  im.height = h;
  im.rgb.resize(size_t(w) * size_t(h) * 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      uint8_t* p = &im.rgb[(size_t(y) * size_t(w) + size_t(x)) * 3];
      p[0] = uint8_t(y);
      p[1] = uint8_t(x);
      p[2] = uint8_t(y + x);
    }
  return im;
}

const uint8_t* edited_pixel(const io::RgbImage& im, int y, int x) {
  return &im.rgb[(size_t(y) * size_t(im.width) + size_t(x)) * 3];
}

TEST(ImageEdits, TheTextFormRoundTrips) {
  const auto ops = image::parse_edits(
      "occlude:3,4,2;blur:0,0,1;paint:1,1,1,255,0,0;"
      "paste:2,2,1,3,3,other.png");
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[0].kind, EditOp::Kind::Occlude);
  EXPECT_EQ(ops[0].size, 2);
  EXPECT_EQ(ops[2].color, (std::array<uint8_t, 3>{255, 0, 0}));
  EXPECT_EQ(ops[3].source, "other.png");
  EXPECT_EQ(image::parse_edits(image::edits_text(ops)), ops);
  EXPECT_THROW(image::parse_edits("smear:1,1,1"), std::invalid_argument);
  EXPECT_THROW(image::parse_edits("paint:1,1,1,300,0,0"), std::invalid_argument);
  EXPECT_THROW(image::parse_edits("blur:1,x,1"), std::invalid_argument);
}

TEST(ImageEdits, OccludeAndPaintChangeExactlyTheirSquare) {
  const io::RgbImage in = ramp(8, 8);  // patch 2: a 4×4 grid
  const io::RgbImage out = image::apply_edits(in, 2, image::parse_edits("paint:1,2,2,9,8,7"));
  for (int y = 0; y < 8; ++y)
    for (int x = 0; x < 8; ++x) {
      const bool inside = y >= 2 && y < 6 && x >= 4 && x < 8;  // tokens (1..2, 2..3)
      const uint8_t* p = edited_pixel(out, y, x);
      const uint8_t* q = edited_pixel(in, y, x);
      const uint8_t painted[3] = {9, 8, 7};
      for (int c = 0; c < 3; ++c) EXPECT_EQ(p[c], inside ? painted[c] : q[c]) << y << x;
    }
  // A square reaching past the picture is clipped: token (3, 3) with size 3 is one patch.
  const io::RgbImage edge = image::apply_edits(in, 2, image::parse_edits("occlude:3,3,3"));
  EXPECT_EQ(edited_pixel(edge, 7, 7)[0], 128);
  EXPECT_EQ(edited_pixel(edge, 5, 5)[0], 5);
}

TEST(ImageEdits, BlurAveragesWithinItsSquareOnly) {
  // A uniform picture is unchanged by a blur; a ramp's blurred pixel is its box mean.
  io::RgbImage flat = ramp(6, 6);
  for (auto& v : flat.rgb) v = 77;
  EXPECT_EQ(image::apply_edits(flat, 2, image::parse_edits("blur:0,0,3")).rgb, flat.rgb);
  const io::RgbImage in = ramp(6, 6);
  const io::RgbImage out = image::apply_edits(in, 2, image::parse_edits("blur:1,1,1"));
  // Pixel (2, 2): the 3×3 box around it (radius patch / 2 = 1) of red = y averages to 2.
  EXPECT_EQ(edited_pixel(out, 2, 2)[0], 2);
  EXPECT_EQ(edited_pixel(out, 3, 3)[2], 6);  // blue = y + x: the box mean of 4..8 is 6
  EXPECT_EQ(edited_pixel(out, 0, 0)[2],
            edited_pixel(in, 0, 0)[2]);  // outside the square: untouched
}

TEST(ImageEdits, PasteCopiesTokensFromAnotherPicture) {
  const io::RgbImage in = ramp(8, 8);
  io::RgbImage other = ramp(8, 8);
  for (auto& v : other.rgb) v = uint8_t(255 - v);
  const auto load = [&](const std::string& name) {
    if (name != "other.png") throw std::invalid_argument("no " + name);
    return other;
  };
  const io::RgbImage out =
      image::apply_edits(in, 2, image::parse_edits("paste:0,0,1,3,3,other.png"), load);
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 2; ++x)
      for (int c = 0; c < 3; ++c)
        EXPECT_EQ(edited_pixel(out, y, x)[c], edited_pixel(other, 6 + y, 6 + x)[c]);
  EXPECT_EQ(edited_pixel(out, 2, 2)[0], edited_pixel(in, 2, 2)[0]);
  // Refused: a source of another size, no loader, a start outside the grid, patch 0.
  const auto small = [](const std::string&) { return ramp(4, 4); };
  EXPECT_THROW(image::apply_edits(in, 2, image::parse_edits("paste:0,0,1,0,0,s.png"), small),
               std::invalid_argument);
  EXPECT_THROW(image::apply_edits(in, 2, image::parse_edits("paste:0,0,1,0,0,s.png")),
               std::invalid_argument);
  EXPECT_THROW(image::apply_edits(in, 2, image::parse_edits("occlude:4,0,1")),
               std::invalid_argument);
  EXPECT_THROW(image::apply_edits(in, 0, {}), std::invalid_argument);
}

}  // namespace
}  // namespace attnlab::testing
