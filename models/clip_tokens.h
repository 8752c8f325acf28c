// Prompts → CLIP's token ids with the tokenizer attnlab ships (core/text/clip_tokenizer.h and
// assets/clip/bpe_simple_vocab_16e6.txt.gz, found through runtime/data_paths.h: nothing is
// downloaded). One loaded vocabulary per process, shared by the CLI, the GUI and Python.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/text/clip_tokenizer.h"

namespace attnlab::models {

// The vocabulary file attnlab ships; throws text::TextError naming where it looked when
// there is none.
std::string shipped_clip_vocabulary();
// Loaded on first use (thread-safe); throws text::TextError.
const text::ClipTokenizer& shipped_clip_tokenizer();

// (B, context_length) int64 ids of `texts`, as clip.tokenize(texts, context_length,
// truncate) gives them; throws text::TextError for a text that cannot be tokenized as CLIP
// does, or that is too long with truncate false.
at::Tensor clip_tokens(const std::vector<std::string>& texts, int64_t context_length = 77,
                       bool truncate = true);

}  // namespace attnlab::models
