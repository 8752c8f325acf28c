// Loading the vocabulary: gunzip (core/io's bounded inflater), strict UTF-8, then the
// merges are resolved to ids once, so BPE compares integers, not strings.
#include "core/text/clip_vocab.h"

#include <string_view>

#include "core/io/file_bytes.h"
#include "core/io/inflate.h"
#include "core/io/io_error.h"
#include "core/text/text_error.h"
#include "core/text/utf8.h"

namespace attnlab::text {
namespace {

bool printable_byte(int b) {
  return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

// Byte b's code point: itself when printable, else U+0100 + its rank among the others.
char32_t byte_code_point(int b) {
  if (printable_byte(b)) return char32_t(b);
  int n = 0;
  for (int x = 0; x < b; ++x) n += !printable_byte(x);
  return char32_t(0x100 + n);
}

}  // namespace

std::string byte_symbol(uint8_t b) {
  std::string s;
  append_utf8(s, byte_code_point(b));
  return s;
}

int ClipVocab::find(const std::string& token) const {
  auto it = ids_.find(token);
  return it == ids_.end() ? -1 : it->second;
}

ClipVocab ClipVocab::load(const std::string& path) {
  std::vector<uint8_t> text;
  try {
    std::vector<uint8_t> gz = io::read_file_bytes(path, uint64_t(64) << 20);
    // The real file inflates to about 1.9 MB; 64 MiB leaves room and bounds a hostile one.
    text = io::inflate_bounded(io::ByteView(gz.data(), gz.size()), io::DeflateWrapper::Gzip,
                               uint64_t(64) << 20, 4u << 20, path);
  } catch (const io::IoError& e) {
    throw TextError("CLIP vocabulary " + path + ": " + e.what());
  }
  std::string_view all(reinterpret_cast<const char*>(text.data()), text.size());
  if (!is_valid_utf8(all)) throw TextError("CLIP vocabulary " + path + " is not valid UTF-8");

  ClipVocab v;
  v.tokens_.reserve(kSize);
  v.bytes_.reserve(kSize);
  auto add = [&](std::string token, std::string bytes) {
    if (!v.ids_.emplace(token, int(v.tokens_.size())).second)
      throw TextError("CLIP vocabulary " + path + " is corrupt: the token '" + token +
                      "' appears twice");
    v.tokens_.push_back(std::move(token));
    v.bytes_.push_back(std::move(bytes));
  };
  // Ids 0-255 in the order of step 6's list: the printable bytes, then the others.
  std::vector<int> order;
  for (int b = 0; b < 256; ++b)
    if (printable_byte(b)) order.push_back(b);
  for (int b = 0; b < 256; ++b)
    if (!printable_byte(b)) order.push_back(b);
  for (size_t i = 0; i < order.size(); ++i) v.byte_id_[order[i]] = int(i);
  for (int b : order) add(byte_symbol(uint8_t(b)), std::string(1, char(b)));
  for (int b : order) add(byte_symbol(uint8_t(b)) + "</w>", std::string(1, char(b)) + "</w>");

  size_t pos = all.find('\n');  // line 0: the version header
  for (int r = 0; r < kMerges; ++r) {
    if (pos == std::string_view::npos)
      throw TextError("CLIP vocabulary " + path + " is corrupt: it has " + std::to_string(r) +
                      " merge lines, CLIP needs " + std::to_string(kMerges));
    size_t start = pos + 1;
    pos = all.find('\n', start);
    std::string_view line =
        all.substr(start, pos == std::string_view::npos ? all.size() - start : pos - start);
    size_t space = line.find(' ');
    std::string where = "CLIP vocabulary " + path + " is corrupt: merge line " +
                        std::to_string(r + 1) + " '" + std::string(line) + "'";
    if (space == std::string_view::npos || space == 0 || space + 1 == line.size() ||
        line.find(' ', space + 1) != std::string_view::npos)
      throw TextError(where + " is not two tokens separated by one space");
    int a = v.find(std::string(line.substr(0, space)));
    int b = v.find(std::string(line.substr(space + 1)));
    if (a < 0 || b < 0) throw TextError(where + " names a token not defined before it");
    v.ranks_[key(a, b)] = r;
    add(v.tokens_[size_t(a)] + v.tokens_[size_t(b)], v.bytes_[size_t(a)] + v.bytes_[size_t(b)]);
  }
  add("<|startoftext|>", "<|startoftext|>");
  add("<|endoftext|>", "<|endoftext|>");
  return v;
}

}  // namespace attnlab::text
