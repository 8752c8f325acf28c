// The clean-up steps on their own (spec steps 1-5) with facts the 50 cases do not cover:
// html.unescape's legacy names and numeric rules, ftfy's entity rule, line breaks (CR alone,
// U+2028), widths, ligatures, C1 controls, NFC, lower() with final sigma, the pre-tokenizer.
// Expected values come from Python 3.11 (html, str.lower, unicodedata) and ftfy 6.3.1's rules.
#include <gtest/gtest.h>

#include "core/text/html_unescape.h"
#include "core/text/nfc.h"
#include "core/text/text_fixing.h"
#include "core/text/unicode_tables.h"
#include "core/text/utf8.h"
#include "tests/text/clip_cases.h"

namespace {

using attnlab::testing::clip_tokenizer;
using attnlab::text::decode_utf8;
using attnlab::text::encode_utf8;
using attnlab::text::fix_text;

std::string unescape(const std::string& s) {
  return encode_utf8(attnlab::text::python_html_unescape(decode_utf8(s, "test")));
}

TEST(HtmlUnescape, PythonRules) {
  // Legacy names need no ';'; unknown names fall back to their longest legacy prefix.
  EXPECT_EQ(unescape("&amp &ampx &notit; &#128; &#x110000; &#0; &#1; &lt"),
            "& &x \xC2\xACit; \xE2\x82\xAC \xEF\xBF\xBD \xEF\xBF\xBD  <");
  EXPECT_EQ(unescape("&CounterClockwiseContourIntegral; &#59; &#X41 &# &#x;"),
            "\xE2\x88\xB3 ; A &# &#x;");
  EXPECT_EQ(unescape("&EACUTE; no & here"), "&EACUTE; no & here");
  // Python's int() refuses more than 4300 decimal digits: the reference raises.
  EXPECT_THROW(unescape("&#" + std::string(4301, '1') + ";"), attnlab::text::TextError);
  // The limit counts leading zeros too: 4300 digits pass, 4301 do not.
  EXPECT_EQ(unescape("&#" + std::string(4298, '0') + "65;"), "A");
  EXPECT_THROW(unescape("&#" + std::string(4299, '0') + "65;"), attnlab::text::TextError);
}

TEST(FtfyFix, EntityRule) {
  EXPECT_EQ(fix_text("&EACUTE; &eacute; &Eacute; &AMP; &amp &SZLIG;"),
            "\xC3\x89 \xC3\xA9 \xC3\x89 & &amp SS");
  EXPECT_EQ(fix_text("&#59; &#65; &#x263a;"), "&#59; A \xE2\x98\xBA");
  // Names longer than 24 characters are left to html.unescape.
  EXPECT_EQ(fix_text("&CounterClockwiseContourIntegral;"), "&CounterClockwiseContourIntegral;");
  // A literal '<' turns the fix off for its line and the lines after it, not before.
  EXPECT_EQ(fix_text("&amp;\n< &amp;\n&amp;"), "&\n< &amp;\n&amp;");
  EXPECT_EQ(fix_text("&amp;amp;lt;"), "<");
}

TEST(FtfyFix, LineBreaksAndSpaces) {
  EXPECT_EQ(fix_text("a\rb\r\nc\xE2\x80\xA8"
                     "d\xE2\x80\xA9"
                     "e"),
            "a\nb\nc\nd\ne");
  // U+0085 is a C1 control first: ftfy turns it into Windows-1252's ellipsis.
  EXPECT_EQ(fix_text("a\xC2\x85"
                     "b"),
            "a\xE2\x80\xA6"
            "b");
  EXPECT_EQ(clip_tokenizer().clean("one\rtwo\xE2\x80\xA8three"), "one two three");
}

TEST(FtfyFix, WidthLigaturesQuotesControls) {
  EXPECT_EQ(fix_text("\xEF\xBC\xA1\xE3\x80\x80\xEF\xBD\xB1"), "A \xE3\x82\xA2");    // Ａ　ｱ
  EXPECT_EQ(fix_text("\xEF\xAC\x85 \xC4\xB2 \xC7\x86"), "\xC5\xBFt IJ d\xC5\xBE");  // ﬅ Ĳ ǆ
  EXPECT_EQ(fix_text("\xCA\xBC"
                     "a\xE2\x80\x9B"
                     "b\xE2\x80\x9F"),
            "'a'b\"");
  EXPECT_EQ(fix_text("a\x01\x0B\x7F"
                     "b\xEF\xBB\xBF"
                     "c\xE2\x80\x8B"
                     "d\t\x0C"),
            "abc\xE2\x80\x8B"
            "d\t\x0C");
  EXPECT_EQ(fix_text("\x1B[1;31mred\x1B[0m \x1B[x \x1B[1"), "red  [1");  // a lone ESC is a control
  EXPECT_EQ(fix_text("\xC2\x80\xC2\x81\xC2\x9F"), "\xE2\x82\xAC\xC2\x81\xC5\xB8");  // C1 -> 1252
}

TEST(FtfyFix, Mojibake) {
  EXPECT_EQ(fix_text("caf\xC3\x83\xC2\xA9"), "caf\xC3\xA9");  // cafÃ© -> café
  // Twice encoded: repaired until nothing changes.
  EXPECT_EQ(fix_text("\xC3\x83\xC2\x83\xC3\x82\xC2\xA9"), "\xC3\xA9");
  // Ordinary accented text stays.
  const std::string plain =
      "Ana Mar\xC3\xAD"
      "a, \xC3\x80 la carte, \xC3\x89 um";
  EXPECT_EQ(fix_text(plain), plain);
}

TEST(Nfc, MatchesPython) {
  auto n = [](const std::string& s) {
    return encode_utf8(attnlab::text::nfc(decode_utf8(s, "t")));
  };
  // Hangul jamo compose; ogonek (202) sorts before acute (230) and both compose; U+0958 is a
  // composition exclusion; U+212B (angstrom) is a singleton.
  EXPECT_EQ(n("\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8 a\xCC\x81\xCC\xA8 \xE0\xA5\x98 \xE2\x84\xAB"),
            "\xEA\xB0\x81 \xC4\x85\xCC\x81 \xE0\xA4\x95\xE0\xA4\xBC \xC3\x85");
}

TEST(PythonLower, FinalSigmaAndDottedI) {
  auto low = [](const std::string& s) {
    return encode_utf8(attnlab::text::python_lower(decode_utf8(s, "t")));
  };
  // 'ΣΑΣ. Σ ΑΣ1 ΑΣ\u0301' -> 'σας. σ ας1 ας́'
  EXPECT_EQ(low("\xCE\xA3\xCE\x91\xCE\xA3. \xCE\xA3 \xCE\x91\xCE\xA3"
                "1 \xCE\x91\xCE\xA3\xCC\x81"),
            "\xCF\x83\xCE\xB1\xCF\x82. \xCF\x83 \xCE\xB1\xCF\x82"
            "1 \xCE\xB1\xCF\x82\xCC\x81");
  EXPECT_EQ(low("\xC4\xB0I"), "i\xCC\x87i");
}

TEST(PreTokenize, PiecesAndClasses) {
  auto toks = [](const std::string& s) { return clip_tokenizer().bpe_tokens(s); };
  // NBSP, U+2003 and U+3000 are spaces; U+001C is not White_Space (a symbol run), and ftfy
  // removes it anyway.
  EXPECT_EQ(toks("a\xC2\xA0"
                 "b\xE2\x80\x83"
                 "c\xE3\x80\x80"
                 "d"),
            (std::vector<std::string>{"a</w>", "b</w>", "c</w>", "d</w>"}));
  // A contraction only where a piece starts: "!!'" is one run (BPE: "!!" "'</w>"), then "s";
  // as pieces "!!" + "'s" it would give "!!</w>" "'s</w>".
  EXPECT_EQ(toks("!!'s"), (std::vector<std::string>{"!!", "'</w>", "s</w>"}));
  EXPECT_EQ(toks("it's"), (std::vector<std::string>{"it</w>", "'s</w>"}));
  EXPECT_EQ(clip_tokenizer().encode("2024"), clip_tokenizer().encode("2 0 2 4"));
}

}  // namespace
