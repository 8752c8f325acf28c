// Escaping text for XML and HTML (the SVG text layer, the report's index.html).
#pragma once

#include <string>

namespace attnlab::viz {

// &, <, > and " as entities; everything else (UTF-8 included) unchanged.
inline std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

}  // namespace attnlab::viz
