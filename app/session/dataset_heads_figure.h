// The head extremes figures of an embed folder run with --heads (viz/figures/head_extremes.h):
// per head the images where it attends most sharply and most broadly, as the model saw them,
// its sharpest patch outlined. Shared by `attnlab embed --heads` and its merge.
#pragma once

#include <string>
#include <vector>

#include "app/session/dataset_embedding.h"
#include "viz/figures/captioned_figure.h"

namespace attnlab::session {

// `dir` holds the head statistics (dataset_heads.h) and images.csv; the pictures are read
// again — files through `preprocessing`, a dataset's rows ("<name>#<i>") from `set` — as the
// model saw them. Throws std::runtime_error naming an image that cannot be read again, and
// what head_extremes throws.
std::vector<viz::CaptionedFigure> head_extremes_figures(const std::string& dir, int64_t k,
                                                        const image::Preprocessing& preprocessing,
                                                        const data::ImageDataset* set,
                                                        const std::string& model);

}  // namespace attnlab::session
