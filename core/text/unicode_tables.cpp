// Lookups over the generated tables: binary searches over sorted ranges and runs, and hash
// maps built once for the decompositions and compositions (NFC runs on every text).
#include "core/text/unicode_tables.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "core/text/utf8.h"

namespace attnlab::text {
namespace {

bool in_ranges(const tables::Range* r, size_t n, char32_t c) {
  const tables::Range* end = r + n;
  const tables::Range* it =
      std::upper_bound(r, end, c, [](char32_t v, const tables::Range& x) { return v < x.lo; });
  return it != r && c <= (it - 1)->hi;
}

// The run covering c whose stride reaches it, or nullptr.
const tables::CaseRun* find_run(const tables::CaseRun* r, size_t n, char32_t c) {
  const tables::CaseRun* end = r + n;
  const tables::CaseRun* it =
      std::upper_bound(r, end, c, [](char32_t v, const tables::CaseRun& x) { return v < x.lo; });
  if (it == r) return nullptr;
  --it;
  if (c > it->hi || (c - it->lo) % it->step != 0) return nullptr;
  return it;
}

const char* find_entity(const tables::Entity* e, size_t n, const std::string& name) {
  const tables::Entity* end = e + n;
  const tables::Entity* it = std::lower_bound(
      e, end, name,
      [](const tables::Entity& x, const std::string& v) { return v.compare(x.name) > 0; });
  return it != end && name == it->name ? it->utf8 : nullptr;
}

const char* find_expansion(const tables::Expansion* e, size_t n, char32_t c) {
  for (size_t i = 0; i < n; ++i)
    if (e[i].cp == c) return e[i].utf8;
  return nullptr;
}

}  // namespace

bool is_letter(char32_t c) {
  return in_ranges(tables::kLetters, tables::kLettersCount, c);
}
bool is_number(char32_t c) {
  return in_ranges(tables::kNumbers, tables::kNumbersCount, c);
}
bool is_white_space(char32_t c) {
  return in_ranges(tables::kWhiteSpace, tables::kWhiteSpaceCount, c);
}
bool is_python_space(char32_t c) {
  return (c >= 0x1C && c <= 0x1F) || is_white_space(c);
}
bool is_decimal_digit(char32_t c) {
  return in_ranges(tables::kDecimals, tables::kDecimalsCount, c);
}

std::u32string python_lower(const std::u32string& s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char32_t c = s[i];
    if (c == 0x130) {  // the one code point whose lower() is two: i + combining dot above
      out += U"i\u0307";
    } else if (c == 0x3A3) {
      // Final_Sigma as Python applies it: a cased letter before (skipping case-ignorable
      // ones), and no cased letter after (skipping case-ignorable ones).
      auto ignorable = [](char32_t x) {
        return in_ranges(tables::kCaseIgnorable, tables::kCaseIgnorableCount, x);
      };
      auto cased = [](char32_t x) { return in_ranges(tables::kCased, tables::kCasedCount, x); };
      size_t j = i;
      while (j > 0 && ignorable(s[j - 1])) --j;
      bool final_sigma = j > 0 && cased(s[j - 1]);
      if (final_sigma) {
        size_t k = i + 1;
        while (k < s.size() && ignorable(s[k])) ++k;
        final_sigma = k == s.size() || !cased(s[k]);
      }
      out += final_sigma ? char32_t(0x3C2) : char32_t(0x3C3);
    } else if (const tables::CaseRun* r =
                   find_run(tables::kLowerRuns, tables::kLowerRunsCount, c)) {
      out += char32_t(int64_t(c) + r->delta);
    } else {
      out += c;
    }
  }
  return out;
}

uint8_t combining_class(char32_t c) {
  const auto* r = tables::kCombiningClasses;
  const auto* end = r + tables::kCombiningClassesCount;
  const auto* it = std::upper_bound(
      r, end, c, [](char32_t v, const tables::CombiningClass& x) { return v < x.lo; });
  return it != r && c <= (it - 1)->hi ? (it - 1)->ccc : 0;
}

const tables::Decomposition* canonical_decomposition(char32_t c) {
  const auto* r = tables::kDecompositions;
  const auto* end = r + tables::kDecompositionsCount;
  const auto* it = std::lower_bound(
      r, end, c, [](const tables::Decomposition& x, char32_t v) { return x.cp < v; });
  return it != end && it->cp == c ? it : nullptr;
}

char32_t primary_composite(char32_t a, char32_t b) {
  static const std::unordered_map<uint64_t, char32_t> pairs = [] {
    std::unordered_map<uint64_t, char32_t> m;
    for (size_t i = 0; i < tables::kDecompositionsCount; ++i) {
      const auto& d = tables::kDecompositions[i];
      if (d.composes) m[(uint64_t(d.first) << 32) | d.second] = d.cp;
    }
    return m;
  }();
  auto it = pairs.find((uint64_t(a) << 32) | b);
  return it == pairs.end() ? 0 : it->second;
}

bool append_width_replacement(char32_t c, std::u32string& out) {
  if (c != 0x3000 && (c < 0xFF01 || c > 0xFFEF)) return false;
  if (const char* e = find_expansion(tables::kWidthExpansions, tables::kWidthExpansionsCount, c)) {
    out += decode_utf8(e, "a width table entry");
    return true;
  }
  const tables::CaseRun* r = find_run(tables::kWidthRuns, tables::kWidthRunsCount, c);
  if (!r) return false;
  out += char32_t(int64_t(c) + r->delta);
  return true;
}

bool append_ligature_replacement(char32_t c, std::u32string& out) {
  const char* e = find_expansion(tables::kLigatures, tables::kLigaturesCount, c);
  if (!e) return false;
  out += decode_utf8(e, "a ligature table entry");
  return true;
}

const char* html5_entity(const std::string& name) {
  return find_entity(tables::kHtml5Entities, tables::kHtml5EntitiesCount, name);
}
const char* upper_entity(const std::string& name) {
  return find_entity(tables::kUpperEntities, tables::kUpperEntitiesCount, name);
}
const char* invalid_charref(char32_t number) {
  for (size_t i = 0; i < tables::kInvalidCharRefsCount; ++i)
    if (tables::kInvalidCharRefs[i].number == number) return tables::kInvalidCharRefs[i].utf8;
  return nullptr;
}
bool is_invalid_codepoint(char32_t number) {
  return in_ranges(tables::kInvalidCodepoints, tables::kInvalidCodepointsCount, number);
}

}  // namespace attnlab::text
