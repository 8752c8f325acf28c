// See sweep_sizes.h.
#include "app/gui/workspace/sweep_sizes.h"

#include <cstdlib>
#include <stdexcept>

#include "core/io/text.h"

namespace attnlab::gui {

std::vector<int64_t> parse_sweep_sizes(const std::string& text) {
  std::vector<int64_t> sizes;
  for (std::string item : text::split(text)) {
    // Spaces around an item are what a person types after a comma.
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    char* end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 1 || v > 4096)
      throw std::invalid_argument("'" + item + "' is not an input size in pixels (1 to 4096)");
    sizes.push_back(v);
  }
  if (sizes.size() < 2)
    throw std::invalid_argument("a sweep needs two or more sizes, e.g. 28,42,56");
  return sizes;
}

std::string default_sweep_sizes(const std::vector<int64_t>& input_size) {
  if (input_size.size() != 2 || input_size[0] != input_size[1] || input_size[0] < 2) return "";
  const int64_t s = input_size[0];
  return std::to_string(s) + "," + std::to_string(s * 3 / 2) + "," + std::to_string(2 * s);
}

}  // namespace attnlab::gui
