// Class-specific explanations for the GUI's map kinds "Grad-CAM" and "gradient rollout":
// each is a forward and a backward pass with autograd, so it runs on the compute worker's
// models lane (it needs the model, as a forward does), never on the main thread. The
// result is an immutable snapshot the views read like a rollout.
#pragma once

#include <memory>
#include <string>

#include "app/gui/analysis_jobs.h"

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

// The key a view asks for: method and class ("gradcam:top1", "gradrollout:281").
std::string explanation_key(ExplainMethod method, int cls);

// Explains class `cls` (-1: the top-1) of `model` on the image `a` was made from. Never
// throws: a failure (a layer above the explicit-form limit, a class the model does not
// have) comes back as a note.
std::shared_ptr<const ClassExplanation> explain_image(LoadedModel& model, const ImageAnalysis& a,
                                                      ExplainMethod method, int cls);

}  // namespace attnlab::gui
