// Linear CKA between models (see report_cka.h).
#include "app/cli/report_cka.h"

#include <ATen/ATen.h>

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "app/session/analyses/step_helpers.h"
#include "core/analysis/cka.h"
#include "core/image/preprocess.h"
#include "core/io/image_io.h"

namespace attnlab::cli {

CrossModelCka cross_model_cka(const std::vector<ModelChoice>& choices,
                              const std::vector<ImageInput>& images, const c10::Device& device) {
  std::vector<ReadyModel> models;
  for (const auto& c : choices) models.push_back(load_ready_model(c, device));
  models::ForwardOptions options;
  options.trace_attention = true;  // the layers' paths and token layouts
  options.record_outputs = true;   // their blocks' outputs
  at::NoGradGuard no_grad;

  CrossModelCka out;
  std::vector<std::vector<int64_t>> layers(models.size());  // traced-layer indices per model
  at::Tensor sum;
  Progress progress("report: cka between models", int64_t(images.size()));
  for (size_t i = 0; i < images.size(); ++i) {
    try {
      const auto rgb = io::load_rgb_image(images[i].path);
      std::vector<at::Tensor> tokens;
      std::vector<attention::TokenLayout> layouts;
      for (size_t m = 0; m < models.size(); ++m) {
        const at::Tensor x = image::preprocess(rgb, choices[m].preprocessing).to(device);
        const models::ForwardResult r = models[m].model->run(x, options);
        layers[m].clear();
        for (size_t l = 0; l < r.traces.size(); ++l) {
          const auto& t = r.traces[l];
          tokens.push_back(session::block_output_tokens(r, t.path, t.trace->layout, 0));
          layouts.push_back(t.trace->layout);
          layers[m].push_back(int64_t(l));
        }
      }
      const auto features = analysis::common_grid_features(tokens, layouts);
      if (features.front().size(0) < 4)
        throw std::runtime_error("the coarsest grid has fewer than 4 cells");
      const at::Tensor h = analysis::hsic_matrix(features);
      if (sum.defined() && !sum.sizes().equals(h.sizes()))
        throw std::runtime_error("the models' layers changed between images");
      sum = sum.defined() ? sum + h : h;
      ++out.images;
    } catch (const std::exception& e) {
      progress.break_line();
      std::fprintf(stderr, "attnlab: error: cka between models: %s: %s (skipped)\n",
                   images[i].path.c_str(), e.what());
      out.failed.push_back(images[i].path);
    }
    progress.update(int64_t(i + 1), images[i].tag);
  }
  progress.finish();
  if (out.images == 0) throw std::runtime_error("cka between models: no image worked for every model");

  const at::Tensor cka = analysis::cka_from_hsic(sum);
  std::vector<int64_t> offset(models.size() + 1, 0);
  for (size_t m = 0; m < models.size(); ++m) offset[m + 1] = offset[m] + int64_t(layers[m].size());
  out.table.name = "cka_models";
  out.table.caption =
      "linear CKA between the layers of two models on the same images: the unbiased HSIC_1 of "
      "their block outputs' token Grams summed over " + std::to_string(out.images) +
      " images, every layer of every model pooled by area onto the coarsest grid among them "
      "(each model with its own preprocessing), CKA = sum HSIC_ab / sqrt(sum HSIC_aa sum "
      "HSIC_bb)";
  out.table.columns = {"model_a", "layer_a", "model_b", "layer_b", "cka"};
  out.table.key_columns = 4;
  for (size_t a = 0; a < models.size(); ++a)
    for (size_t b = a + 1; b < models.size(); ++b) {
      // The table holds every pair; the figure every pair of up to kAllPairsUpTo models,
      // beyond that the first model against each other one (the zoo's 14 would be 91 panels).
      const bool drawn = models.size() <= kAllPairsUpTo || a == 0;
      viz::CkaPair pair;
      pair.model_a = choices[a].tag;
      pair.model_b = choices[b].tag;
      pair.layers_a = layers[a];
      pair.layers_b = layers[b];
      for (size_t la = 0; la < layers[a].size(); ++la)
        for (size_t lb = 0; lb < layers[b].size(); ++lb) {
          const double v = cka[offset[a] + int64_t(la)][offset[b] + int64_t(lb)].item<double>();
          pair.cka.push_back(float(v));
          out.table.add_row({choices[a].tag, layers[a][la], choices[b].tag, layers[b][lb], v});
        }
      if (drawn) out.pairs.push_back(std::move(pair));
    }
  return out;
}

}  // namespace attnlab::cli
