// Class-specific explanations of several models on several images, in the layout of
// AnchorFormer's Fig. 4: the first row shows the inputs, then one row per model; columns
// are images; each map is labelled with the class it explains. Maps are min-max scaled
// per map (each model's evidence for its own class), as Grad-CAM figures are read.
#pragma once

#include <string>
#include <vector>

#include "viz/figures/captioned_figure.h"
#include "viz/figures/map_panels.h"

namespace attnlab::viz {

struct ExplanationCell {
  const analysis::Array* map = nullptr;  // [rows, cols]; null: this model has no map here
  const RgbaImage* picture = nullptr;    // the input as this model saw it
  std::string label;                     // the explained class, e.g. "tabby cat (281)"
};

struct ExplanationRow {
  std::string model;
  std::vector<ExplanationCell> cells;  // one per image, in the order of `images`
};

struct ExplanationImage {
  std::string name;                    // column label
  const RgbaImage* picture = nullptr;  // shown in the input row
};

// `what` names the method, e.g. "Grad-CAM" or "Gradient-weighted rollout".
CaptionedFigure explanation_grid_figure(const std::vector<ExplanationImage>& images,
                                        const std::vector<ExplanationRow>& rows,
                                        const std::string& what, const MapStyle& style = {});

}  // namespace attnlab::viz
