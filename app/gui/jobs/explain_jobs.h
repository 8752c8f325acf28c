// Class-specific explanations for the GUI's map kinds "Grad-CAM" and "gradient rollout":
// each is a forward and a backward pass with autograd, so it runs on the compute worker's
// models lane (it needs the model, as a forward does), never on the main thread. The
// result is an immutable snapshot the views read like a rollout.
#pragma once

#include <memory>
#include <string>

#include "app/gui/jobs/analysis_jobs.h"

namespace attnlab::gui {

enum class ExplainMethod { GradCam, GradRollout };
const char* explain_method_name(ExplainMethod m);  // "Grad-CAM", "gradient rollout"

struct ClassExplanation {
  ExplainMethod method = ExplainMethod::GradCam;
  int cls = -1;            // the class explained (the top-1 when none was asked for)
  std::string class_name;  // "tabby cat" or "class 281"
  double score = 0;        // its logit
  analysis::Array map;     // [rows, cols]; empty: see note
  std::string detail;      // the target module and grid, or the rollout's readout
  std::string note;        // why there is no map
  double seconds = 0;
};

// What a view asks to be explained.
struct ExplainRequest {
  ExplainMethod method = ExplainMethod::GradCam;
  int cls = -1;             // -1: each model's top-1
  std::string target;       // Grad-CAM's module by state-dict path; "": the model's default
  bool signed_map = false;  // Grad-CAM without the ReLU
  // Identifies the result ("gradcam:top1::relu", "gradrollout:281").
  std::string key() const;
};

// Explains what `request` asks of `model` on the image `a` was made from. Never throws: a
// failure (a layer above the explicit-form limit, a class the model does not have, a
// target path it has no module for) comes back as a note.
std::shared_ptr<const ClassExplanation> explain_image(LoadedModel& model, const ImageAnalysis& a,
                                                      const ExplainRequest& request);

}  // namespace attnlab::gui
