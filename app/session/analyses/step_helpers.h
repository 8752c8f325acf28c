// Pieces several analyses' compute steps share: tables with a caption, grid text, block
// outputs, number format. (The query itself is app/session/query.h; what their figures
// share is step_figures.h.)
#pragma once

#include <string>
#include <vector>

#include "app/session/analysis_registry.h"
#include "app/session/analysis_session.h"
#include "app/session/query.h"
#include "core/analysis/attention_maps.h"
#include "core/analysis/table.h"
#include "core/attention/token_layout.h"

namespace attnlab::session {

analysis::Table make_table(std::string name, std::string caption, std::vector<std::string> columns,
                           size_t keys);

// "14x14"
std::string grid_text(const attention::TokenLayout& layout);

// "layer 3"
std::string layer_label(int64_t layer);
// The analyses that run the model once per head or per perturbed image (heads,
// faithfulness) run with every image in the GUI only up to this many head-tokens (Σ heads ×
// the first traced layer's tokens): the zoo's models (8 heads × 196 tokens), not a DeiT-S
// at 224 (72 × 197, seconds per image).
constexpr int64_t kGuiHeadTokens = 4096;
bool small_enough_for_gui(const models::ForwardResult& r);
// The block around an attention module, whose output the backbones record as
// "out.<block>": "blocks.3.attn" -> "blocks.3".
std::string block_of(const std::string& attention_path);
// Image b's tokens of a recorded block output in layout order, (N, C) float64 on the CPU:
// (B, N, C) as it is, NCHW (RAVLT) as its grid's row-major tokens. Throws
// attention::TraceQueryError when the shape does not hold `layout`'s tokens.
at::Tensor block_tokens(const at::Tensor& output, int64_t b, const attention::TokenLayout& layout);
// The tokens of the block around the traced layer at `attention_path` (the residual stream
// after it), from a forward that recorded outputs (ForwardOptions::record_outputs): what
// outliers and CKA read; after token merging (a trace with "tome.merged_owner") each input
// token reads its merged token. Throws attention::TraceQueryError when that output is missing.
at::Tensor block_output_tokens(const models::ForwardResult& result,
                               const std::string& attention_path,
                               const attention::TokenLayout& layout, int64_t b);

// Once per session, when the forward ran at bf16/fp16 (--dtype): the SVDs of `analysis`
// read fp32 copies of reduced-precision values, so singular values under about 2^-8 of the
// largest (bf16) are the forward's rounding, which the float32 rank rules count as rank.
void warn_reduced_precision_ranks(ImageStep& s, const std::string& analysis);

// "%.4g" (the explanations' captions: a logit, a rollout switch).
std::string short_number(double v);

}  // namespace attnlab::session
