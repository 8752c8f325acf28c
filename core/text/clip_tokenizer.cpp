// The tokenizer's steps 2-10 on top of fix_text (step 1) and the vocabulary (steps 6-8).
#include "core/text/clip_tokenizer.h"

#include <algorithm>
#include <climits>

#include "core/text/html_unescape.h"
#include "core/text/text_fixing.h"
#include "core/text/unicode_tables.h"
#include "core/text/utf8.h"

namespace attnlab::text {
namespace {

// Python's str.strip(): str.isspace characters off both ends.
std::u32string python_strip(const std::u32string& s) {
  size_t b = 0, e = s.size();
  while (b < e && is_python_space(s[b])) ++b;
  while (e > b && is_python_space(s[e - 1])) --e;
  return s.substr(b, e - b);
}

// The regex's literal match under IGNORECASE (simple case folding): after lower() the only
// other character that folds to one of these ASCII letters is U+017F (long s) for 's'.
bool folds_to(char32_t c, char ascii) {
  if (c == char32_t(ascii)) return true;
  if (ascii >= 'a' && ascii <= 'z' && c == char32_t(ascii - 'a' + 'A')) return true;
  return ascii == 's' && c == 0x17F;
}

size_t literal_at(const std::u32string& s, size_t i, const char* lit) {
  size_t n = 0;
  for (; lit[n]; ++n)
    if (i + n >= s.size() || !folds_to(s[i + n], lit[n])) return 0;
  return n;
}

// Step 5: the pieces of `<|startoftext|>|<|endoftext|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|
// [\p{N}]|[^\s\p{L}\p{N}]+`, left to right; whitespace matches nothing and is skipped.
std::vector<std::u32string> pre_tokenize(const std::u32string& s) {
  static const char* const kLiterals[] = {
      "<|startoftext|>", "<|endoftext|>", "'s", "'t", "'re", "'ve", "'m", "'ll", "'d"};
  std::vector<std::u32string> pieces;
  for (size_t i = 0; i < s.size();) {
    size_t n = 0;
    for (const char* lit : kLiterals)
      if ((n = literal_at(s, i, lit)) > 0) break;
    if (n == 0) {
      char32_t c = s[i];
      auto other = [](char32_t x) { return !is_white_space(x) && !is_letter(x) && !is_number(x); };
      if (is_letter(c)) {
        while (i + n < s.size() && is_letter(s[i + n])) ++n;
      } else if (is_number(c)) {
        n = 1;
      } else if (other(c)) {
        while (i + n < s.size() && other(s[i + n])) ++n;
      } else {
        ++i;  // whitespace
        continue;
      }
    }
    pieces.push_back(s.substr(i, n));
    i += n;
  }
  return pieces;
}

}  // namespace

ClipTokenizer::ClipTokenizer(ClipVocab vocab)
    : vocab_(std::make_shared<const ClipVocab>(std::move(vocab))),
      cache_(std::make_shared<Cache>()) {}

ClipTokenizer ClipTokenizer::from_file(const std::string& vocab_gz_path) {
  return ClipTokenizer(ClipVocab::load(vocab_gz_path));
}

std::string ClipTokenizer::clean(const std::string& utf8) const {
  std::u32string s = fix_text(decode_utf8(utf8, "the text"), utf8);
  s = python_strip(python_html_unescape(python_html_unescape(s)));
  // whitespace_clean: runs of \s become one space, then strip() again.
  std::u32string collapsed;
  collapsed.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (!is_white_space(s[i])) {
      collapsed += s[i++];
      continue;
    }
    while (i < s.size() && is_white_space(s[i])) ++i;
    collapsed += U' ';
  }
  return encode_utf8(python_lower(python_strip(collapsed)));
}

// Step 7 on one piece's byte symbols, by ids: merge the lowest-ranked adjacent pair, every
// occurrence left to right, until no pair has a rank or one symbol is left.
std::vector<int> ClipTokenizer::bpe(const std::string& piece) const {
  const ClipVocab& v = *vocab_;
  std::vector<int> word;
  word.reserve(piece.size());
  for (unsigned char b : piece) word.push_back(v.byte_id(b));
  word.back() += 256;  // the last symbol carries "</w>"
  while (word.size() > 1) {
    int best = INT_MAX;
    for (size_t i = 0; i + 1 < word.size(); ++i) {
      int r = v.rank(word[i], word[i + 1]);
      if (r >= 0 && r < best) best = r;
    }
    if (best == INT_MAX) break;
    int first = word[0], second = word[1];
    for (size_t i = 0; i + 1 < word.size(); ++i)
      if (v.rank(word[i], word[i + 1]) == best) {
        first = word[i];
        second = word[i + 1];
        break;
      }
    std::vector<int> merged;
    merged.reserve(word.size());
    for (size_t i = 0; i < word.size();) {
      if (i + 1 < word.size() && word[i] == first && word[i + 1] == second) {
        merged.push_back(v.merged_id(best));
        i += 2;
      } else {
        merged.push_back(word[i++]);
      }
    }
    word = std::move(merged);
  }
  return word;
}

std::vector<int> ClipTokenizer::piece_ids(const std::string& piece) const {
  // The reference's cache starts with the two special tokens: only their exact spelling
  // maps to 49406/49407 (a piece the regex matched as '<|ſtartoftext|>' is plain BPE).
  if (piece == "<|startoftext|>") return {int(kStartOfText)};
  if (piece == "<|endoftext|>") return {int(kEndOfText)};
  {
    std::lock_guard<std::mutex> lock(cache_->mutex);
    auto it = cache_->pieces.find(piece);
    if (it != cache_->pieces.end()) return it->second;
  }
  std::vector<int> ids = bpe(piece);
  std::lock_guard<std::mutex> lock(cache_->mutex);
  if (cache_->pieces.size() >= kCacheLimit) cache_->pieces.clear();
  cache_->pieces.emplace(piece, ids);
  return ids;
}

std::vector<int64_t> ClipTokenizer::encode(const std::string& utf8) const {
  std::vector<int64_t> out;
  for (const std::u32string& piece : pre_tokenize(decode_utf8(clean(utf8), "the cleaned text"))) {
    // Steps 6-7 work on the piece's UTF-8 bytes; the special tokens are plain ASCII, so
    // their byte symbols spell them unchanged.
    for (int id : piece_ids(encode_utf8(piece))) out.push_back(id);
  }
  return out;
}

std::vector<std::string> ClipTokenizer::bpe_tokens(const std::string& utf8) const {
  std::vector<std::string> out;
  for (int64_t id : encode(utf8)) out.push_back(vocab_->token(int(id)));
  return out;
}

std::vector<int64_t> ClipTokenizer::tokenize(const std::string& utf8, int context_length,
                                             bool truncate) const {
  if (context_length < 1)
    throw TextError("tokenize: context_length must be at least 1, got " +
                    std::to_string(context_length));
  std::vector<int64_t> ids{kStartOfText};
  for (int64_t id : encode(utf8)) ids.push_back(id);
  ids.push_back(kEndOfText);
  if (ids.size() > size_t(context_length)) {
    if (!truncate)
      throw TextError("Input " + utf8 + " is too long for context length " +
                      std::to_string(context_length));
    ids.resize(size_t(context_length));
    ids.back() = kEndOfText;
  }
  ids.resize(size_t(context_length), 0);
  return ids;
}

std::vector<std::vector<int64_t>> ClipTokenizer::tokenize(const std::vector<std::string>& texts,
                                                          int context_length, bool truncate) const {
  std::vector<std::vector<int64_t>> rows;
  rows.reserve(texts.size());
  for (const std::string& t : texts) rows.push_back(tokenize(t, context_length, truncate));
  return rows;
}

std::string ClipTokenizer::decode(const std::vector<int64_t>& ids) const {
  std::string bytes;
  for (int64_t id : ids) {
    if (id < 0 || id >= ClipVocab::kSize)
      throw TextError("decode: token id " + std::to_string(id) + " is outside 0.." +
                      std::to_string(ClipVocab::kSize - 1));
    bytes += vocab_->bytes(int(id));
  }
  std::string text = decode_utf8_replace(bytes);
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (text.compare(i, 4, "</w>") == 0) {
      out += ' ';
      i += 4;
    } else {
      out += text[i++];
    }
  }
  return out;
}

}  // namespace attnlab::text
