// TokenLayout helpers.
#include "core/attention/token_layout.h"

namespace attnlab::attention {

std::string TokenLayout::describe() const {
  std::string s = std::to_string(height) + "\xC3\x97" + std::to_string(width) + " grid";
  for (const auto& p : prefix) s += " + " + p;
  s += ", stage " + std::to_string(stage);
  return s;
}

TokenLayout grid_layout(int64_t height, int64_t width, int stage) {
  TokenLayout layout;
  layout.height = height;
  layout.width = width;
  layout.stage = stage;
  return layout;
}

}  // namespace attnlab::attention
