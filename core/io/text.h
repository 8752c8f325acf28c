// Small text helpers every layer uses (header-only, no dependencies): joining names into
// one line ("known: a, b, c") and formatting a number to a number of significant digits
// as printf's %g does. One place, so every message and caption reads the same way.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace attnlab::text {

// "a, b, c" (or any separator); "" for no items.
inline std::string join(const std::vector<std::string>& items,
                        const std::string& separator = ", ") {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? separator : std::string()) + items[i];
  return out;
}

// "a,b,,c" -> {"a", "b", "", "c"}: empty items are kept, so callers can refuse them by
// name; "" gives no items.
inline std::vector<std::string> split(const std::string& text, char separator = ',') {
  std::vector<std::string> out;
  if (text.empty()) return out;
  size_t start = 0;
  for (size_t at = text.find(separator); at != std::string::npos;
       start = at + 1, at = text.find(separator, start))
    out.push_back(text.substr(start, at - start));
  out.push_back(text.substr(start));
  return out;
}

// v with `significant` significant digits, as "%.<significant>g" (6: what %g and an
// ostream's default give).
inline std::string format_g(double v, int significant = 6) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", significant, v);
  return buf;
}

}  // namespace attnlab::text
