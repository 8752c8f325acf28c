// ForwardRecorder: one place that decides when an attention layer runs traced and what of
// its trace becomes a fixture-style output (the trace's reference_outputs: "attn.*" for
// softmax, "hifi.*"/"lofi.*" for HiLo).
#include "models/backbone.h"
#include "core/runtime/bf16_products.h"
#include "core/runtime/precision.h"
#include "models/memory_estimate.h"

#include <ATen/ATen.h>

namespace attnlab::models {
namespace {

// "blocks.3.attn" -> "blocks.3": the fixtures name probabilities and branches by block.
std::string block_path(const std::string& attn_path) {
  const auto dot = attn_path.rfind('.');
  return dot == std::string::npos ? attn_path : attn_path.substr(0, dot);
}

}  // namespace

bool ForwardRecorder::enter_block(const std::string& path, at::Tensor& x, int64_t* height,
                                  int64_t* width) {
  if (skipping_) {
    if (path != options_.resume->block) return false;
    const BlockInput& from = *options_.resume;
    if (!from.input.defined()) throw ModelError("resumed forward: no input recorded for " + path);
    x = from.input;
    if (height) *height = from.height;
    if (width) *width = from.width;
    skipping_ = false;
  }
  if (options_.record_block_inputs)
    result_.block_inputs.push_back({path, x.detach(), height ? *height : 0, width ? *width : 0});
  block_ = path;
  return true;
}

void ForwardRecorder::check_resumed() const {
  if (skipping_)
    throw ModelError("resumed forward: the model has no block '" + options_.resume->block + "'");
}

at::Tensor ForwardRecorder::attend(attention::AttentionMechanism& attn, const std::string& path,
                                   const at::Tensor& tokens, const attention::TokenLayout& layout) {
  if (!tracing() && !recording()) return attn.forward(tokens, layout);
  auto [out, trace] = attn.forward_traced(tokens, layout, options_.trace);
  if (recording() && options_.record_attention_outputs)  // the fixtures' record of the layer
    for (const auto& [kind, tensor] : trace->reference_outputs())
      output(kind, block_path(path), tensor);
  if (tracing()) result_.traces.push_back({path, trace});
  return out;
}

namespace {
// The first floating-point parameter, or nullptr.
const at::Tensor* first_floating(const std::vector<at::Tensor>& parameters) {
  for (const auto& p : parameters)
    if (p.is_floating_point()) return &p;
  return nullptr;
}
}  // namespace

c10::ScalarType Backbone::dtype() const {
  const auto all = parameters();
  const at::Tensor* p = first_floating(all);
  return p ? p->scalar_type() : c10::kFloat;
}

ForwardResult Backbone::run(const at::Tensor& images, const ForwardOptions& options) {
  check_forward_memory(*this, images, options);  // refuses a forward that cannot fit
  const auto all = parameters();
  const at::Tensor* p = first_floating(all);
  ForwardResult r = !p || !images.is_floating_point() || images.scalar_type() == p->scalar_type()
                        ? forward_images(images, options)
                        : forward_images(images.to(p->scalar_type()), options);
  r.output_kind = output_kind();
  return r;
}

std::string embedding_output_note(const std::string& what, int64_t dims, const std::string& arch) {
  return what + " needs class scores, but " + (arch.empty() ? "the model" : arch) +
         "'s output is an embedding" +
         (dims > 0 ? " of " + std::to_string(dims) + " values" : std::string()) +
         " (a backbone released without a classifier, as DINO, DINOv2 and CLIP's image tower "
         "are): it has no class to rank, explain or evaluate";
}

// The families that read their blocks out override these; the rest say which model refuses.
at::Tensor Backbone::readout_features(const at::Tensor&) const {
  throw ModelError(arch() +
                   ": reading a block's output as its classifier does (readout "
                   "features) is not supported for this family");
}

at::Tensor Backbone::readout_logits(const at::Tensor&) const {
  throw ModelError(arch() +
                   ": reading a block's output through its final norm and head is "
                   "not supported for this family");
}

void require_classes(const Backbone& model, const std::string& what) {
  if (model.output_kind() == OutputKind::embedding)
    throw ModelError(embedding_output_note(what, 0, model.arch()));
}

void cast_floating(torch::nn::Module& module, c10::ScalarType dtype) {
  at::NoGradGuard no_grad;
  for (auto& p : module.named_parameters(true))
    if (p.value().is_floating_point()) p.value().set_data(p.value().to(dtype));
  for (auto& b : module.named_buffers(true))
    if (b.value().is_floating_point()) b.value().set_data(b.value().to(dtype));
}

void Backbone::set_precision(c10::ScalarType dtype) {
  // Every bf16 forward accumulates its matrix products in fp32, on every CPU.
  if (dtype == c10::kBFloat16) runtime::install_fp32_accumulating_bf16_products();
  // A precision this LibTorch cannot run where the model is, refused with the reason before
  // the weights change (else the first forward throws the kernel's own error, or oneDNN's).
  const auto params = parameters();
  runtime::require_precision(dtype,
                             params.empty() ? c10::Device(c10::kCPU) : params.front().device());
  cast_floating(*this, dtype);
}

}  // namespace attnlab::models
