// The list of input sizes the GUI's resolution sweep runs at (size_sweep_view.h), as typed
// in the sidebar or given to the script's sweep-sizes: parsing and the default. No
// LibTorch, so the script parser's tests check it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnlab::gui {

// "28,42,56" (spaces allowed around the items) → the sizes; two or more, each 1 to 4096
// pixels. Throws std::invalid_argument saying which item is wrong.
std::vector<int64_t> parse_sweep_sizes(const std::string& text);
// A model's input size {H, W} at 1, 1.5 and 2 times ("224,336,448"); "" when it has no
// square size (the image decides).
std::string default_sweep_sizes(const std::vector<int64_t>& input_size);

}  // namespace attnlab::gui
