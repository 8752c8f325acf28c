// The top-activating examples per head (issue 70 goal 5, dataset-level head statistics):
// for each attention head, the k images of a dataset on which it attends most sharply
// (lowest mean normalised attention entropy over queries) and the k on which it attends
// most broadly (highest), each with the query patch where the head is sharpest.
//
// One row per head, labelled "L<layer> H<head>" on the left; in each row two panels, the
// k sharpest thumbnails (left) and the k broadest (right), headed "sharpest (lowest
// entropy)" and "broadest (highest)" over the two groups, a gap between them. Each
// thumbnail is the picture the model saw, fitted into a square slot (aspect kept), with
// its normalised entropy over it ("0.21") and, where the example gives a patch, that
// patch (picture / grid) outlined with a small rectangle. Thumbnails are about 0.45 in,
// smaller when 2k of them would not fit the width limit.
//
// Many heads (12 layers x 6 heads = 72 rows) do not fit one page: the caller splits them
// into figures of at most kHeadExtremesRowsPerFigure rows (head_extremes_figures does,
// naming each part in its title and caption). head_extremes_figure itself draws every
// head it is given.
//
// Hover: a FigureHit on the figure (viz/figure_layout.h hit_test) resolves to the head,
// the group and the example under the mouse with head_extremes_example_at (the GUI's
// tooltip shows the example's name).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "viz/figure_layout.h"
#include "viz/figures/figure_common.h"
#include "viz/rgba_image.h"

namespace attnlab::viz {

// Rows (heads) per figure when a model's heads are split over several figures.
inline constexpr int kHeadExtremesRowsPerFigure = 12;

struct HeadExample {
  const RgbaImage* picture = nullptr;  // the picture the model saw (not owned)
  std::string name;                    // image name for the caption/tooltip ("#123")
  double value = 0;                    // normalised entropy in [0, 1]
  int patch_y = -1, patch_x = -1;      // the sharpest query patch on the grid (-1: none)
  int grid_h = 0, grid_w = 0;          // the token grid (patch rectangle = picture / grid)
};

struct HeadExtremes {
  int layer = 0, head = 0;
  std::vector<HeadExample> sharpest, broadest;  // k each, sharpest first / broadest first
};

struct HeadExtremesFigureOptions {
  double thumb_in = 0.45;              // thumbnail side
  double max_width_in = kPageWidthIn;  // thumbnails shrink when 2k of them would be wider
  double font_pt = 7;
  // Appended to the title and the caption, e.g. "heads 13-24 of 72" (head_extremes_figures
  // sets it for each part).
  std::string part;
};

// One figure of every head in `heads` (in that order, one row each). k is the longest list
// of any head (a shorter list leaves its last slots empty). Throws std::invalid_argument
// for: no heads; a head whose sharpest and broadest lists are both empty; an example with
// a null picture, a picture of zero size (or whose pixels are not width x height x 4
// bytes), a value that is not finite, or a patch outside its grid (a patch is given when
// patch_y or patch_x is not -1; the grid must then hold it).
CaptionedFigure head_extremes_figure(const std::vector<HeadExtremes>& heads,
                                     const std::string& model,
                                     const HeadExtremesFigureOptions& options = {});

// The heads split into figures of at most rows_per_figure rows (the last one shorter),
// each titled with its part ("heads 13-24 of 72") when there is more than one.
std::vector<CaptionedFigure> head_extremes_figures(
    const std::vector<HeadExtremes>& heads, const std::string& model,
    const HeadExtremesFigureOptions& options = {},
    int rows_per_figure = kHeadExtremesRowsPerFigure);

// The example under a hit on a figure drawn from `heads` (the same vector, or the part of
// it the figure shows): the index of its head in `heads`, its group and its index in that
// group's list. Nothing outside a thumbnail's slot or on an empty slot.
struct HeadExtremesHit {
  size_t head = 0;
  bool broadest = false;  // false: the sharpest group
  size_t example = 0;
};
std::optional<HeadExtremesHit> head_extremes_example_at(const std::vector<HeadExtremes>& heads,
                                                        const FigureHit& hit);

}  // namespace attnlab::viz
