// ftfy.fix_text (6.3.1, default options) as CLIP's basic_clean calls it: step 1 of the
// tokenizer spec. The mojibake part is exact only as far as mojibake.cpp explains; where
// ftfy's heuristic could act unpredictably it throws TextError instead of guessing.
#pragma once

#include <string>

namespace attnlab::text {

// Throws TextError on invalid UTF-8 and on refused mojibake.
std::string fix_text(const std::string& utf8);
std::u32string fix_text(const std::u32string& text, const std::string& text_for_errors);

}  // namespace attnlab::text
