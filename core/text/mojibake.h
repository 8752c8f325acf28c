// ftfy's mojibake step (fix_encoding), reproduced where it can be reproduced exactly and
// refused (TextError) where ftfy's badness heuristic, which is not ported, could decide.
#pragma once

#include <string>

namespace attnlab::text {

// Runs ftfy's encoding fix on one line until it changes nothing. `text_for_errors` is the
// whole input, named in a refusal.
std::u32string fix_mojibake(const std::u32string& line, const std::string& text_for_errors);

}  // namespace attnlab::text
