// Agent attention's agents for one query (the agents analysis): the query's weights over
// the A = p×p agents, drawn on the agents' pooled cells over the picture, and where its
// strongest agents look (each agent's softmax over the keys, over the picture).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/analysis/table.h"
#include "viz/figures/attention_maps.h"
#include "viz/figures/captioned_figure.h"
#include "viz/figures/figure_common.h"
#include "viz/figures/map_panels.h"
#include "viz/rgba_image.h"

namespace attnlab::viz {

struct AgentFigureOptions {
  int64_t layer = -1;             // traced layer; -1 (or one without agents): the last
  std::optional<MapQuery> query;  // on the layer's grid; none: its centre
  int top = 3;                    // the strongest agents shown
  double width_in = kPageWidthIn;
  double font_pt = 7;
};

// image_arrays: "agents__<tag>__L<ll>__maps" (agent, y, x) and "...__weights" (y, x, agent).
// Throws std::invalid_argument when they are missing or malformed.
CaptionedFigure agent_figure(const std::vector<analysis::Array>& image_arrays,
                             const std::string& image_tag, const RgbaImage& image,
                             const AgentFigureOptions& options = {});

}  // namespace attnlab::viz
