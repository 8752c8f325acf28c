// The error paths: invalid UTF-8, a missing, corrupt or truncated vocabulary, and texts
// whose mojibake ftfy's heuristic might repair in ways not reproduced here. Each throws a
// TextError that names the problem; none crashes.
#include <gtest/gtest.h>

#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/text/clip_tokenizer.h"
#include "core/text/text_fixing.h"
#include "tests/text/clip_cases.h"

namespace {

using attnlab::testing::clip_tokenizer;
using attnlab::testing::clip_vocab_path;
using attnlab::text::ClipTokenizer;
using attnlab::text::TextError;

// Runs f, expects a TextError whose message contains `needle`.
template <typename F>
void expect_text_error(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no TextError (wanted one mentioning '" << needle << "')";
  } catch (const TextError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

std::string temp_file(const std::string& name, const std::string& bytes) {
  std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string gzip(const std::string& text) {
  std::string out(compressBound(uLong(text.size())) + 64, '\0');
  z_stream zs{};
  deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = uInt(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = uInt(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

TEST(TextErrors, InvalidUtf8) {
  for (const std::string bad :
       {"caf\xE9", "\xC0\x80", "\xED\xA0\x80", "a\xF4\x90\x80\x80", "\xE2\x82"}) {
    expect_text_error([&] { attnlab::text::fix_text(bad); }, "not valid UTF-8");
    expect_text_error([&] { clip_tokenizer().tokenize(bad); }, "not valid UTF-8");
  }
}

TEST(TextErrors, MissingVocabulary) {
  expect_text_error([] { ClipTokenizer::from_file("/nonexistent/bpe.txt.gz"); },
                    "/nonexistent/bpe.txt.gz");
}

TEST(TextErrors, CorruptAndTruncatedGzip) {
  std::string path = temp_file("attnlab_text_corrupt.gz", "this is not gzip data at all");
  expect_text_error([&] { ClipTokenizer::from_file(path); }, "CLIP vocabulary");
  std::ifstream in(clip_vocab_path(), std::ios::binary | std::ios::ate);
  std::string real(size_t(in.tellg()), '\0');
  in.seekg(0);
  in.read(real.data(), std::streamsize(real.size()));
  ASSERT_GT(real.size(), 1000000u);
  path = temp_file("attnlab_text_truncated.gz", real.substr(0, real.size() / 2));
  expect_text_error([&] { ClipTokenizer::from_file(path); }, "CLIP vocabulary");
  std::remove(path.c_str());
}

TEST(TextErrors, BadVocabularyContent) {
  std::string path = temp_file("attnlab_text_short.gz", gzip("#version: 0.2\ni n\nt h"));
  expect_text_error([&] { ClipTokenizer::from_file(path); }, "merge lines");
  path = temp_file("attnlab_text_badline.gz", gzip("#version: 0.2\ni n x\n"));
  expect_text_error([&] { ClipTokenizer::from_file(path); }, "merge line 1");
  path = temp_file("attnlab_text_badutf8.gz", gzip("#version: 0.2\n\xFF\xFE\n"));
  expect_text_error([&] { ClipTokenizer::from_file(path); }, "not valid UTF-8");
  std::remove(path.c_str());
}

TEST(TextErrors, MojibakeNotReproduced) {
  // (a) another code page: 'У©' is é's UTF-8 read as Windows-1251.
  expect_text_error([] { attnlab::text::fix_text("\xD0\xA3\xC2\xA9"); }, "windows-1251");
  // (b) mojibake inside a line that does not re-encode as a whole.
  expect_text_error([] { attnlab::text::fix_text("caf\xC3\x83\xC2\xA9 \xE6\x97\xA5"); },
                    "part of it");
  // (c) utf-8-variants: 'í•œ' is 한's UTF-8 (ED 95 9C) read as Windows-1252.
  expect_text_error([] { attnlab::text::fix_text("\xC3\xAD\xE2\x80\xA2\xC5\x93"); },
                    "mojibake heuristic is not reproduced");
  // A space that stood for 0xA0 ('Ã ' for à).
  expect_text_error([] { clip_tokenizer().encode("voil\xC3\x83 "); }, "byte repairs");
}

}  // namespace
