// TextError: the one exception of core/text (the CLIP tokenizer and its text clean-up).
// Invalid UTF-8, a text this code cannot tokenize exactly as CLIP's reference does, and a
// missing or corrupt vocabulary all end here, with a message naming the problem.
#pragma once

#include <stdexcept>
#include <string>

namespace attnlab::text {

class TextError : public std::runtime_error {
 public:
  explicit TextError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace attnlab::text
