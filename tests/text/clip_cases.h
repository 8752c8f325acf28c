// Shared by the text tests: the tokenizer loaded once from assets/clip/ and the reference's
// cases from ../shared/fixtures/clip/tokenizer_cases.json.
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "core/text/clip_tokenizer.h"
#include "tests/support/fixtures.h"

namespace attnlab::testing {

inline std::string clip_vocab_path() {
  return std::string(ATTNLAB_SOURCE_DIR) + "/assets/clip/bpe_simple_vocab_16e6.txt.gz";
}

inline const text::ClipTokenizer& clip_tokenizer() {
  static const text::ClipTokenizer tokenizer = text::ClipTokenizer::from_file(clip_vocab_path());
  return tokenizer;
}

inline const nlohmann::json& clip_cases() {
  static const nlohmann::json cases = [] {
    std::string path = shared_dir() + "/fixtures/clip/tokenizer_cases.json";
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + path);
    std::stringstream ss;
    ss << in.rdbuf();
    return nlohmann::json::parse(ss.str());
  }();
  return cases;
}

// The case's text from its utf8_hex (independent of how the JSON reader treats strings).
inline std::string case_text(const nlohmann::json& c) {
  std::string hex = c.at("utf8_hex").get<std::string>(), out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out += char(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

}  // namespace attnlab::testing
