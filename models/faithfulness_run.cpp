// See faithfulness_run.h.
#include "models/faithfulness_run.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <cmath>

#include "core/analysis/faithfulness.h"
#include "core/nn/state_loading.h"
#include "models/image_text.h"
#include "models/model_registry.h"

namespace attnlab::models {
namespace {

// A separable Gaussian blur of (1, 3, H, W), reflected at the borders.
at::Tensor gaussian_blur(const at::Tensor& image, double sigma) {
  const int64_t radius = std::max<int64_t>(1, std::llround(3 * sigma));
  const at::Tensor x = at::arange(-radius, radius + 1, image.options()).to(at::kDouble);
  at::Tensor k = (x.pow(2) / (-2 * sigma * sigma)).exp();
  k = (k / k.sum()).to(image.scalar_type());
  const int64_t channels = image.size(1);
  // Reflection needs the pad below each side; clamp it for tiny images (the blur then
  // repeats the reflection, which is what a wider kernel would do anyway).
  at::Tensor out = image;
  for (int axis = 0; axis < 2; ++axis) {
    const int64_t side = out.size(2 + axis);
    const int64_t pad = std::min(radius, side - 1);
    const at::Tensor kk = k.slice(0, radius - pad, radius + pad + 1);
    const at::Tensor weight = axis == 0 ? kk.view({1, 1, -1, 1}).repeat({channels, 1, 1, 1})
                                        : kk.view({1, 1, 1, -1}).repeat({channels, 1, 1, 1});
    const std::vector<int64_t> padding =
        axis == 0 ? std::vector<int64_t>{0, 0, pad, pad} : std::vector<int64_t>{pad, pad, 0, 0};
    const std::vector<int64_t> one{1, 1}, none{0, 0};
    out = at::conv2d(at::reflection_pad2d(out, padding), weight / kk.sum(), at::Tensor(), one, none,
                     one, channels);
  }
  return out;
}

struct StepOutputs {
  std::vector<double> probability, top1;  // per step
};

// The masked images of `masks` (S, h, w) in batches: probability of `cls` and whether the
// top-1 is `reference`, per step.
StepOutputs run_steps(Backbone& model, const at::Tensor& image, const at::Tensor& baseline,
                      const at::Tensor& masks, int64_t cls, int64_t reference,
                      const PerturbationRequest& request, const std::function<bool()>& cancelled) {
  const int64_t steps = masks.size(0), batch = std::max<int64_t>(1, request.batch);
  // Each pixel takes the cell its row and column fall in (nearest-neighbour upsampling).
  const auto cell_of = [&](int64_t pixels, int64_t cells) {
    return at::arange(pixels, at::kLong).mul(cells).div(pixels, "floor");
  };
  const at::Tensor pixels = masks.index_select(1, cell_of(image.size(2), masks.size(1)))
                                .index_select(2, cell_of(image.size(3), masks.size(2)))
                                .unsqueeze(1)
                                .to(image.options());
  StepOutputs out;
  for (int64_t s = 0; s < steps; s += batch) {
    if (cancelled && cancelled()) throw ModelError("faithfulness: cancelled");
    const at::Tensor m = pixels.slice(0, s, std::min(steps, s + batch));
    const at::Tensor logits = model.run(m * image + (1 - m) * baseline).logits;
    if (logits.dim() != 2 || cls >= logits.size(1) || reference >= logits.size(1))
      throw ModelError("faithfulness: class " + std::to_string(std::max(cls, reference)) +
                       " is outside the model's " + std::to_string(logits.size(-1)) + " classes");
    const at::Tensor p = logits.to(at::kDouble).softmax(-1).select(1, cls).cpu();
    const at::Tensor hit = logits.argmax(-1).eq(reference).to(at::kDouble).cpu();
    for (int64_t i = 0; i < p.size(0); ++i) {
      out.probability.push_back(p[i].item<double>());
      out.top1.push_back(hit[i].item<double>());
    }
  }
  return out;
}

}  // namespace

PerturbBaseline parse_perturb_baseline(const std::string& name) {
  if (name == "blur") return PerturbBaseline::Blur;
  if (name == "mean") return PerturbBaseline::Mean;
  if (name == "zeros") return PerturbBaseline::Zeros;
  throw ModelError("unknown baseline '" + name + "' (known: blur, mean, zeros)");
}

const char* perturb_baseline_name(PerturbBaseline b) {
  switch (b) {
    case PerturbBaseline::Blur:
      return "blur";
    case PerturbBaseline::Mean:
      return "mean";
    case PerturbBaseline::Zeros:
      return "zeros";
  }
  return "?";
}

at::Tensor baseline_image(const at::Tensor& image, PerturbBaseline baseline) {
  if (image.dim() != 4 || image.size(0) != 1 || image.size(1) != 3)
    throw ModelError("faithfulness: one image (1, 3, H, W) at a time, got " +
                     nn::shape_string(image.sizes()));
  const at::NoGradGuard no_grad;
  switch (baseline) {
    case PerturbBaseline::Blur:
      return gaussian_blur(image, double(std::max(image.size(2), image.size(3))) / 16.0);
    case PerturbBaseline::Mean:
      return image.mean({2, 3}, true).expand_as(image).clone();
    case PerturbBaseline::Zeros:
      return at::zeros_like(image);
  }
  return image;
}

PerturbationCurves perturbation_curves(Backbone& model, const at::Tensor& image,
                                       const at::Tensor& baseline, const at::Tensor& map,
                                       int64_t cls, int64_t reference,
                                       const PerturbationRequest& request,
                                       const std::function<bool()>& cancelled) {
  if (!baseline.defined() || baseline.sizes() != image.sizes())
    throw ModelError("faithfulness: the baseline must have the image's shape");
  require_classes(model, "faithfulness");
  const at::NoGradGuard no_grad;
  const int64_t h = map.size(0), w = map.size(1);
  PerturbationCurves c;
  c.cells = h * w;
  c.counts = analysis::step_counts(c.cells, request.step);
  const auto most = analysis::relevance_order(map, true, request.seed);
  const auto least = analysis::relevance_order(map, false, request.seed);
  // Deletion and positive perturbation remove the same cells: one set of forwards.
  const StepOutputs removed =
      run_steps(model, image, baseline, analysis::step_masks(most, c.counts, h, w, false), cls,
                reference, request, cancelled);
  const StepOutputs inserted =
      run_steps(model, image, baseline, analysis::step_masks(most, c.counts, h, w, true), cls,
                reference, request, cancelled);
  const StepOutputs negative =
      run_steps(model, image, baseline, analysis::step_masks(least, c.counts, h, w, false), cls,
                reference, request, cancelled);
  c.deletion = removed.probability;
  c.positive = removed.top1;
  c.insertion = inserted.probability;
  c.negative = negative.top1;
  c.auc_deletion = analysis::curve_area(c.deletion, c.counts, c.cells);
  c.auc_insertion = analysis::curve_area(c.insertion, c.counts, c.cells);
  c.auc_positive = analysis::curve_area(c.positive, c.counts, c.cells);
  c.auc_negative = analysis::curve_area(c.negative, c.counts, c.cells);
  return c;
}

std::shared_ptr<Backbone> partly_reinitialised(Backbone& model,
                                               const std::vector<std::string>& reinitialise,
                                               uint64_t seed) {
  if (model.config_text().empty())
    throw ModelError(
        "faithfulness: the randomisation check rebuilds the model from its config, "
        "and this " +
        model.arch() + " model was not built from one");
  at::manual_seed(seed);
  std::shared_ptr<Backbone> fresh = make_backbone(Json::parse(model.config_text()));
  fresh->eval();
  const auto params = model.parameters();
  if (!params.empty()) fresh->to(params.front().device());  // where the trained one runs
  // And at its precision: a bf16 model's copy runs at bf16 too, and its buffers take the
  // trained ones' values at the trained ones' precision (RAVLT's check of its RoPE angles
  // compares them at the buffer's own precision, and refused bf16-rounded angles in fp32).
  if (model.dtype() != fresh->dtype()) fresh->set_precision(model.dtype());
  const auto fresh_one = [&](const std::string& name) {
    return std::any_of(reinitialise.begin(), reinitialise.end(), [&](const std::string& b) {
      return name.compare(0, b.size() + 1, b + ".") == 0;
    });
  };
  const at::NoGradGuard no_grad;
  std::map<std::string, at::Tensor> trained;
  for (const auto& p : model.named_parameters()) trained[p.key()] = p.value();
  for (const auto& b : model.named_buffers()) trained[b.key()] = b.value();
  const auto take = [&](const std::string& name, at::Tensor& t) {
    if (fresh_one(name)) return;
    const auto it = trained.find(name);
    if (it == trained.end() || it->second.sizes() != t.sizes())
      throw ModelError("faithfulness: the model rebuilt from its config has no tensor '" + name +
                       "' of the trained model's shape");
    t.copy_(it->second);
  };
  for (auto& p : fresh->named_parameters()) take(p.key(), p.value());
  for (auto& b : fresh->named_buffers()) take(b.key(), b.value());
  // A CLIP's zero-shot or prompt head is no weight of the config's: the copy scores the
  // same classes.
  if (const ImageTextModel* text = image_text_model(model); text && text->class_head().defined())
    image_text_model(*fresh)->set_class_head(text->class_head());
  return fresh;
}

}  // namespace attnlab::models
