// See zero_shot_head.h.
#include "models/zero_shot_head.h"

#include <algorithm>

#include "models/clip_tokens.h"

namespace attnlab::models {

const std::vector<std::string>& default_prompt_templates() {
  static const std::vector<std::string> templates = {"a photo of a {}."};
  return templates;
}

std::string format_prompt(const std::string& prompt, const std::string& name) {
  const size_t at = prompt.find("{}");
  if (at == std::string::npos || prompt.find("{}", at + 2) != std::string::npos)
    throw ModelError("a prompt template holds exactly one {} where the class name goes (got '" +
                     prompt + "')");
  return prompt.substr(0, at) + name + prompt.substr(at + 2);
}

std::string ZeroShotHead::note() const {
  if (templates.size() == 1 && templates[0] == "{}")
    return "prompt head from " + std::to_string(class_names.size()) +
           " text prompts, each used as written";
  std::string list;
  for (size_t i = 0; i < templates.size() && i < 3; ++i)
    list += (i ? ", '" : "'") + templates[i] + "'";
  if (templates.size() > 3) list += ", ...";
  return "zero-shot head from " + std::to_string(class_names.size()) + " class names (" +
         std::to_string(templates.size()) +
         (templates.size() == 1 ? " template: " : " templates averaged: ") + list + ")";
}

ZeroShotHead make_zero_shot_head(ImageTextModel& model, const std::vector<std::string>& class_names,
                                 const std::vector<std::string>& templates,
                                 const std::function<void(int64_t, int64_t)>& progress,
                                 int64_t batch) {
  if (class_names.empty()) throw ModelError("a zero-shot head needs at least one class name");
  if (templates.empty()) throw ModelError("a zero-shot head needs at least one prompt template");
  std::vector<std::string> prompts;
  for (const auto& name : class_names)
    for (const auto& t : templates) prompts.push_back(format_prompt(t, name));
  const at::NoGradGuard no_grad;
  const int64_t total = int64_t(prompts.size());
  std::vector<at::Tensor> features;
  for (int64_t start = 0; start < total; start += std::max<int64_t>(1, batch)) {
    const int64_t end = std::min(total, start + std::max<int64_t>(1, batch));
    const std::vector<std::string> part(prompts.begin() + start, prompts.begin() + end);
    const at::Tensor tokens = clip_tokens(part, model.context_length(), /*truncate=*/true);
    at::Tensor f = model.encode_text(tokens).features;
    // At least fp32 (a bf16/fp16 tower's features promoted); float64 stays float64.
    if (f.scalar_type() == at::kHalf || f.scalar_type() == at::kBFloat16) f = f.to(at::kFloat);
    features.push_back(l2_normalized(f));
    if (progress) progress(end, total);
  }
  const int64_t classes = int64_t(class_names.size()), per_class = int64_t(templates.size());
  const at::Tensor mean = at::cat(features).view({classes, per_class, -1}).mean(1);
  return {l2_normalized(mean), class_names, templates};
}

}  // namespace attnlab::models
