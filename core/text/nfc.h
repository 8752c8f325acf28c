// Unicode NFC (canonical decomposition, canonical ordering, canonical composition) over the
// generated Unicode 14.0 tables: what Python 3.11's unicodedata.normalize('NFC', s) gives.
#pragma once

#include <string>

namespace attnlab::text {

std::u32string nfc(const std::u32string& s);

}  // namespace attnlab::text
