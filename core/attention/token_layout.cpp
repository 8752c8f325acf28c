// TokenLayout helpers.
#include "core/attention/token_layout.h"

namespace attnlab::attention {

std::string TokenLayout::describe() const {
  std::string s = std::to_string(height) + "\xC3\x97" + std::to_string(width) + " grid";
  for (const auto& p : prefix) s += " + " + p;
  s += ", stage " + std::to_string(stage);
  return s;
}

std::vector<int64_t> TokenLayout::register_tokens() const {
  std::vector<int64_t> out;
  for (size_t i = 0; i < prefix.size(); ++i) {
    const std::string& name = prefix[i];
    if (name.size() > 3 && name.compare(0, 3, "reg") == 0 &&
        name.find_first_not_of("0123456789", 3) == std::string::npos)
      out.push_back(int64_t(i));
  }
  return out;
}

TokenLayout grid_layout(int64_t height, int64_t width, int stage) {
  TokenLayout layout;
  layout.height = height;
  layout.width = width;
  layout.stage = stage;
  return layout;
}

}  // namespace attnlab::attention
