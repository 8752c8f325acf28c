// CLIP's tokenizer against the reference: every case of tokenizer_cases.json at every stage
// (ftfy_fixed, cleaned, bpe_tokens, bpe_ids, tokenize, truncate_false, decoded), and the
// vocabulary's facts (49,408 distinct entries, the byte symbols of step 6).
#include <gtest/gtest.h>

#include <set>

#include "core/text/clip_tokenizer.h"
#include "core/text/text_fixing.h"
#include "tests/text/clip_cases.h"

namespace {

using attnlab::testing::case_text;
using attnlab::testing::clip_cases;
using attnlab::testing::clip_tokenizer;
using attnlab::text::ClipTokenizer;
using attnlab::text::ClipVocab;
using attnlab::text::TextError;

TEST(ClipTokenizerCases, HeaderAndCount) {
  const auto& j = clip_cases();
  EXPECT_EQ(j.at("context_length").get<int>(), 77);
  EXPECT_EQ(j.at("sot").get<int64_t>(), ClipTokenizer::kStartOfText);
  EXPECT_EQ(j.at("eot").get<int64_t>(), ClipTokenizer::kEndOfText);
  EXPECT_EQ(j.at("cases").size(), 50u);
}

TEST(ClipTokenizerCases, Utf8HexMatchesText) {
  for (const auto& c : clip_cases().at("cases"))
    EXPECT_EQ(case_text(c), c.at("text").get<std::string>());
}

TEST(ClipTokenizerCases, FtfyFixed) {
  for (const auto& c : clip_cases().at("cases")) {
    SCOPED_TRACE(c.at("text").get<std::string>());
    EXPECT_EQ(attnlab::text::fix_text(case_text(c)), c.at("ftfy_fixed").get<std::string>());
  }
}

TEST(ClipTokenizerCases, Cleaned) {
  for (const auto& c : clip_cases().at("cases")) {
    SCOPED_TRACE(c.at("text").get<std::string>());
    EXPECT_EQ(clip_tokenizer().clean(case_text(c)), c.at("cleaned").get<std::string>());
  }
}

TEST(ClipTokenizerCases, BpeTokens) {
  for (const auto& c : clip_cases().at("cases")) {
    SCOPED_TRACE(c.at("text").get<std::string>());
    EXPECT_EQ(clip_tokenizer().bpe_tokens(case_text(c)),
              c.at("bpe_tokens").get<std::vector<std::string>>());
  }
}

TEST(ClipTokenizerCases, BpeIdsAndCounts) {
  for (const auto& c : clip_cases().at("cases")) {
    SCOPED_TRACE(c.at("text").get<std::string>());
    std::vector<int64_t> ids = clip_tokenizer().encode(case_text(c));
    EXPECT_EQ(ids, c.at("bpe_ids").get<std::vector<int64_t>>());
    EXPECT_EQ(int64_t(ids.size()) + 2, c.at("n_tokens").get<int64_t>());
    EXPECT_EQ(ids.size() + 2 > 77, c.at("truncated").get<bool>());
  }
}

TEST(ClipTokenizerCases, Tokenize) {
  for (const auto& c : clip_cases().at("cases")) {
    SCOPED_TRACE(c.at("text").get<std::string>());
    EXPECT_EQ(clip_tokenizer().tokenize(case_text(c)),
              c.at("tokenize").get<std::vector<int64_t>>());
  }
}

TEST(ClipTokenizerCases, TruncateFalse) {
  int truncated = 0;
  for (const auto& c : clip_cases().at("cases")) {
    SCOPED_TRACE(c.at("text").get<std::string>());
    if (!c.at("truncated").get<bool>()) {
      // Fits: truncate=false gives the same row.
      EXPECT_EQ(clip_tokenizer().tokenize(case_text(c), 77, false),
                c.at("tokenize").get<std::vector<int64_t>>());
      continue;
    }
    ++truncated;
    try {
      clip_tokenizer().tokenize(case_text(c), 77, false);
      ADD_FAILURE() << "no error";
    } catch (const TextError& e) {
      EXPECT_EQ("RuntimeError: " + std::string(e.what()),
                c.at("truncate_false").get<std::string>());
    }
  }
  EXPECT_EQ(truncated, 2);
}

TEST(ClipTokenizerCases, Decoded) {
  for (const auto& c : clip_cases().at("cases")) {
    SCOPED_TRACE(c.at("text").get<std::string>());
    EXPECT_EQ(clip_tokenizer().decode(c.at("bpe_ids").get<std::vector<int64_t>>()),
              c.at("decoded").get<std::string>());
  }
}

TEST(ClipTokenizerCases, BatchTokenize) {
  std::vector<std::string> texts;
  for (const auto& c : clip_cases().at("cases")) texts.push_back(case_text(c));
  auto rows = clip_tokenizer().tokenize(texts);
  ASSERT_EQ(rows.size(), texts.size());
  for (size_t i = 0; i < rows.size(); ++i)
    EXPECT_EQ(rows[i], clip_cases().at("cases")[i].at("tokenize").get<std::vector<int64_t>>());
}

TEST(ClipVocabFacts, IdSpaceIsABijection) {
  const ClipVocab& v = clip_tokenizer().vocab();
  std::set<std::string> seen;
  for (int id = 0; id < ClipVocab::kSize; ++id) {
    EXPECT_EQ(v.find(v.token(id)), id);
    seen.insert(v.token(id));
  }
  EXPECT_EQ(seen.size(), 49408u);
  EXPECT_EQ(v.token(49406), "<|startoftext|>");
  EXPECT_EQ(v.token(49407), "<|endoftext|>");
}

TEST(ClipVocabFacts, ByteSymbols) {
  const ClipVocab& v = clip_tokenizer().vocab();
  EXPECT_EQ(v.token(0), "!");           // 0x21, and also the padding id
  EXPECT_EQ(v.token(187), "\xC3\xBF");  // 0xFF, the last printable byte
  EXPECT_EQ(v.token(188), "\xC4\x80");  // byte 0x00 -> U+0100
  EXPECT_EQ(v.token(255), "\xC5\x83");  // byte 0xAD -> U+0143
  EXPECT_EQ(v.token(256), "!</w>");
  EXPECT_EQ(v.byte_id(' '), 188 + 32);             // space is the 33rd remapped byte
  EXPECT_EQ(v.token(v.byte_id(' ')), "\xC4\xA0");  // U+0120
}

TEST(ClipTokenizerFacts, SpecialTokensSpelledOut) {
  EXPECT_EQ(clip_tokenizer().encode("<|endoftext|>"), std::vector<int64_t>{49407});
  // Only the exact spelling is the special token; U+017F (long s) matches the regex's
  // literal case-insensitively but is then plain BPE.
  auto ids = clip_tokenizer().encode("<|\xC5\xBFtartoftext|>");
  EXPECT_GT(ids.size(), 1u);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 49406), 0);
}

TEST(ClipTokenizerFacts, DecodeReplacesInvalidBytesAndChecksIds) {
  // Byte 0xC3 alone (id of its symbol) is an incomplete sequence: one U+FFFD.
  const ClipVocab& v = clip_tokenizer().vocab();
  EXPECT_EQ(clip_tokenizer().decode({v.byte_id(0xC3), v.byte_id('a') + 256}),
            "\xEF\xBF\xBD"
            "a ");
  EXPECT_THROW(clip_tokenizer().decode({49408}), TextError);
  EXPECT_THROW(clip_tokenizer().decode({-1}), TextError);
}

TEST(ClipTokenizerFacts, ShortContextLength) {
  EXPECT_EQ(clip_tokenizer().tokenize("a photo", 3), (std::vector<int64_t>{49406, 320, 49407}));
  EXPECT_THROW(clip_tokenizer().tokenize("a", 0), TextError);
}

}  // namespace
