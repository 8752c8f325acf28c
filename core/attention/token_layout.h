// Where each token of a sequence sits: an H×W grid (row-major, token = prefix + y·W + x)
// after a number of named prefix tokens (cls, dist). Analyses never assume a square grid
// or a single cls token; every attention call carries one of these.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnlab::attention {

struct TokenLayout {
  int64_t height = 0;               // grid rows (H)
  int64_t width = 0;                // grid columns (W)
  std::vector<std::string> prefix;  // names of the tokens before the grid, in order
  int stage = 0;                    // 0-based stage of a hierarchical backbone

  int64_t num_prefix() const { return static_cast<int64_t>(prefix.size()); }
  int64_t grid_tokens() const { return height * width; }
  int64_t tokens() const { return num_prefix() + grid_tokens(); }

  // Token index of grid cell (y, x).
  int64_t token_at(int64_t y, int64_t x) const { return num_prefix() + y * width + x; }
  bool is_prefix(int64_t token) const { return token < num_prefix(); }
  // The prefix tokens that are registers (DINOv2's "reg0", "reg1", ...: learned tokens
  // after cls that no output reads), as token indices; empty for a model without them.
  std::vector<int64_t> register_tokens() const;

  // "14×14 grid + cls, stage 2" — for messages and labels.
  std::string describe() const;
};

// A plain grid: no prefix tokens.
TokenLayout grid_layout(int64_t height, int64_t width, int stage = 0);

}  // namespace attnlab::attention
