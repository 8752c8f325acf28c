// ForwardRecorder: one place that decides when an attention layer runs traced and what of
// its trace becomes a fixture-style output ("attn.*" for softmax, "hifi.*"/"lofi.*" for
// HiLo).
#include "models/backbone.h"

#include <ATen/ATen.h>

namespace attnlab::models {
namespace {

// "blocks.3.attn" -> "blocks.3": the fixtures name probabilities and branches by block.
std::string block_path(const std::string& attn_path) {
  const auto dot = attn_path.rfind('.');
  return dot == std::string::npos ? attn_path : attn_path.substr(0, dot);
}

}  // namespace

at::Tensor ForwardRecorder::attend(attention::AttentionMechanism& attn, const std::string& path,
                                   const at::Tensor& tokens, const attention::TokenLayout& layout) {
  if (!tracing() && !recording()) return attn.forward(tokens, layout);
  auto [out, trace] = attn.forward_traced(tokens, layout, options_.trace);
  if (recording()) {
    const std::string block = block_path(path);
    const std::string& mech = attn.mechanism_name();
    if (mech == "softmax") {
      std::vector<at::Tensor> heads;
      for (int64_t b = 0; b < trace->batch; ++b) {
        std::vector<at::Tensor> per_head;
        for (int64_t h = 0; h < trace->heads; ++h) per_head.push_back(trace->matrix(b, h));
        heads.push_back(at::stack(per_head));
      }
      output("attn", block, at::stack(heads));
    } else if (mech == "hilo") {
      if (trace->has_internal("hilo.hifi_out"))
        output("hifi", block, trace->internal("hilo.hifi_out"));
      if (trace->has_internal("hilo.lofi_out"))
        output("lofi", block, trace->internal("hilo.lofi_out"));
    }
  }
  if (tracing()) result_.traces.push_back({path, trace});
  return out;
}

}  // namespace attnlab::models
