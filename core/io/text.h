// Small text helpers every layer uses (header-only, no dependencies): joining names into
// one line ("known: a, b, c") and formatting a number to a number of significant digits
// as printf's %g does. One place, so every message and caption reads the same way.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

// The shortest decimal that reads back as exactly `v`, so a stated value (a tolerance in an
// export, an option on a command line) is the one used, without noise digits: whole numbers
// as integers ("200"), others in %g form ("0.35", "1e-05"). plain: never an exponent
// ("0.00001"), for command lines that other tools parse too.
inline std::string shortest_decimal(double v, bool plain = false) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15)
    return std::to_string(static_cast<long long>(v));
  char buf[400];  // room for a plain form of the smallest doubles
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v && !(plain && std::strchr(buf, 'e'))) return buf;
  }
  if (plain && std::isfinite(v)) {  // a number whose %g needs an exponent at every precision
    for (int decimals = 1; decimals <= 340; ++decimals) {
      std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
      if (std::strtod(buf, nullptr) == v) return buf;
    }
  }
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace attnlab::text
