// The attention segmentation figure (DINO's visualize_attention.py, Caron et al. 2021): per
// head, the tokens of the smallest set holding a share tau of the readout row's attention,
// over the picture the model saw, with each head's Jaccard index against the ground truth
// in its title when one was given. LibTorch-free; the analysis is
// app/session/analyses/segmentation.cpp.
#pragma once

#include <string>
#include <vector>

#include "core/analysis/table.h"
#include "viz/figures/captioned_figure.h"
#include "viz/rgba_image.h"

namespace attnlab::viz {

// `masks`: [heads + 1, rows, cols] of 0/1 (the last slice: the mask of the head-mean map);
// `jaccard`: one per slice (NaN: no ground truth); `source`: the row segmented ("the cls
// row", "the mean query row"). Throws std::invalid_argument for a shape that does not fit.
CaptionedFigure segmentation_figure(const RgbaImage& picture, const analysis::Array& masks,
                                    const std::vector<double>& jaccard, const std::string& model,
                                    const std::string& layer, const std::string& source,
                                    double tau);

}  // namespace attnlab::viz
