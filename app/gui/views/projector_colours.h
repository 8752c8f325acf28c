// The Projector tab's colours (issue 70), shared by its plots and its side panel: one
// colour per class (matplotlib's tab10 / tab20, then hues around the circle), correct /
// wrong, and viridis for the confidence and for a head's entropy (over its range in the
// folder); a category's name from the folder's names.
#pragma once

#include <imgui.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "app/gui/projector/projector_state.h"

namespace attnlab::gui {

// Category k of `count` (k < 0: grey).
ImU32 projector_category_colour(int64_t k, size_t count, int alpha = 255);
// The top class's probability on viridis (NaN or < 0: grey).
ImU32 projector_confidence_colour(double c, int alpha = 255);
// Green / red / grey for correct (1), wrong (0), not judged (-1).
ImU32 projector_correct_colour(int correct, int alpha = 255);
// The head a HeadEntropy or HeadRank colouring shows and the range of its entropy (or
// effective output rank) over the folder (viridis from lo to hi), as
// projector_head_colouring finds it.
struct ProjectorHeadColouring {
  int layer = 0, head = 0;
  bool rank = false;  // the effective output rank, not the entropy
  float lo = 0.0f, hi = 1.0f;
  int finite = 0, missing = 0;  // rows with a value / NaN (a layer with fewer heads)
};
ProjectorHeadColouring projector_head_colouring(const EmbedFolder& d, int layer, int head,
                                                bool rank = false);
// "layer 1 (blocks.1.attn), head 0"
std::string projector_head_name(const EmbedFolder& d, int layer, int head);
// Row i of `d` coloured by `c` (`h`: for HeadEntropy and HeadRank).
ImU32 projector_point_colour(const EmbedFolder& d, size_t i, ProjectorColour c, int alpha,
                             const ProjectorHeadColouring& h = {});
// The category a row is coloured by (label or prediction), or for correct/wrong 1 / 0 / -1.
int64_t projector_category_of(const EmbedRow& r, ProjectorColour c);
// names[k], or k as a number when it has no name; "none" for k < 0.
std::string projector_name_of(const std::vector<std::string>& names, int64_t k);

}  // namespace attnlab::gui
