// ftfy's mojibake repair, as far as it can be reproduced without its badness tables.
//
// ftfy (6.3.1) leaves a line alone when it is pure ASCII or not "bad" (a score over its
// character-class tables, not ported here). Otherwise it tries ten single-byte code pages
// in order (latin-1, sloppy-windows-1252, -1251, -1250, -1253, -1254, -1257, iso-8859-2,
// macroman, cp437): the first one that encodes the whole line into bytes that decode as
// UTF-8 (after restoring spaces that stood for byte 0xA0, replacing lossy sequences, and
// with its utf-8-variants decoder when 0xED or 0xC0 appear) gives the fixed line. Failing
// that it repairs UTF-8 pieces inside the line, then turns C1 controls into Windows-1252.
//
// What this file does:
//  - latin-1 / sloppy-windows-1252: when the line encodes and its bytes are strict UTF-8
//    that differs from the line (some multi-byte sequence), the decoded bytes are the fix
//    ('cafÃ©' -> 'café'). Such a line is taken to be "bad"; this is the one assumption.
//  - Refused with TextError, because ftfy's heuristic may act and we cannot tell how:
//    (a) any other code page whose bytes decode (ftfy may pick it);
//    (b) a window of latin-1/sloppy-1252 characters that re-encodes into a well-formed
//        multi-byte UTF-8 sequence while the whole line does not (ftfy's piecewise repair);
//    (c) bytes that decode only with ftfy's byte-0xA0 restoring, its lossy-sequence
//        replacement, or its utf-8-variants decoder (0xED, 0xC0).
//  - C1 controls U+0080-U+009F: replaced by their Windows-1252 characters (the five bytes
//    Windows-1252 leaves undefined stay), as ftfy does whether or not the line is "bad".
#include "core/text/mojibake.h"

#include <algorithm>

#include "core/text/text_error.h"
#include "core/text/unicode_tables.h"
#include "core/text/utf8.h"

namespace attnlab::text {
namespace {

constexpr size_t kLatin1 = 0, kSloppy1252 = 1;

bool is_sloppy(size_t page) {
  return page >= 1 && page <= 6;
}

// The byte a code point encodes to in code page `page`, or -1.
int encode_char(size_t page, char32_t c) {
  const tables::CodePage& cp = tables::kCodePages[page];
  if (c < 0x80 && c != 0x1A) return int(c);
  if (c == cp.sub) return 0x1A;
  for (int b = 0; b < 128; ++b)
    if (cp.high[b] == c) return 0x80 + b;
  return -1;
}

bool encode_line(size_t page, const std::u32string& line, std::string& bytes) {
  bytes.clear();
  for (char32_t c : line) {
    int b = encode_char(page, c);
    if (b < 0) return false;
    bytes += char(b);
  }
  return true;
}

bool is_continuation(uint8_t b) {
  return b >= 0x80 && b <= 0xBF;
}

bool in(uint8_t b, uint8_t lo, uint8_t hi) {
  return b >= lo && b <= hi;
}
bool is_lossy(uint8_t b) {
  return b == 0x1A || b == '?';
}
bool is_cont_or_sub(uint8_t b) {
  return b == 0x1A || is_continuation(b);
}
bool is_a0_neighbour(uint8_t b) {
  return in(b, 0x80, 0x84) || in(b, 0x86, 0x9F) || in(b, 0xA1, 0xBF);
}

// Length of a sequence that ftfy's restore_byte_a0 (ALTERED_UTF8_RE: a space where 0xA0
// belonged) would turn into UTF-8 at bytes[i], else 0.
size_t altered_length(const std::string& s, size_t i) {
  auto at = [&](size_t k) { return k < s.size() ? static_cast<uint8_t>(s[k]) : uint8_t(0); };
  uint8_t b = at(i);
  if ((b == 0xC2 || b == 0xC3 || b == 0xC5 || b == 0xCE || b == 0xD0 || b == 0xD9) &&
      at(i + 1) == ' ')
    return 2;
  if ((b == 0xE2 || b == 0xE3) && at(i + 1) == ' ' && is_a0_neighbour(at(i + 2))) return 3;
  if (in(b, 0xE0, 0xE3) && is_a0_neighbour(at(i + 1)) && at(i + 2) == ' ') return 3;
  if (b == 0xF0) {
    int spaces = 0, conts = 0;
    for (size_t k = 1; k <= 3; ++k) {
      spaces += at(i + k) == ' ';
      conts += is_continuation(at(i + k));
    }
    if (spaces == 1 && conts == 2) return 4;
  }
  return 0;
}

// Length of a sequence that ftfy's replace_lossy_sequences (LOSSY_UTF8_RE, sloppy code pages
// only: 0x1A stands for a byte lost as U+FFFD, '?' at most once) would replace, else 0.
size_t lossy_length(const std::string& s, size_t i) {
  auto at = [&](size_t k) { return k < s.size() ? static_cast<uint8_t>(s[k]) : uint8_t(0); };
  uint8_t b = at(i);
  if (in(b, 0xC2, 0xDF) && at(i + 1) == 0x1A) return 2;
  if (in(b, 0xC2, 0xC3) && at(i + 1) == '?') return 2;
  if (b == 0xED && in(at(i + 1), 0xA0, 0xAF) && at(i + 3) == 0xED && in(at(i + 4), 0xB0, 0xBF)) {
    uint8_t x = at(i + 2), y = at(i + 5);
    if ((is_lossy(x) && (is_lossy(y) || is_continuation(y))) ||
        ((is_lossy(x) || is_continuation(x)) && is_lossy(y)))
      return 6;
  }
  size_t need = in(b, 0xE0, 0xEF) ? 2 : in(b, 0xF0, 0xF4) ? 3 : 0;
  if (need > 0) {
    int questions = 0, lossy = 0;
    bool ok = true;
    for (size_t k = 1; k <= need; ++k) {
      uint8_t c = at(i + k);
      questions += c == '?';
      lossy += is_lossy(c);
      ok = ok && (c == '?' || is_cont_or_sub(c));
    }
    if (ok && lossy > 0 && questions <= 1) return need + 1;
  }
  return b == 0x1A ? 1 : 0;
}

// Whether ftfy could decode these bytes: UTF-8 after its byte repairs, with its
// utf-8-variants decoder (C0 80 for U+0000, CESU-8 surrogate halves) -- loosely, so that a
// refusal covers every case ftfy might fix.
bool repairable_decodable(const std::string& bytes, bool sloppy) {
  for (size_t i = 0; i < bytes.size();) {
    uint8_t b = static_cast<uint8_t>(bytes[i]);
    size_t n = utf8_sequence_length(bytes, i);
    if (n == 0 && b == 0xC0 && i + 1 < bytes.size() && static_cast<uint8_t>(bytes[i + 1]) == 0x80)
      n = 2;
    if (n == 0 && b == 0xED && i + 2 < bytes.size() && is_continuation(bytes[i + 1]) &&
        is_continuation(bytes[i + 2]))
      n = 3;
    if (n == 0) n = altered_length(bytes, i);
    if (n == 0 && sloppy) n = lossy_length(bytes, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

[[noreturn]] void refuse(const std::string& text, const std::string& why) {
  throw TextError("ftfy's mojibake heuristic is not reproduced for the text \"" + text +
                  "\": " + why + "; repair the text's encoding first");
}

// (b): a well-formed multi-byte UTF-8 sequence inside the latin-1 or sloppy-1252 bytes of
// some run of characters.
bool has_embedded_utf8(const std::u32string& line, size_t page) {
  std::string run;
  auto check = [&]() {
    for (size_t i = 0; i < run.size(); ++i)
      if (static_cast<uint8_t>(run[i]) >= 0xC2 && utf8_sequence_length(run, i) > 1) return true;
    return false;
  };
  for (char32_t c : line) {
    int b = encode_char(page, c);
    if (b >= 0) {
      run += char(b);
      continue;
    }
    if (check()) return true;
    run.clear();
  }
  return check();
}

std::u32string c1_to_windows_1252(const std::u32string& line) {
  std::u32string out = line;
  for (char32_t& c : out)
    if (c >= 0x80 && c <= 0x9F) c = tables::kCodePages[kSloppy1252].high[c - 0x80];
  return out;
}

// One step of ftfy's fix_encoding; returns the line unchanged when there is nothing to do.
std::u32string fix_step(const std::u32string& line, const std::string& text) {
  if (std::all_of(line.begin(), line.end(), [](char32_t c) { return c < 0x80; })) return line;
  std::string bytes;
  for (size_t page = 0; page < tables::kCodePagesCount; ++page) {
    if (!encode_line(page, line, bytes)) continue;
    const char* name = tables::kCodePages[page].name;
    bool plain = is_valid_utf8(bytes);
    bool variant =
        bytes.find('\xED') != std::string::npos || bytes.find('\xC0') != std::string::npos;
    if (plain && !variant && !(is_sloppy(page) && bytes.find('\x1A') != std::string::npos)) {
      if (page == kLatin1 || page == kSloppy1252) return decode_utf8(bytes, "re-encoded text");
      refuse(text, std::string("it re-encodes in ") + name + " into UTF-8");
    }
    if (repairable_decodable(bytes, is_sloppy(page)))
      refuse(text,
             std::string("its ") + name + " bytes might decode as UTF-8 after ftfy's byte repairs");
  }
  if (has_embedded_utf8(line, kLatin1) || has_embedded_utf8(line, kSloppy1252))
    refuse(text, "part of it re-encodes in latin-1/windows-1252 into a UTF-8 sequence");
  return c1_to_windows_1252(line);
}

}  // namespace

std::u32string fix_mojibake(const std::u32string& line, const std::string& text_for_errors) {
  std::u32string text = line;
  for (;;) {
    std::u32string next = fix_step(text, text_for_errors);
    if (next == text) return text;
    text = std::move(next);
  }
}

}  // namespace attnlab::text
