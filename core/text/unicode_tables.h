// The character data the tokenizer needs, generated from Python 3.11's standard library
// (scripts/make_unicode_tables.py writes unicode_data.cpp, html_entity_data.cpp and
// codepage_data.cpp), and the lookups over it. Everything works on code points (char32_t).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace attnlab::text {

namespace tables {
struct Range {
  char32_t lo, hi;
};
// Code points lo, lo + step, ..., hi each map to cp + delta.
struct CaseRun {
  char32_t lo, hi;
  uint8_t step;
  int32_t delta;
};
struct CombiningClass {
  char32_t lo, hi;
  uint8_t ccc;
};
struct Decomposition {
  char32_t cp, first, second;  // second == 0: a singleton
  bool composes;               // a primary composite: NFC composes first + second to cp
};
struct Expansion {
  char32_t cp;
  const char* utf8;
};
struct Entity {
  const char* name;  // without '&'
  const char* utf8;
};
struct CharRef {
  char32_t number;
  const char* utf8;
};
struct CodePage {
  const char* name;
  char32_t high[128];  // bytes 0x80-0xFF
  char32_t sub;        // byte 0x1A
};

#define ATTNLAB_TEXT_TABLE(type, name) \
  extern const type name[];            \
  extern const size_t name##Count;
ATTNLAB_TEXT_TABLE(Range, kLetters)
ATTNLAB_TEXT_TABLE(Range, kNumbers)
ATTNLAB_TEXT_TABLE(Range, kDecimals)
ATTNLAB_TEXT_TABLE(Range, kWhiteSpace)
ATTNLAB_TEXT_TABLE(CaseRun, kLowerRuns)
ATTNLAB_TEXT_TABLE(Range, kCased)
ATTNLAB_TEXT_TABLE(Range, kCaseIgnorable)
ATTNLAB_TEXT_TABLE(CombiningClass, kCombiningClasses)
ATTNLAB_TEXT_TABLE(Decomposition, kDecompositions)
ATTNLAB_TEXT_TABLE(CaseRun, kWidthRuns)
ATTNLAB_TEXT_TABLE(Expansion, kWidthExpansions)
ATTNLAB_TEXT_TABLE(Expansion, kLigatures)
ATTNLAB_TEXT_TABLE(Entity, kHtml5Entities)
ATTNLAB_TEXT_TABLE(Entity, kUpperEntities)
ATTNLAB_TEXT_TABLE(CharRef, kInvalidCharRefs)
ATTNLAB_TEXT_TABLE(Range, kInvalidCodepoints)
ATTNLAB_TEXT_TABLE(CodePage, kCodePages)
#undef ATTNLAB_TEXT_TABLE
}  // namespace tables

// The pre-tokenizer's classes (the regex module's \p{L}, \p{N}, \s).
bool is_letter(char32_t c);
bool is_number(char32_t c);
bool is_white_space(char32_t c);
// Python's str.isspace (White_Space plus U+001C-U+001F): what str.strip() removes.
bool is_python_space(char32_t c);
// Nd: Python re's \d.
bool is_decimal_digit(char32_t c);

// Python 3.11's str.lower(): the full mapping (U+0130 -> i + U+0307) and Final_Sigma.
std::u32string python_lower(const std::u32string& s);

uint8_t combining_class(char32_t c);
// The canonical one-level decomposition, or nullptr.
const tables::Decomposition* canonical_decomposition(char32_t c);
// The primary composite of a + b, or 0.
char32_t primary_composite(char32_t a, char32_t b);

// ftfy's replacements: append what c becomes and return true, or return false when c stays.
bool append_width_replacement(char32_t c, std::u32string& out);  // fullwidth/halfwidth, U+3000
bool append_ligature_replacement(char32_t c, std::u32string& out);

// html.entities.html5[name] / ftfy's ALL-CAPS entity, or nullptr.
const char* html5_entity(const std::string& name);
const char* upper_entity(const std::string& name);
const char* invalid_charref(char32_t number);
bool is_invalid_codepoint(char32_t number);

}  // namespace attnlab::text
