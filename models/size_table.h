// A family's table of released sizes (LITv2's s/m/b, Swin's T/S/B, RAVLT's T/S/B/L): the
// one lookup by name and list of names every family with such a table uses, so each family
// file holds only its rows and how a row becomes a config.
#pragma once

#include <string>
#include <vector>

#include "core/io/text.h"
#include "models/backbone.h"

namespace attnlab::models {

// Rows are structs with a `name` member ("litv2_s").
template <class Size>
std::vector<std::string> size_names(const std::vector<Size>& sizes) {
  std::vector<std::string> names;
  for (const auto& size : sizes) names.push_back(size.name);
  return names;
}

// The row named `name`; throws ModelError "<family>: unknown official model '<name>'
// (known: ...)".
template <class Size>
const Size& size_named(const std::vector<Size>& sizes, const std::string& name,
                       const std::string& family) {
  for (const auto& size : sizes)
    if (name == size.name) return size;
  throw ModelError(family + ": unknown official model '" + name +
                   "' (known: " + text::join(size_names(sizes)) + ")");
}

}  // namespace attnlab::models
