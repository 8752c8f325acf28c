// A zero-shot classifier made of class names (CLIP's paper, section 3.1.4): each class's
// weight is the text embedding of its prompts — every template with "{}" replaced by the
// name, each embedding L2-normalised, averaged over the templates (prompt ensembling) and
// normalised again — and the model's logits become exp(logit_scale) · image_n · Wᵀ, one
// score per class. With such a head a CLIP is a classifier to every command and analysis
// (classify, eval, Grad-CAM, faithfulness, the report's class figures, the GUI's Top-5).
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <string>
#include <vector>

#include "models/image_text.h"

namespace attnlab::models {

// CLIP's own default prompt, one template.
const std::vector<std::string>& default_prompt_templates();

// `prompt` with its one "{}" replaced by `name`; ModelError when the template does not hold
// exactly one "{}".
std::string format_prompt(const std::string& prompt, const std::string& name);

struct ZeroShotHead {
  at::Tensor weights;  // (classes, E), rows L2-normalised
  std::vector<std::string> class_names, templates;
  // "zero-shot head from N class names (T templates: ...)"
  std::string note() const;
};

// Encodes every class's prompts with `model`'s text tower (in batches of `batch` prompts,
// `progress(done, total)` after each) and returns the head; ModelError for no names, a
// template without "{}", and text::TextError for a prompt that cannot be tokenized.
ZeroShotHead make_zero_shot_head(ImageTextModel& model, const std::vector<std::string>& class_names,
                                 const std::vector<std::string>& templates,
                                 const std::function<void(int64_t, int64_t)>& progress = {},
                                 int64_t batch = 256);

}  // namespace attnlab::models
