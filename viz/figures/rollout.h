// Attention rollout (Abnar & Zuidema 2020): input | rollout over the input | the rollout
// map itself with its colour scale, the switches stated in the caption.
#pragma once

#include <string>

#include "viz/figures/attention_maps.h"

namespace attnlab::viz {

// `rollout`: [rows, cols] (the session's "rollout__<image>__<query>" array); `switches`
// describes the rollout settings (fusion, residual, discard, renormalisation).
CaptionedFigure rollout_figure(const RgbaImage& picture, const analysis::Array& rollout,
                               const MapQuery& query, const std::string& model,
                               const std::string& switches, const MapStyle& style = {});

}  // namespace attnlab::viz
