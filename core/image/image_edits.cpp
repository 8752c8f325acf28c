// See image_edits.h.
#include "core/image/image_edits.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace attnlab::image {
namespace {

std::vector<std::string> split_text(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, sep);) out.push_back(item);
  return out;
}

int whole(const std::string& text, const std::string& op) {
  size_t used = 0;
  int v = 0;
  try {
    v = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = std::string::npos;
  }
  if (used != text.size())
    throw std::invalid_argument("edit '" + op + "': '" + text + "' is not a whole number");
  return v;
}

uint8_t channel(const std::string& text, const std::string& op) {
  const int v = whole(text, op);
  if (v < 0 || v > 255)
    throw std::invalid_argument("edit '" + op + "': a colour channel lies in 0..255");
  return uint8_t(v);
}

}  // namespace

bool EditOp::operator==(const EditOp& o) const {
  return kind == o.kind && y == o.y && x == o.x && size == o.size && color == o.color &&
         source == o.source && from_y == o.from_y && from_x == o.from_x;
}

const char* edit_kind_name(EditOp::Kind kind) {
  switch (kind) {
    case EditOp::Kind::Occlude:
      return "occlude";
    case EditOp::Kind::Blur:
      return "blur";
    case EditOp::Kind::Paint:
      return "paint";
    case EditOp::Kind::Paste:
      return "paste";
  }
  return "occlude";
}

std::vector<EditOp> parse_edits(const std::string& text) {
  std::vector<EditOp> ops;
  for (const std::string& op : split_text(text, ';')) {
    if (op.empty()) continue;
    const auto colon = op.find(':');
    if (colon == std::string::npos)
      throw std::invalid_argument("edit '" + op + "': wants kind:y,x,size");
    const std::string kind = op.substr(0, colon);
    const std::vector<std::string> f = split_text(op.substr(colon + 1), ',');
    EditOp e;
    if (kind == "occlude")
      e.kind = EditOp::Kind::Occlude;
    else if (kind == "blur")
      e.kind = EditOp::Kind::Blur;
    else if (kind == "paint")
      e.kind = EditOp::Kind::Paint;
    else if (kind == "paste")
      e.kind = EditOp::Kind::Paste;
    else
      throw std::invalid_argument("edit '" + op + "': the kind is occlude, blur, paint or paste");
    const size_t want = e.kind == EditOp::Kind::Paint ? 6 : e.kind == EditOp::Kind::Paste ? 6 : 3;
    const bool grey_given = e.kind == EditOp::Kind::Occlude && f.size() == 6;
    if (f.size() != want && !grey_given)
      throw std::invalid_argument("edit '" + op + "': " + kind + " wants " +
                                  (e.kind == EditOp::Kind::Paint   ? "y,x,size,r,g,b"
                                   : e.kind == EditOp::Kind::Paste ? "y,x,size,from_y,from_x,file"
                                   : e.kind == EditOp::Kind::Occlude
                                       ? "y,x,size (and optionally r,g,b)"
                                       : "y,x,size"));
    e.y = whole(f[0], op);
    e.x = whole(f[1], op);
    e.size = whole(f[2], op);
    if (e.kind == EditOp::Kind::Paint || grey_given)
      e.color = {channel(f[3], op), channel(f[4], op), channel(f[5], op)};
    if (e.kind == EditOp::Kind::Paste) {
      e.from_y = whole(f[3], op);
      e.from_x = whole(f[4], op);
      e.source = f[5];
    }
    ops.push_back(e);
  }
  return ops;
}

std::string edits_text(const std::vector<EditOp>& ops) {
  std::string out;
  for (const EditOp& e : ops) {
    if (!out.empty()) out += ";";
    out += std::string(edit_kind_name(e.kind)) + ":" + std::to_string(e.y) + "," +
           std::to_string(e.x) + "," + std::to_string(e.size);
    if (e.kind == EditOp::Kind::Paint || e.kind == EditOp::Kind::Occlude)
      out += "," + std::to_string(e.color[0]) + "," + std::to_string(e.color[1]) + "," +
             std::to_string(e.color[2]);
    if (e.kind == EditOp::Kind::Paste)
      out += "," + std::to_string(e.from_y) + "," + std::to_string(e.from_x) + "," + e.source;
  }
  return out;
}

io::RgbImage apply_edits(const io::RgbImage& picture, int patch, const std::vector<EditOp>& ops,
                         const std::function<io::RgbImage(const std::string&)>& load) {
  if (patch < 1) throw std::invalid_argument("apply_edits: the patch must be at least 1 pixel");
  io::RgbImage out = picture;
  const int rows = (picture.height + patch - 1) / patch, cols = (picture.width + patch - 1) / patch;
  for (const EditOp& e : ops) {
    const std::string what = edits_text({e});
    if (e.size < 1)
      throw std::invalid_argument("edit '" + what + "': the size is at least 1 token");
    if (e.y < 0 || e.x < 0 || e.y >= rows || e.x >= cols)
      throw std::invalid_argument("edit '" + what + "': token (" + std::to_string(e.y) + ", " +
                                  std::to_string(e.x) + ") is outside the " + std::to_string(rows) +
                                  "x" + std::to_string(cols) + " grid");
    // The square's pixels, clipped to the picture.
    const int y0 = e.y * patch, x0 = e.x * patch;
    const int y1 = std::min(picture.height, y0 + e.size * patch);
    const int x1 = std::min(picture.width, x0 + e.size * patch);
    const auto at = [&](io::RgbImage& im, int y, int x, int c) -> uint8_t& {
      return im.rgb[(size_t(y) * size_t(im.width) + size_t(x)) * 3 + size_t(c)];
    };
    if (e.kind == EditOp::Kind::Occlude || e.kind == EditOp::Kind::Paint) {
      for (int y = y0; y < y1; ++y)
        for (int x = x0; x < x1; ++x)
          for (int c = 0; c < 3; ++c) at(out, y, x, c) = e.color[size_t(c)];
    } else if (e.kind == EditOp::Kind::Blur) {
      // A box blur of one patch's width over the square, reading the picture as it was
      // before this operation (so the square's edge blends with its surroundings).
      const io::RgbImage before = out;
      const int r = std::max(1, patch / 2);
      for (int y = y0; y < y1; ++y)
        for (int x = x0; x < x1; ++x)
          for (int c = 0; c < 3; ++c) {
            int sum = 0, n = 0;
            for (int yy = std::max(0, y - r); yy <= std::min(picture.height - 1, y + r); ++yy)
              for (int xx = std::max(0, x - r); xx <= std::min(picture.width - 1, x + r); ++xx) {
                sum += before.rgb[(size_t(yy) * size_t(before.width) + size_t(xx)) * 3 + size_t(c)];
                ++n;
              }
            at(out, y, x, c) = uint8_t((sum + n / 2) / n);
          }
    } else {  // Paste
      if (!load) throw std::invalid_argument("edit '" + what + "': no way to read " + e.source);
      const io::RgbImage src = load(e.source);
      if (src.width != picture.width || src.height != picture.height)
        throw std::invalid_argument("edit '" + what + "': " + e.source + " is " +
                                    std::to_string(src.width) + "x" + std::to_string(src.height) +
                                    " at the model's input, not " + std::to_string(picture.width) +
                                    "x" + std::to_string(picture.height));
      io::RgbImage source_copy = src;
      for (int y = y0; y < y1; ++y)
        for (int x = x0; x < x1; ++x) {
          const int sy = e.from_y * patch + (y - y0), sx = e.from_x * patch + (x - x0);
          if (sy < 0 || sx < 0 || sy >= src.height || sx >= src.width) continue;
          for (int c = 0; c < 3; ++c) at(out, y, x, c) = at(source_copy, sy, sx, c);
        }
    }
  }
  return out;
}

}  // namespace attnlab::image
