// AnalysisSession::explain: the class-specific analyses (gradcam, gradrollout), which need
// the model and the image rather than the traces of the session's own forward.
#include <ATen/ATen.h>

#include <cstdio>

#include "models/analysis_session.h"
#include "models/grad_rollout_run.h"
#include "models/gradcam_run.h"

namespace attnlab::models {
namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string grid_of(const attention::TokenLayout& l) {
  return std::to_string(l.height) + "x" + std::to_string(l.width);
}

}  // namespace

std::string explanation_array_name(const std::string& analysis, const std::string& image_tag) {
  return analysis + "__" + image_tag;
}

bool AnalysisSession::explains() const {
  return settings_.analyses.count("gradcam") > 0 || settings_.analyses.count("gradrollout") > 0;
}

void AnalysisSession::explain(const std::string& image_tag, Backbone& model,
                              const at::Tensor& image) {
  analysis::Table t;
  t.name = "explanations";
  t.caption = "the class each explanation is for and its logit, per image";
  t.columns = {"image", "analysis", "explained", "class", "logit"};
  t.key_columns = 4;
  if (settings_.analyses.count("gradcam"))
    guarded("gradcam", [&] {
      GradCamRequest q;
      q.target = settings_.gradcam_target;
      q.cls = settings_.explain_class;
      q.cam = settings_.gradcam;
      const GradCamResult r = run_grad_cam(model, image, q);
      sink_(to_array(r.map, explanation_array_name("gradcam", image_tag), {"y", "x"},
                     "Grad-CAM of class " + std::to_string(r.cls) + " (logit " + number(r.score) +
                         ") at " + r.target + ", on its " + grid_of(r.layout) + " grid" +
                         (q.cam.relu ? ", ReLU" : ", signed")));
      t.add_row({image_tag, "gradcam", r.target, r.cls, r.score});
    });
  if (settings_.analyses.count("gradrollout"))
    guarded("gradrollout", [&] {
      GradRolloutRequest q;
      q.cls = settings_.explain_class;
      q.rollout = settings_.rollout;
      const GradRolloutResult r = run_grad_rollout(model, image, q);
      sink_(to_array(r.map, explanation_array_name("gradrollout", image_tag), {"y", "x"},
                     "gradient-weighted rollout of class " + std::to_string(r.cls) + " (logit " +
                         number(r.score) + ") through " + std::to_string(r.layers) +
                         " layers: " + r.readout + ", over the first layer's " + grid_of(r.layout) +
                         " grid (" + analysis::head_fusion_name(r.options.fusion) +
                         " fusion, residual " + number(r.options.residual) + ", discard " +
                         number(r.options.discard_ratio) + ")"));
      t.add_row({image_tag, "gradrollout", r.readout, r.cls, r.score});
    });
  accumulate(t);
}

}  // namespace attnlab::models
