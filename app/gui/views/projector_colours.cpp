// The Projector tab's colours; see projector_colours.h.
#include "app/gui/views/projector_colours.h"

#include <algorithm>
#include <cmath>

#include "viz/colormap.h"
#include "viz/figures/projection.h"

namespace attnlab::gui {
namespace {

// A viz colour (the figures' palettes: one palette for the tab and the report's figure).
ImU32 projector_viz_colour(const viz::Color& c, int alpha) {
  return IM_COL32(int(std::lround(c.r * 255)), int(std::lround(c.g * 255)),
                  int(std::lround(c.b * 255)), alpha);
}

}  // namespace

ImU32 projector_category_colour(int64_t k, size_t count, int alpha) {
  if (k < 0) return IM_COL32(150, 150, 150, alpha);
  if (count <= 10) return projector_viz_colour(viz::tab10_color(int(k % 10)), alpha);
  if (count <= 20) return projector_viz_colour(viz::tab20_color(int(k % 20)), alpha);
  float r = 0, g = 0, b = 0;
  ImGui::ColorConvertHSVtoRGB(std::fmod(float(k) * 0.618034f, 1.0f), 0.65f, 0.9f, r, g, b);
  return IM_COL32(int(r * 255), int(g * 255), int(b * 255), alpha);
}

ImU32 projector_confidence_colour(double c, int alpha) {
  if (!(c >= 0)) return IM_COL32(150, 150, 150, alpha);  // NaN: a model without classes
  const viz::Rgba8 v = viz::colormap_at(viz::Colormap::Viridis, float(std::min(c, 1.0)));
  return IM_COL32(v.r, v.g, v.b, alpha);
}

ImU32 projector_correct_colour(int correct, int alpha) {
  return correct == 1   ? IM_COL32(44, 160, 44, alpha)
         : correct == 0 ? IM_COL32(214, 39, 40, alpha)
                        : IM_COL32(150, 150, 150, alpha);
}

int64_t projector_category_of(const EmbedRow& r, ProjectorColour c) {
  switch (c) {
    case ProjectorColour::Label:
      return r.label;
    case ProjectorColour::Prediction:
      return r.prediction;
    case ProjectorColour::Correct:
      return r.correct;
    case ProjectorColour::Confidence:
    case ProjectorColour::HeadEntropy:
    case ProjectorColour::HeadRank:
      break;
  }
  return -1;
}

ProjectorHeadColouring projector_head_colouring(const EmbedFolder& d, int layer, int head,
                                                bool rank) {
  ProjectorHeadColouring h;
  h.layer = layer;
  h.head = head;
  h.rank = rank;
  float lo = INFINITY, hi = -INFINITY;
  for (int64_t i = 0; i < d.n; ++i) {
    const float v = d.head_value(i, layer, head, rank);
    if (!std::isfinite(v)) {
      ++h.missing;
      continue;
    }
    ++h.finite;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (h.finite > 0) {
    h.lo = lo;
    h.hi = hi;
  }
  return h;
}

std::string projector_head_name(const EmbedFolder& d, int layer, int head) {
  std::string s = "layer " + std::to_string(layer);
  if (layer >= 0 && layer < int(d.head_info.size()) && !d.head_info[size_t(layer)].path.empty())
    s += " (" + d.head_info[size_t(layer)].path + ")";
  return s + ", head " + std::to_string(head);
}

ImU32 projector_point_colour(const EmbedFolder& d, size_t i, ProjectorColour c, int alpha,
                             const ProjectorHeadColouring& h) {
  const EmbedRow& r = d.rows[i];
  switch (c) {
    case ProjectorColour::Label:
      return projector_category_colour(r.label, d.label_names.size(), alpha);
    case ProjectorColour::Prediction:
      return projector_category_colour(r.prediction, d.class_names.size(), alpha);
    case ProjectorColour::Correct:
      return projector_correct_colour(r.correct, alpha);
    case ProjectorColour::Confidence:
      return projector_confidence_colour(r.confidence, alpha);
    case ProjectorColour::HeadEntropy:
    case ProjectorColour::HeadRank: {
      const float v = d.head_value(int64_t(i), h.layer, h.head, h.rank);
      if (!std::isfinite(v)) return projector_confidence_colour(NAN, alpha);
      return projector_confidence_colour(h.hi > h.lo ? double((v - h.lo) / (h.hi - h.lo)) : 0.5,
                                         alpha);
    }
  }
  return IM_COL32(150, 150, 150, alpha);
}

std::string projector_name_of(const std::vector<std::string>& names, int64_t k) {
  if (k < 0) return "none";
  if (k < int64_t(names.size()) && !names[size_t(k)].empty()) return names[size_t(k)];
  return std::to_string(k);
}

}  // namespace attnlab::gui
