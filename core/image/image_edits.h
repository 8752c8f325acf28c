// What-if edits of an input picture (issue 48, item 5; LIT's datapoint editor for images):
// a list of operations in token units on the picture the model sees (after its resize
// and crop, before normalisation), applied in order — occlude a square of tokens with a
// flat colour, blur it, paint it, or paste a square of tokens from another picture. The
// list is data: it round-trips through JSON (the GUI's workspace) and a one-line text form
// (the CLI's `--edit`), so an edit can be saved, replayed and exported beside figures.
// LibTorch-free. (The GUI's painting and the CLI option that use it come next.)
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/io/image_io.h"

namespace attnlab::image {

struct EditOp {
  enum class Kind { Occlude, Blur, Paint, Paste };
  Kind kind = Kind::Occlude;
  int y = 0, x = 0;                             // the top-left token of the square
  int size = 1;                                 // its side, in tokens (the brush)
  std::array<uint8_t, 3> color{128, 128, 128};  // Occlude (grey) and Paint
  std::string source;                           // Paste: the picture the tokens come from
  int from_y = 0, from_x = 0;                   // Paste: its top-left token there
  bool operator==(const EditOp& o) const;
};

const char* edit_kind_name(EditOp::Kind kind);  // "occlude", "blur", "paint", "paste"

// "occlude:3,4,2;blur:0,0,1;paint:1,1,1,255,0,0;paste:2,2,1,3,3,other.png": kind:y,x,size
// then the colour (paint, optionally occlude) or from_y,from_x,source (paste). Throws
// std::invalid_argument naming the operation that does not parse.
std::vector<EditOp> parse_edits(const std::string& text);
std::string edits_text(const std::vector<EditOp>& ops);  // the same form back

// Applies the operations in order to a picture split into patch × patch tokens; a square
// reaching past the picture is clipped to it. `load` reads a paste's source picture (at the
// same size: it is brought through the same resize and crop by the caller). Throws
// std::invalid_argument for patch < 1, size < 1, a start outside the token grid, or a
// paste source of another size.
io::RgbImage apply_edits(const io::RgbImage& picture, int patch, const std::vector<EditOp>& ops,
                         const std::function<io::RgbImage(const std::string&)>& load = {});

}  // namespace attnlab::image
