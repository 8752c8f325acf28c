// fix_text: the text is cut after every '\n' (and every 1,000,000 characters, ftfy's
// max_decode_length) into segments; each runs the fixes in ftfy's order, round after round,
// until a round changes nothing. A literal '<' turns entity unescaping off for its segment
// and all later ones (ftfy takes the text for HTML then).
#include "core/text/text_fixing.h"

#include "core/text/html_unescape.h"
#include "core/text/mojibake.h"
#include "core/text/nfc.h"
#include "core/text/unicode_tables.h"
#include "core/text/utf8.h"

namespace attnlab::text {
namespace {

constexpr size_t kMaxDecodeLength = 1000000;

std::u32string fix_c1_controls(const std::u32string& s) {
  std::u32string out = s;
  for (char32_t& c : out)
    if (c >= 0x80 && c <= 0x9F) c = tables::kCodePages[1].high[c - 0x80];  // sloppy-1252
  return out;
}

std::u32string fix_ligatures_and_width(const std::u32string& s, bool width) {
  std::u32string out;
  out.reserve(s.size());
  for (char32_t c : s) {
    bool replaced = width ? append_width_replacement(c, out) : append_ligature_replacement(c, out);
    if (!replaced) out += c;
  }
  return out;
}

std::u32string uncurl_quotes(const std::u32string& s) {
  std::u32string out = s;
  for (char32_t& c : out) {
    if (c == 0x2BC || (c >= 0x2018 && c <= 0x201B)) c = U'\'';
    if (c >= 0x201C && c <= 0x201F) c = U'"';
  }
  return out;
}

// CR LF, CR, U+2028, U+2029 and U+0085 become '\n' (in that order of replacement).
std::u32string fix_line_breaks(const std::u32string& s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char32_t c = s[i];
    if (c == U'\r' && i + 1 < s.size() && s[i + 1] == U'\n') continue;  // the '\n' follows
    out += (c == U'\r' || c == 0x2028 || c == 0x2029 || c == 0x85) ? U'\n' : c;
  }
  return out;
}

// ESC '[' (digits | ';')* [A-Za-z], with Python re's Unicode \d.
std::u32string remove_terminal_escapes(const std::u32string& s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (s[i] == 0x1B && i + 1 < s.size() && s[i + 1] == U'[') {
      size_t j = i + 2;
      while (j < s.size() && (s[j] == U';' || is_decimal_digit(s[j]))) ++j;
      if (j < s.size() && ((s[j] >= U'a' && s[j] <= U'z') || (s[j] >= U'A' && s[j] <= U'Z'))) {
        i = j + 1;
        continue;
      }
    }
    out += s[i++];
  }
  return out;
}

bool is_removed_control(char32_t c) {
  return c <= 0x08 || c == 0x0B || (c >= 0x0E && c <= 0x1F) || c == 0x7F ||
         (c >= 0x206A && c <= 0x206F) || c == 0xFEFF || (c >= 0xFFF9 && c <= 0xFFFC);
}

std::u32string remove_control_chars(const std::u32string& s) {
  std::u32string out;
  out.reserve(s.size());
  for (char32_t c : s)
    if (!is_removed_control(c)) out += c;
  return out;
}

std::u32string fix_segment(const std::u32string& segment, bool unescape,
                           const std::string& text_for_errors) {
  std::u32string text = segment;
  for (;;) {
    std::u32string before = text;
    if (unescape) text = ftfy_unescape_entities(text);
    text = fix_mojibake(text, text_for_errors);
    text = fix_c1_controls(text);
    text = fix_ligatures_and_width(text, false);
    text = fix_ligatures_and_width(text, true);
    text = uncurl_quotes(text);
    text = fix_line_breaks(text);
    // fix_surrogates has nothing to do: text decoded from valid UTF-8 holds no surrogates,
    // and no fix above produces one.
    text = remove_terminal_escapes(text);
    text = remove_control_chars(text);
    text = nfc(text);
    if (text == before) return text;
  }
}

}  // namespace

std::u32string fix_text(const std::u32string& text, const std::string& text_for_errors) {
  std::u32string out;
  bool unescape = true;
  for (size_t pos = 0; pos < text.size();) {
    size_t newline = text.find(U'\n', pos);
    size_t end = newline == std::u32string::npos ? text.size() : newline + 1;
    if (end - pos > kMaxDecodeLength) end = pos + kMaxDecodeLength;
    std::u32string segment = text.substr(pos, end - pos);
    if (segment.find(U'<') != std::u32string::npos) unescape = false;
    out += fix_segment(segment, unescape, text_for_errors);
    pos = end;
  }
  return out;
}

std::string fix_text(const std::string& utf8) {
  return encode_utf8(fix_text(decode_utf8(utf8, "the text"), utf8));
}

}  // namespace attnlab::text
