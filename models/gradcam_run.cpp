// See gradcam_run.h.
#include "models/gradcam_run.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include <regex>

namespace attnlab::models {
namespace {

// The index in "<prefix><index>" names, -1 when `name` is not one.
int64_t numbered(const std::string& name, const std::regex& pattern) {
  std::smatch m;
  return std::regex_match(name, m, pattern) ? std::stoll(m[1].str()) : -1;
}

}  // namespace

int64_t explained_class(const at::Tensor& logits, int64_t requested, const std::string& who) {
  const int64_t classes = logits.size(-1);
  const int64_t cls = requested >= 0 ? requested : logits.argmax().item<int64_t>();
  if (cls >= classes)
    throw ModelError(who + ": class " + std::to_string(cls) + " is out of range (the model has " +
                     std::to_string(classes) + ")");
  return cls;
}

std::string default_gradcam_target(Backbone& model) {
  // timm's blocks.N.norm1, and CLIP's transformer.resblocks.N.ln_1 (models/clip.cpp).
  const std::regex stage(R"(layers\.(\d+))"), norm1(R"(blocks\.(\d+)\.norm1)"),
      ln_1(R"(transformer\.resblocks\.(\d+)\.ln_1)");
  int64_t last_stage = -1, last_block = -1, last_resblock = -1;
  for (const auto& item : model.named_modules("", /*include_self=*/false)) {
    last_stage = std::max(last_stage, numbered(item.key(), stage));
    last_block = std::max(last_block, numbered(item.key(), norm1));
    last_resblock = std::max(last_resblock, numbered(item.key(), ln_1));
  }
  if (last_stage >= 0) return "layers." + std::to_string(last_stage);
  if (last_block >= 0) return "blocks." + std::to_string(last_block) + ".norm1";
  if (last_resblock >= 0) return "transformer.resblocks." + std::to_string(last_resblock) + ".ln_1";
  throw ModelError("grad-cam: " + model.arch() + " has neither stages nor blocks to explain");
}

std::string block_of_norm_target(const std::string& target) {
  for (const std::string norm : {".norm1", ".ln_1"})
    if (target.size() > norm.size() &&
        target.compare(target.size() - norm.size(), norm.size(), norm) == 0)
      return target.substr(0, target.size() - norm.size());
  return target;
}

attention::TokenLayout tapped_output_layout(const ForwardResult& r, const std::string& target,
                                            int64_t tokens) {
  const std::string block = block_of_norm_target(target);
  const attention::TokenLayout* inside = nullptr;
  const attention::TokenLayout* any = nullptr;
  for (const auto& t : r.traces) {
    const auto& l = t.trace->layout;
    if (l.tokens() != tokens) continue;
    if (t.path.rfind(block + ".", 0) == 0) inside = &l;
    if (!any) any = &l;
  }
  if (inside) return *inside;
  if (any) return *any;
  throw ModelError("the output of " + target + " has " + std::to_string(tokens) +
                   " tokens, but no traced attention layer has that grid");
}

GradCamResult run_grad_cam(Backbone& model, const at::Tensor& image,
                           const GradCamRequest& request) {
  if (image.dim() != 4 || image.size(0) != 1)
    throw ModelError("grad-cam: expected one image (1, 3, H, W)");
  require_classes(model, "grad-cam");
  GradCamResult out;
  out.target = request.target.empty() ? default_gradcam_target(model) : request.target;
  ForwardOptions options;
  options.trace_attention = true;
  options.gradient_target = out.target;
  options.target_offset = request.target_offset;
  const at::AutoGradMode grad_on(true);
  ForwardResult r = model.run(image, options);
  if (!r.target.defined())
    throw ModelError("grad-cam: " + model.arch() + " has no module output named '" + out.target +
                     "' to explain (e.g. " + default_gradcam_target(model) + ")");
  out.logits = r.logits[0].detach();
  out.cls = explained_class(out.logits, request.cls, "grad-cam");
  const at::Tensor score = r.logits[0][out.cls];
  out.score = score.item<double>();
  at::Tensor grad = torch::autograd::grad({score}, {r.target}, {}, /*retain_graph=*/false,
                                          /*create_graph=*/false, /*allow_unused=*/true)[0];
  if (!grad.defined()) grad = at::zeros_like(r.target);  // the score does not depend on it
  // One image: (tokens, C); NCHW outputs (RAVLT) become tokens in row-major grid order.
  at::Tensor act = r.target.detach()[0], g = grad[0];
  if (act.dim() == 3) {
    act = act.flatten(1).transpose(0, 1);
    g = g.flatten(1).transpose(0, 1);
  }
  out.layout = tapped_output_layout(r, out.target, act.size(0));
  out.activation = act.contiguous();
  out.gradient = g.contiguous();
  out.map = analysis::grad_cam(out.activation, out.gradient, out.layout, request.cam);
  return out;
}

}  // namespace attnlab::models
