// GUI explanation jobs; see explain_jobs.h. The same models/ entry points as
// `attnlab analyze --analyses gradcam,gradrollout`, so the GUI shows what the CLI writes.
#include "app/gui/jobs/explain_jobs.h"

#include <ATen/ATen.h>

#include <chrono>

#include "app/gui/jobs/loaded_model.h"
#include "app/session/analysis_session.h"
#include "models/grad_rollout_run.h"
#include "models/gradcam_run.h"

namespace attnlab::gui {

const char* explain_method_name(ExplainMethod m) {
  return m == ExplainMethod::GradCam ? "Grad-CAM" : "gradient rollout";
}

std::string ExplainRequest::key() const {
  const std::string cls_part = cls < 0 ? "top1" : std::to_string(cls);
  if (method == ExplainMethod::GradRollout) return "gradrollout:" + cls_part;
  return "gradcam:" + cls_part + ":" + target + ":" + (signed_map ? "signed" : "relu");
}

std::shared_ptr<const ClassExplanation> explain_image(LoadedModel& model, const ImageAnalysis& a,
                                                      const ExplainRequest& request) {
  const auto t0 = std::chrono::steady_clock::now();
  const ExplainMethod method = request.method;
  const int cls = request.cls;
  auto out = std::make_shared<ClassExplanation>();
  out->method = method;
  out->cls = cls;
  try {
    const at::Tensor* input = a.input.get();
    if (!input) throw std::runtime_error("the image's input was not kept");
    at::Tensor map;
    if (method == ExplainMethod::GradCam) {
      models::GradCamRequest q;
      q.cls = cls;
      q.target = request.target;
      q.cam.relu = !request.signed_map;
      const models::GradCamResult r = models::run_grad_cam(*model.ready.model, *input, q);
      out->cls = int(r.cls);
      out->score = r.score;
      map = r.map;
      out->detail = "at " + r.target + ", " + std::to_string(r.layout.height) + "x" +
                    std::to_string(r.layout.width) + " grid" +
                    (request.signed_map ? ", signed (no ReLU)" : "");
    } else {
      models::GradRolloutRequest q;
      q.cls = cls;
      const models::GradRolloutResult r = models::run_grad_rollout(*model.ready.model, *input, q);
      out->cls = int(r.cls);
      out->score = r.score;
      map = r.map;
      out->detail = r.readout + " through " + std::to_string(r.layers) + " layers, residual 0.5";
    }
    out->map = session::to_array(map, "explanation", {"y", "x"});
    const bool named = out->cls < int(model.class_names.size());
    out->class_name = named ? model.class_names[size_t(out->cls)] : "";
    if (out->class_name.empty()) out->class_name = "class " + std::to_string(out->cls);
  } catch (const std::exception& e) {
    out->note = std::string(explain_method_name(method)) + ": " + e.what();
    out->map = {};
  }
  out->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace attnlab::gui
