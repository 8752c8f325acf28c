// Linear CKA between models (see report_cka.h).
#include "app/cli/report_cka.h"

#include "app/cli/output_failure.h"

#include <ATen/ATen.h>

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "app/session/analyses/step_helpers.h"
#include "app/session/edited_input.h"
#include "core/analysis/cka.h"
#include "core/image/preprocess.h"
#include "core/io/image_io.h"

namespace attnlab::cli {

JointHsic joint_hsic(const std::vector<ModelChoice>& choices, const std::vector<ImageInput>& images,
                     const runtime::ComputeTarget& target, const std::string& label,
                     const std::vector<image::EditOp>& edits) {
  std::vector<ReadyModel> models;
  for (const auto& c : choices) models.push_back(load_ready_model(c, target));
  models::ForwardOptions options;
  options.trace_attention = true;  // the layers' paths and token layouts
  options.record_outputs = true;   // their blocks' outputs
  at::NoGradGuard no_grad;

  JointHsic out;
  Progress progress(label, int64_t(images.size()));
  for (size_t i = 0; i < images.size(); ++i) {
    try {
      const auto rgb = io::load_rgb_image(images[i].path);
      std::vector<models::ForwardResult> results;
      for (size_t m = 0; m < models.size(); ++m) {
        const at::Tensor x =
            session::edited_input(rgb, choices[m].preprocessing, *models[m].model, edits)
                .to(target.device);
        results.push_back(models[m].model->run(x, options));
      }
      std::vector<const models::ForwardResult*> forwards;
      for (const auto& r : results) forwards.push_back(&r);
      session::JointLayerHsic h = session::joint_layer_hsic(forwards);
      if (out.total.defined() && !out.total.sum().sizes().equals(h.hsic.sizes()))
        throw std::runtime_error("the models' layers changed between images");
      out.total.add(h.hsic);
      out.sum.layers = std::move(h.layers);
      ++out.images;
    } catch (const std::exception& e) {
      if (is_output_failure(e)) throw;
      progress.break_line();
      std::fprintf(stderr, "attnlab: error: %s: %s: %s (skipped)\n", label.c_str(),
                   images[i].path.c_str(), e.what());
      out.failed.push_back(images[i].path);
    }
    progress.update(int64_t(i + 1), images[i].tag);
  }
  progress.finish();
  if (out.images == 0) throw std::runtime_error(label + ": no image worked for every model");
  out.sum.hsic = out.total.value();
  return out;
}

CrossModelCka cross_model_cka(const std::vector<ModelChoice>& choices,
                              const std::vector<ImageInput>& images,
                              const runtime::ComputeTarget& target,
                              const std::vector<image::EditOp>& edits) {
  std::vector<std::string> tags;
  for (const auto& c : choices) tags.push_back(c.tag);
  return cross_model_cka_of(
      tags, joint_hsic(choices, images, target, "report: cka between models", edits));
}

CrossModelCka cross_model_cka_of(const std::vector<std::string>& tags, const JointHsic& joint) {
  CrossModelCka out;
  out.images = joint.images;
  out.failed = joint.failed;
  const auto& layers = joint.sum.layers;
  const at::Tensor cka = analysis::cka_from_hsic(joint.sum.hsic);
  out.table.name = "cka_models";
  out.table.caption =
      "linear CKA between the layers of two models on the same images: the unbiased HSIC_1 of "
      "their block outputs' token Grams summed over " + std::to_string(out.images) +
      " images, every layer of every model pooled by area onto the coarsest grid among them "
      "(each model with its own preprocessing), CKA = sum HSIC_ab / sqrt(sum HSIC_aa sum "
      "HSIC_bb)";
  out.table.columns = {"model_a", "layer_a", "model_b", "layer_b", "cka"};
  out.table.key_columns = 4;
  for (size_t a = 0; a < tags.size(); ++a)
    for (size_t b = a + 1; b < tags.size(); ++b) {
      // The table holds every pair; the figure every pair of up to kAllPairsUpTo models,
      // beyond that the first model against each other one (the zoo's 14 would be 91 panels).
      const bool drawn = tags.size() <= kAllPairsUpTo || a == 0;
      viz::CkaPair pair;
      pair.model_a = tags[a];
      pair.model_b = tags[b];
      pair.layers_a = layers[a];
      pair.layers_b = layers[b];
      for (size_t la = 0; la < layers[a].size(); ++la)
        for (size_t lb = 0; lb < layers[b].size(); ++lb) {
          const double v = cka[joint.sum.row(a, la)][joint.sum.row(b, lb)].item<double>();
          pair.cka.push_back(float(v));
          out.table.add_row({tags[a], layers[a][la], tags[b], layers[b][lb], v});
        }
      if (drawn) out.pairs.push_back(std::move(pair));
    }
  return out;
}

}  // namespace attnlab::cli
