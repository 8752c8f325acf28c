// Where a CLIP sees each text prompt (the prompts analysis): one panel per prompt over the
// picture — each patch's cosine with the prompt, on its own [min, max] — titled with the
// prompt and its probability over the prompts, and below each, Grad-CAM of its score.
#pragma once

#include <string>
#include <vector>

#include "core/analysis/table.h"
#include "viz/figures/captioned_figure.h"
#include "viz/figures/figure_common.h"
#include "viz/rgba_image.h"

namespace attnlab::viz {

struct PromptFigureOptions {
  int max_prompts = 8;  // the first ones; the rest are left out (said in the caption)
  double width_in = kPageWidthIn;
  double font_pt = 7;
};

// image_arrays: "prompts__<tag>__cosine" (prompt, y, x), "...__scores" (prompt) and, when
// there, "...__gradcam" (prompt, y, x); texts: the prompts (the model's class names; empty
// or short: "prompt k"). image_tag empty: the first image with prompt maps. Throws
// std::invalid_argument when the arrays are missing or disagree.
CaptionedFigure prompt_figure(const std::vector<analysis::Array>& image_arrays,
                              const std::string& image_tag, const RgbaImage& image,
                              const std::vector<std::string>& texts,
                              const PromptFigureOptions& options = {});

}  // namespace attnlab::viz
