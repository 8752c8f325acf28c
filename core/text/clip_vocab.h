// CLIP's BPE vocabulary (bpe_simple_vocab_16e6.txt.gz): the byte symbols, the 48,894 merges
// CLIP uses, and the 49,408 token strings with their ids (spec steps 6-8).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace attnlab::text {

class ClipVocab {
 public:
  static constexpr int kMerges = 48894;  // lines 1..48,894 of the file (line 0 is a header)
  static constexpr int kSize = 49408;    // 256 bytes, 256 bytes + "</w>", merges, 2 specials

  // Throws TextError: missing file, corrupt or truncated gzip, bad UTF-8, too few lines, a
  // malformed merge line, a merge whose parts are not earlier tokens, a duplicate token.
  static ClipVocab load(const std::string& vocab_gz_path);

  // The id of byte b's symbol (0..255); + 256 for the symbol ending a word.
  int byte_id(uint8_t b) const { return byte_id_[b]; }
  // The rank of merging ids (a, b), or -1.
  int rank(int a, int b) const {
    auto it = ranks_.find(key(a, b));
    return it == ranks_.end() ? -1 : it->second;
  }
  int merged_id(int rank) const { return 512 + rank; }
  // The vocabulary string of an id (byte symbols, "</w>", special tokens).
  const std::string& token(int id) const { return tokens_[size_t(id)]; }
  // The bytes an id stands for ("</w>" included literally, as CLIP's decode sees them).
  const std::string& bytes(int id) const { return bytes_[size_t(id)]; }
  // The id of a vocabulary string, or -1.
  int find(const std::string& token) const;

 private:
  static uint64_t key(int a, int b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }
  int byte_id_[256] = {};
  std::unordered_map<uint64_t, int> ranks_;
  std::vector<std::string> tokens_, bytes_;
  std::unordered_map<std::string, int> ids_;
};

// The character byte b becomes before BPE (step 6), as UTF-8.
std::string byte_symbol(uint8_t b);

}  // namespace attnlab::text
