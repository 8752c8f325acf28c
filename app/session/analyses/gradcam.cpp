// gradcam: Grad-CAM of the explained class (each image's top-1, or --class) at the
// model's default target (the last block's norm1, or the last stage) or the module asked
// for, on that module's grid. Needs the model and the image (a forward and backward pass
// of its own). Figure: every model's map of every image (AnchorFormer's Fig. 4 layout).
// Its figures (report, series, GUI tab): gradcam_figures.cpp.
#include <ATen/ATen.h>

#include "app/session/analyses/step_helpers.h"
#include "models/gradcam_run.h"

namespace attnlab::session {
namespace {

void explain_gradcam(ExplainStep& s) {
  models::GradCamRequest q;
  q.target = s.settings.options.text("gradcam-target");
  q.cls = class_to_explain(s.settings.options);
  q.cam.relu = !s.settings.options.flag("signed-cam");
  const models::GradCamResult r = models::run_grad_cam(s.model, s.input, q);
  const analysis::ResultKey key{"gradcam", s.image, -1, "", "", ""};
  s.session.emit(to_array(r.map, analysis::format_result_key(key), {"y", "x"},
                          "Grad-CAM of class " + std::to_string(r.cls) + " (logit " +
                              short_number(r.score) + ") at " + r.target + ", on its " +
                              grid_text(r.layout) + " grid" +
                              (q.cam.relu ? ", ReLU" : ", signed")));
  s.explanations.add_row({s.image, "gradcam", r.target, r.cls, r.score});
}

std::vector<AnalysisOption> gradcam_options() {
  using Kind = AnalysisOption::Kind;
  AnalysisOption cls{"class", Kind::Integer, "C", nullptr, "each image's top-1"};
  cls.min = 0;
  cls.help = "the class explained";
  cls.in_gui = false;  // the GUI's class list (its sidebar) picks it
  AnalysisOption target{"gradcam-target", Kind::Text, "PATH", "",
                        "the last block's norm1 or the last stage"};
  target.help = "Grad-CAM's module (a state-dict path)";
  target.in_gui = false;  // typed in the GUI's Grad-CAM section
  AnalysisOption signed_cam{"signed-cam", Kind::Flag, "", false};
  signed_cam.help = "Grad-CAM's map without the ReLU";
  signed_cam.in_gui = false;  // the GUI's Grad-CAM section
  return {cls, target, signed_cam};
}

}  // namespace

int64_t class_to_explain(const OptionValues& options) {
  return options.optional_integer("class").value_or(-1);
}

AnalysisInfo gradcam_analysis() {
  AnalysisInfo info;
  info.name = "gradcam";
  info.summary =
      "Grad-CAM of the explained class (top-1 or --class) at the default or given target module";
  info.tables = {"explanations"};
  info.arrays = {"gradcam__<image>"};
  info.explain = explain_gradcam;
  info.needs_classes = true;
  info.options = gradcam_options();
  info.describe = [](const AnalysisSettings&) {
    return nlohmann::json{
        {"weights", "mean gradient over the grid tokens; prefix tokens left out"}};
  };
  return info;
}

}  // namespace attnlab::session
