// Strict UTF-8 decoding and Python's replacement decoding, following the Unicode table of
// well-formed byte sequences (the ranges that rule out overlongs and surrogates).
#include "core/text/utf8.h"

#include <cstdio>

#include "core/text/text_error.h"

namespace attnlab::text {

size_t utf8_sequence_length(std::string_view bytes, size_t i, size_t* maximal) {
  auto at = [&](size_t k) { return static_cast<uint8_t>(bytes[k]); };
  uint8_t b = at(i);
  if (b < 0x80) return 1;
  size_t need = 0;
  uint8_t lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (b >= 0xC2 && b <= 0xDF) {
    need = 1;
  } else if (b >= 0xE0 && b <= 0xEF) {
    need = 2;
    if (b == 0xE0) lo = 0xA0;
    if (b == 0xED) hi = 0x9F;
  } else if (b >= 0xF0 && b <= 0xF4) {
    need = 3;
    if (b == 0xF0) lo = 0x90;
    if (b == 0xF4) hi = 0x8F;
  }
  size_t ok = 1;  // bytes of a valid prefix so far
  if (need > 0) {
    for (size_t k = 1; k <= need && i + k < bytes.size(); ++k) {
      uint8_t c = at(i + k);
      bool good = k == 1 ? (c >= lo && c <= hi) : (c >= 0x80 && c <= 0xBF);
      if (!good) break;
      ++ok;
    }
    if (ok == need + 1) return ok;
  }
  if (maximal) *maximal = ok;
  return 0;
}

bool is_valid_utf8(std::string_view bytes) {
  for (size_t i = 0; i < bytes.size();) {
    size_t n = utf8_sequence_length(bytes, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

namespace {
char32_t decode_one(std::string_view bytes, size_t i, size_t n) {
  auto at = [&](size_t k) { return static_cast<uint8_t>(bytes[k]); };
  if (n == 1) return at(i);
  char32_t c = at(i) & (0xFF >> (n + 1));
  for (size_t k = 1; k < n; ++k) c = (c << 6) | (at(i + k) & 0x3F);
  return c;
}
}  // namespace

std::u32string decode_utf8(std::string_view bytes, const char* what) {
  std::u32string out;
  out.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    size_t n = utf8_sequence_length(bytes, i);
    if (n == 0) {
      char msg[64];
      std::snprintf(msg, sizeof msg, "byte 0x%02X at offset %zu",
                    static_cast<unsigned>(static_cast<uint8_t>(bytes[i])), i);
      throw TextError(std::string(what) + " is not valid UTF-8: ill-formed sequence at " + msg);
    }
    out += decode_one(bytes, i, n);
    i += n;
  }
  return out;
}

std::string decode_utf8_replace(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    size_t maximal = 1;
    size_t n = utf8_sequence_length(bytes, i, &maximal);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      i += maximal;
    } else {
      out.append(bytes.substr(i, n));
      i += n;
    }
  }
  return out;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += char(c);
  } else if (c < 0x800) {
    out += char(0xC0 | (c >> 6));
    out += char(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += char(0xE0 | (c >> 12));
    out += char(0x80 | ((c >> 6) & 0x3F));
    out += char(0x80 | (c & 0x3F));
  } else {
    out += char(0xF0 | (c >> 18));
    out += char(0x80 | ((c >> 12) & 0x3F));
    out += char(0x80 | ((c >> 6) & 0x3F));
    out += char(0x80 | (c & 0x3F));
  }
}

std::string encode_utf8(std::u32string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : s) append_utf8(out, c);
  return out;
}

}  // namespace attnlab::text
