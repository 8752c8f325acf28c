// UTF-8 <-> code points. Decoding is strict (what Python's str.decode('utf-8') accepts:
// no overlongs, no surrogates, nothing past U+10FFFF); decode_utf8_replace follows Python's
// errors='replace' (one U+FFFD per maximal ill-formed subsequence), which CLIP's decode uses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace attnlab::text {

// Throws TextError naming `what` and the byte offset of the first ill-formed sequence.
std::u32string decode_utf8(std::string_view bytes, const char* what);
// True when `bytes` is well-formed UTF-8.
bool is_valid_utf8(std::string_view bytes);
// Python's bytes.decode('utf-8', errors='replace'), as UTF-8.
std::string decode_utf8_replace(std::string_view bytes);

void append_utf8(std::string& out, char32_t c);
std::string encode_utf8(std::u32string_view s);

// Length of the well-formed sequence starting at bytes[i], or 0 when it is ill-formed;
// `maximal` receives the length of the maximal ill-formed subpart (>= 1) in that case.
size_t utf8_sequence_length(std::string_view bytes, size_t i, size_t* maximal = nullptr);

}  // namespace attnlab::text
