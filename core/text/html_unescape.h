// HTML character references, two ways: Python's html.unescape (CLIP's basic_clean applies it
// twice) and ftfy's narrower entity fix (step 1 of the tokenizer spec).
#pragma once

#include <string>

namespace attnlab::text {

// Python 3.11's html.unescape: HTML5 named references (legacy names without ';' too, and the
// longest legacy prefix of an unknown name), decimal and hex references with its remapping
// of invalid numbers. Throws TextError where Python raises (a decimal reference of more than
// 4300 digits: int()'s limit).
std::u32string python_html_unescape(const std::u32string& s);

// ftfy's unescape_html: only `&#?[0-9A-Za-z]{1,24};` is considered; names must end in ';'
// (plus ftfy's ALL-CAPS forms, &EACUTE; -> É); a numeric reference is decoded unless the
// result would contain ';'.
std::u32string ftfy_unescape_entities(const std::u32string& s);

}  // namespace attnlab::text
