// gradcam: Grad-CAM of the explained class (each image's top-1, or --class) at the
// model's default target (the last block's norm1, or the last stage) or the module asked
// for, on that module's grid. Needs the model and the image (a forward and backward pass
// of its own). Figure: every model's map of every image (AnchorFormer's Fig. 4 layout).
#include <ATen/ATen.h>

#include "app/session/analyses/explanation_figure.h"
#include "app/session/analyses/step_helpers.h"
#include "models/gradcam_run.h"

namespace attnlab::session {
namespace {

void explain_gradcam(ExplainStep& s) {
  models::GradCamRequest q;
  q.target = s.settings.gradcam_target;
  q.cls = s.settings.explain_class;
  q.cam = s.settings.gradcam;
  const models::GradCamResult r = models::run_grad_cam(s.model, s.input, q);
  const analysis::ResultKey key{"gradcam", s.image, -1, "", "", ""};
  s.session.emit(to_array(r.map, analysis::format_result_key(key), {"y", "x"},
                          "Grad-CAM of class " + std::to_string(r.cls) + " (logit " +
                              short_number(r.score) + ") at " + r.target + ", on its " +
                              grid_text(r.layout) + " grid" +
                              (q.cam.relu ? ", ReLU" : ", signed")));
  s.explanations.add_row({s.image, "gradcam", r.target, r.cls, r.score});
}

}  // namespace

AnalysisInfo gradcam_analysis() {
  AnalysisInfo info;
  info.name = "gradcam";
  info.summary =
      "Grad-CAM of the explained class (top-1 or --class) at the default or given target module";
  info.tables = {"explanations"};
  info.arrays = {"gradcam__<image>"};
  info.explain = explain_gradcam;
  info.needs_classes = true;
  info.figure_kinds = {explanations_figure_kind()};
  info.report_figures = [](const ReportInputs& in, std::vector<FigureJob>& jobs) {
    add_explanation_grid(in, "gradcam", "Grad-CAM", jobs);
  };
  return info;
}

}  // namespace attnlab::session
