// CLIP's tokenizer (openai/CLIP SimpleTokenizer + clip.tokenize), reimplemented from the
// spec (SPEC_COMPARISON.md, "CLIP text tower and tokenizer", steps 1-10): every stage gives
// the reference's value exactly, or a TextError says why it cannot.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/text/clip_vocab.h"
#include "core/text/text_error.h"

namespace attnlab::text {

class ClipTokenizer {
 public:
  static constexpr int64_t kStartOfText = 49406, kEndOfText = 49407;

  static ClipTokenizer from_file(const std::string& vocab_gz_path);  // throws TextError

  // Steps 1-4: ftfy, html.unescape twice, strip, whitespace collapsed, lower-cased.
  std::string clean(const std::string& utf8) const;
  // Steps 5-7: the vocabulary strings of the BPE pieces.
  std::vector<std::string> bpe_tokens(const std::string& utf8) const;
  // Step 8: SimpleTokenizer.encode (no start/end tokens, never truncated).
  std::vector<int64_t> encode(const std::string& utf8) const;
  // Step 9: [49406] + ids + [49407], padded with 0 to context_length. Too long: truncate
  // keeps the first context_length ids and makes the last 49407; otherwise TextError with
  // the reference's message, "Input <text> is too long for context length <n>".
  std::vector<int64_t> tokenize(const std::string& utf8, int context_length = 77,
                                bool truncate = true) const;
  std::vector<std::vector<int64_t>> tokenize(const std::vector<std::string>& texts,
                                             int context_length = 77, bool truncate = true) const;
  // Step 10: ids back to text (invalid UTF-8 replaced, every "</w>" a space). Throws
  // TextError on an id outside 0..49407.
  std::string decode(const std::vector<int64_t>& ids) const;

  const ClipVocab& vocab() const { return *vocab_; }

 private:
  explicit ClipTokenizer(ClipVocab vocab);
  std::vector<int> piece_ids(const std::string& piece_utf8) const;
  std::vector<int> bpe(const std::string& piece_utf8) const;

  std::shared_ptr<const ClipVocab> vocab_;
  // BPE results per piece, as in the reference (its cache is unbounded; this one is cleared
  // when it grows past kCacheLimit).
  struct Cache {
    std::mutex mutex;
    std::unordered_map<std::string, std::vector<int>> pieces;
  };
  static constexpr size_t kCacheLimit = 1 << 16;
  std::shared_ptr<Cache> cache_;
};

// Step 1 alone (ftfy.fix_text); throws TextError.
std::string fix_text(const std::string& utf8);

}  // namespace attnlab::text
