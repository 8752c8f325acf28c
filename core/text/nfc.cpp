// NFC per UAX #15: Hangul syllables are (de)composed arithmetically, everything else from
// the tables. Composition pairs exclude what NFC never recomposes (the generator derived them
// from unicodedata itself, so exclusions and singletons are already left out).
#include "core/text/nfc.h"

#include <algorithm>

#include "core/text/unicode_tables.h"

namespace attnlab::text {
namespace {

constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount,
                   kSCount = kLCount * kNCount;

void decompose_into(char32_t c, std::u32string& out) {
  if (c >= kSBase && c < kSBase + kSCount) {
    char32_t s = c - kSBase;
    out += kLBase + s / kNCount;
    out += kVBase + (s % kNCount) / kTCount;
    if (s % kTCount) out += kTBase + s % kTCount;
    return;
  }
  const tables::Decomposition* d = canonical_decomposition(c);
  if (!d) {
    out += c;
    return;
  }
  decompose_into(d->first, out);
  if (d->second) decompose_into(d->second, out);
}

char32_t compose_pair(char32_t a, char32_t b) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount)
    return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase &&
      b < kTBase + kTCount)
    return a + (b - kTBase);
  return primary_composite(a, b);
}

}  // namespace

std::u32string nfc(const std::u32string& s) {
  // Plain ASCII is its own NFC; most prompts take this exit.
  if (std::all_of(s.begin(), s.end(), [](char32_t c) { return c < 0x80; })) return s;
  std::u32string d;
  d.reserve(s.size());
  for (char32_t c : s) decompose_into(c, d);
  // Canonical ordering: a stable sort of every run of non-starters by combining class.
  for (size_t i = 0; i < d.size();) {
    if (combining_class(d[i]) == 0) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < d.size() && combining_class(d[j]) != 0) ++j;
    std::stable_sort(d.begin() + i, d.begin() + j, [](char32_t a, char32_t b) {
      return combining_class(a) < combining_class(b);
    });
    i = j;
  }
  // Composition: each character joins the last starter unless something between blocks it
  // (a starter, or a non-starter of the same or a higher class).
  std::u32string out;
  out.reserve(d.size());
  size_t starter = std::u32string::npos;
  int last_class = -1;
  for (char32_t c : d) {
    int cc = combining_class(c);
    if (starter != std::u32string::npos) {
      bool adjacent = starter + 1 == out.size();
      bool blocked = !adjacent && (last_class == 0 || last_class >= cc);
      if (!blocked) {
        if (char32_t comp = compose_pair(out[starter], c)) {
          out[starter] = comp;
          continue;
        }
      }
    }
    if (cc == 0) starter = out.size();
    out += c;
    last_class = cc;
  }
  return out;
}

}  // namespace attnlab::text
