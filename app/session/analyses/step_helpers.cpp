// Shared pieces of the analyses; see step_helpers.h.
#include "app/session/analyses/step_helpers.h"

#include <ATen/ATen.h>

#include "core/io/text.h"

namespace attnlab::session {

analysis::Table make_table(std::string name, std::string caption, std::vector<std::string> columns,
                           size_t keys) {
  analysis::Table t;
  t.name = std::move(name);
  t.caption = std::move(caption);
  t.columns = std::move(columns);
  t.key_columns = keys;
  return t;
}

std::string grid_text(const attention::TokenLayout& l) {
  return std::to_string(l.height) + "x" + std::to_string(l.width);
}

std::string layer_label(int64_t layer) {
  return "layer " + std::to_string(layer);
}

bool small_enough_for_gui(const models::ForwardResult& r) {
  if (r.traces.empty()) return false;
  int64_t heads = 0;
  for (const auto& t : r.traces) heads += t.trace->heads;
  return heads * r.traces.front().trace->layout.tokens() <= kGuiHeadTokens;
}

std::string block_of(const std::string& attention_path) {
  const size_t dot = attention_path.rfind('.');
  return dot == std::string::npos ? attention_path : attention_path.substr(0, dot);
}

at::Tensor block_tokens(const at::Tensor& output, int64_t b,
                        const attention::TokenLayout& layout) {
  const int64_t n = layout.tokens();
  if (output.dim() == 3 && b < output.size(0) && output.size(1) == n)
    return output[b].detach().to(at::kCPU, at::kDouble);
  // NCHW: the grid's tokens row-major (such backbones have no prefix tokens).
  if (output.dim() == 4 && b < output.size(0) && layout.num_prefix() == 0 &&
      output.size(2) == layout.height && output.size(3) == layout.width)
    return output[b].detach().flatten(1).t().to(at::kCPU, at::kDouble);
  throw attention::TraceQueryError("a block output of shape " +
                                   std::to_string(output.dim()) + "-d does not hold image " +
                                   std::to_string(b) + "'s " + std::to_string(n) + " tokens (" +
                                   layout.describe() + ")");
}

at::Tensor block_output_tokens(const models::ForwardResult& result,
                               const std::string& attention_path,
                               const attention::TokenLayout& layout, int64_t b) {
  const std::string name = "out." + block_of(attention_path);
  const auto it = result.outputs.find(name);
  if (it == result.outputs.end())
    throw attention::TraceQueryError("no recorded output " + name + " of the block around " +
                                     attention_path);
  at::Tensor out = it->second;
  // Merged tokens (ToMe): every input token reads the merged token it went into.
  for (const auto& t : result.traces)
    if (t.path == attention_path && t.trace->has_internal("tome.merged_owner")) {
      const at::Tensor owner = t.trace->internal("tome.merged_owner").to(out.device());
      out = out.gather(1, owner.unsqueeze(-1).expand({-1, -1, out.size(2)}));
    }
  return block_tokens(out, b, layout);
}

void warn_reduced_precision_ranks(ImageStep& s, const std::string& analysis) {
  const at::ScalarType dtype =
      s.result.logits.defined() ? s.result.logits.scalar_type() : at::kFloat;
  if (dtype != at::kBFloat16 && dtype != at::kHalf) return;
  const bool bf16 = dtype == at::kBFloat16;
  s.session.warn(analysis + ": the forward ran at " + (bf16 ? "bf16" : "fp16") +
                 ": its SVDs read fp32 copies, and singular values under about " +
                 (bf16 ? "2^-8" : "2^-11") +
                 " of the largest are the forward's rounding, which the float32 rank rules "
                 "count as rank (ranks rise); use --dtype fp32 for ranks");
}

std::string short_number(double v) {
  return text::format_g(v, 4);
}

}  // namespace attnlab::session
