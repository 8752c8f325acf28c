// Both unescapers scan left to right and never re-scan their own output, like re.sub.
#include "core/text/html_unescape.h"

#include "core/text/text_error.h"
#include "core/text/unicode_tables.h"
#include "core/text/utf8.h"

namespace attnlab::text {
namespace {

bool is_ascii_digit(char32_t c) {
  return c >= '0' && c <= '9';
}
bool is_hex_digit(char32_t c) {
  return is_ascii_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool is_ascii_alnum(char32_t c) {
  return is_ascii_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
int hex_value(char32_t c) {
  if (c <= '9') return int(c - '0');
  return int((c | 0x20) - 'a' + 10);
}

// html's _replace_charref for a number already parsed (saturated past U+10FFFF).
std::u32string charref(uint64_t num) {
  if (num <= 0x9F) {
    if (const char* r = invalid_charref(char32_t(num))) return decode_utf8(r, "a table entry");
  }
  if ((num >= 0xD800 && num <= 0xDFFF) || num > 0x10FFFF) return U"\uFFFD";
  if (is_invalid_codepoint(char32_t(num))) return U"";
  return std::u32string(1, char32_t(num));
}

// Named references: the whole name, else its longest prefix of at least 2 characters that
// is an HTML5 name (only the legacy names without ';' can be such prefixes).
std::u32string named_ref(const std::u32string& name) {
  std::string utf8 = encode_utf8(name);
  if (const char* v = html5_entity(utf8)) return decode_utf8(v, "a table entry");
  for (size_t x = name.size() - 1; x >= 2; --x) {
    std::string prefix = encode_utf8(name.substr(0, x));
    if (const char* v = html5_entity(prefix))
      return decode_utf8(v, "a table entry") + name.substr(x);
  }
  return U"&" + name;
}

}  // namespace

std::u32string python_html_unescape(const std::u32string& s) {
  if (s.find(U'&') == std::u32string::npos) return s;
  std::u32string out;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] != U'&' || i + 1 >= s.size()) {
      out += s[i++];
      continue;
    }
    size_t p = i + 1;
    if (s[p] == U'#' && p + 1 < s.size() && is_ascii_digit(s[p + 1])) {
      size_t q = p + 1;
      uint64_t num = 0;
      while (q < s.size() && is_ascii_digit(s[q])) {
        num = num > 0x10FFFF ? num : num * 10 + (s[q] - U'0');
        ++q;
      }
      if (q - (p + 1) > 4300)
        throw TextError(
            "html.unescape (CLIP's basic_clean) raises ValueError on a decimal character "
            "reference of more than 4300 digits (Python's int() limit); this text cannot be "
            "tokenized as CLIP does");
      if (q < s.size() && s[q] == U';') ++q;
      out += charref(num);
      i = q;
    } else if (s[p] == U'#' && p + 2 < s.size() && (s[p + 1] == U'x' || s[p + 1] == U'X') &&
               is_hex_digit(s[p + 2])) {
      size_t q = p + 2;
      uint64_t num = 0;
      while (q < s.size() && is_hex_digit(s[q])) {
        num = num > 0x10FFFF ? num : num * 16 + hex_value(s[q]);
        ++q;
      }
      if (q < s.size() && s[q] == U';') ++q;
      out += charref(num);
      i = q;
    } else {
      // [^\t\n\f <&#;]{1,32};?
      size_t q = p;
      while (q < s.size() && q - p < 32) {
        char32_t c = s[q];
        if (c == U'\t' || c == U'\n' || c == U'\f' || c == U' ' || c == U'<' || c == U'&' ||
            c == U'#' || c == U';')
          break;
        ++q;
      }
      if (q == p) {
        out += s[i++];
        continue;
      }
      if (q < s.size() && s[q] == U';') ++q;
      out += named_ref(s.substr(p, q - p));
      i = q;
    }
  }
  return out;
}

std::u32string ftfy_unescape_entities(const std::u32string& s) {
  std::u32string out;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] != U'&') {
      out += s[i++];
      continue;
    }
    size_t p = i + 1;
    bool numeric = p < s.size() && s[p] == U'#';
    if (numeric) ++p;
    size_t q = p;
    while (q < s.size() && is_ascii_alnum(s[q])) ++q;
    if (q == p || q - p > 24 || q >= s.size() || s[q] != U';') {
      out += s[i++];
      continue;
    }
    std::u32string match = s.substr(i, q + 1 - i);
    std::string name = encode_utf8(match.substr(1));  // without '&'
    const char* value = numeric ? nullptr : html5_entity(name);
    if (value && name.back() == ';') {
      out += decode_utf8(value, "a table entry");
    } else if (const char* upper = numeric ? nullptr : upper_entity(name)) {
      out += decode_utf8(upper, "a table entry");
    } else if (numeric) {
      std::u32string decoded = python_html_unescape(match);
      out += decoded.find(U';') == std::u32string::npos ? decoded : match;
    } else {
      out += match;
    }
    i = q + 1;
  }
  return out;
}

}  // namespace attnlab::text
