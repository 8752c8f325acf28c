// prompts: where a CLIP sees each text prompt (issue 69). For a whole CLIP given prompts
// (--text, or class names: its zero-shot head, models/zero_shot_head.h), per image: each
// patch's embedding against each prompt's (the cosine, models/image_text.h prompt_maps: CLIP's
// class-token readout applied to every patch, coarse since training aligns only the class
// token), each prompt's image–text logit and its probability over the prompts, and Grad-CAM
// of each prompt's score (the class-specific explanation driven by the image–text score).
// Needs the model and the image. Its figures (report, GUI tab): prompts_figures.cpp.
#include <ATen/ATen.h>

#include "app/session/analyses/step_helpers.h"
#include "models/gradcam_run.h"
#include "models/image_text.h"

namespace attnlab::session {
namespace {

constexpr int64_t kMostPromptCams = 16;

void explain_prompts(ExplainStep& s) {
  // The session runs it only on a model that reads text and was given prompts
  // (AnalysisInfo::needs_prompts).
  const at::Tensor head = models::image_text_model(s.model)->class_head();
  models::PromptMaps m;
  {
    const at::NoGradGuard no_grad;
    m = models::prompt_maps(s.model, s.input, head);
  }
  const at::Tensor logits = m.logits[0].to(at::kCPU, at::kDouble);
  const at::Tensor probabilities = at::softmax(logits, 0);
  const int64_t prompts = logits.size(0);
  const auto key = [&](const char* part) {
    return analysis::format_result_key({"prompts", s.image, -1, "", "", part});
  };
  s.session.emit(to_array(m.cosine[0], key("cosine"), {"prompt", "y", "x"},
                          "cosine of each patch's embedding (ln_post, @ proj) with each prompt's "
                          "text embedding"));
  s.session.emit(to_array(probabilities, key("scores"), {"prompt"},
                          "each prompt's probability: softmax of the image-text logits over the "
                          "prompts"));
  // Grad-CAM of each prompt's logit (= exp(logit_scale) · cosine of image and prompt): one
  // backward pass each, so for a few prompts only, not a thousand class names (whose
  // explanation is gradcam's --class).
  if (prompts > kMostPromptCams)
    s.session.warn("prompts: Grad-CAM per prompt for at most " + std::to_string(kMostPromptCams) +
                   " prompts (" + std::to_string(prompts) +
                   " given): the cosine maps and scores only; gradcam --class C explains one");
  models::GradCamRequest q;
  q.target = s.settings.options.text("gradcam-target");
  q.cam.relu = !s.settings.options.flag("signed-cam");
  std::vector<at::Tensor> cams;
  for (int64_t k = 0; k < prompts && prompts <= kMostPromptCams; ++k) {
    s.session.throw_if_cancelled();
    q.cls = k;
    cams.push_back(models::run_grad_cam(s.model, s.input, q).map.to(at::kCPU, at::kFloat));
  }
  if (!cams.empty())
    s.session.emit(to_array(at::stack(cams), key("gradcam"), {"prompt", "y", "x"},
                            "Grad-CAM of each prompt's image-text logit"));
  analysis::Table t = make_table(
      "prompt_scores",
      "each prompt's image-text logit (exp(logit_scale) x cosine), its probability over the "
      "prompts, and the mean and largest patch cosine",
      {"image", "prompt", "logit", "probability", "patch_cosine_mean", "patch_cosine_max"}, 2);
  const at::Tensor cos = m.cosine[0].to(at::kCPU, at::kDouble).flatten(1);
  for (int64_t k = 0; k < prompts; ++k)
    t.add_row({s.image, k, logits[k].item<double>(), probabilities[k].item<double>(),
               cos[k].mean().item<double>(), cos[k].max().item<double>()});
  s.session.accumulate(t);
}

}  // namespace

AnalysisInfo prompts_analysis() {
  AnalysisInfo info;
  info.name = "prompts";
  info.summary =
      "CLIP prompts (--text): each prompt's patch-cosine map, score and Grad-CAM of its score";
  info.tables = {"prompt_scores"};
  info.arrays = {"prompts__<image>__cosine", "prompts__<image>__scores",
                 "prompts__<image>__gradcam"};
  info.key_shape = analysis::ResultKeyShape{true, false, false, false, true};
  info.explain = explain_prompts;
  info.needs_classes = true;
  info.needs_prompts = true;
  // The GUI's Prompts tab reads it with every image (a model with prompts only: one forward
  // and a backward pass per prompt).
  info.in_image_analysis = true;
  info.reads_options = {"gradcam-target", "signed-cam"};
  info.describe = [](const AnalysisSettings&) {
    return nlohmann::json{
        {"cosine",
         "each patch token of the last block through ln_post and proj, L2-normalised, "
         "against each L2-normalised prompt embedding"},
        {"gradcam", "Grad-CAM of each prompt's logit at the default or given target"}};
  };
  return info;
}

}  // namespace attnlab::session
