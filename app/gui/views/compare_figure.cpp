// The compare view's and the single view's figures; see compare_figure.h.
#include "app/gui/views/compare_figure.h"

#include <algorithm>
#include <cstdio>
#include <memory>

#include "app/gui/views/map_source.h"
#include "app/gui/workspace/workspace.h"
#include "core/io/text.h"
#include "viz/figures/model_compare.h"

namespace attnlab::gui {
namespace {

// The map model k shows in this frame (the frame's view model; empty before it has one).
const ShownMap& frame_map(const FrameView& frame, int k) {
  static const ShownMap kNone;
  return k >= 0 && k < int(frame.models.size()) ? frame.models[size_t(k)] : kNone;
}

// One model's map as the figure job owns it (the render worker runs the job later).
struct Input {
  std::string name;
  analysis::Array map;
  std::shared_ptr<const ImageAnalysis> analysis;  // owns the picture
  int window = 0, shift = 0, window_w = 0;
};

// A shown map and the analysis whose picture it is drawn over, as the job owns them.
Input figure_input(std::string name, ShownMap sm, std::shared_ptr<const ImageAnalysis> analysis) {
  Input in;
  in.name = std::move(name);
  in.map.name = "map";
  in.map.shape = {sm.rows, sm.cols};
  in.map.axes = {"y", "x"};
  in.map.data = std::move(sm.values);
  in.analysis = std::move(analysis);
  in.window = sm.window;
  in.shift = sm.window_shift;
  in.window_w = sm.window_w;
  return in;
}

FigureJob inputs_figure_job(const Workspace& ws, const ViewState& view, std::vector<Input> inputs,
                            const viz::MapQuery& fq, const viz::CompareOptions& options);

// The figure of `models` (workspace indices, each with a map) with `options`. The panels
// draw each picture once at its own pixels, sharp however far the view is zoomed.
FigureJob figure_job(const Workspace& ws, const ViewState& view, const std::vector<int>& models,
                     const viz::CompareOptions& options) {
  std::vector<Input> inputs;
  viz::MapQuery fq;
  for (int k : models) {
    ShownMap sm = shown_map(ws, view, k);
    if (inputs.empty()) fq = shown_figure_query(ws, view, k, sm);
    inputs.push_back(figure_input(ws.models[size_t(k)].info.name, std::move(sm),
                                  result_of(ws, k, view.image)->analysis));
  }
  return inputs_figure_job(ws, view, std::move(inputs), fq, options);
}

// The figure of `inputs` (the first one's query) with the view's style and title.
FigureJob inputs_figure_job(const Workspace& ws, const ViewState& view, std::vector<Input> inputs,
                            const viz::MapQuery& fq, const viz::CompareOptions& options) {
  viz::MapStyle style;
  style.overlay = view.style;
  style.norm = view.norm;
  return [inputs = std::move(inputs), fq, style, options,
          title = map_view(ws, view).title(fq.label)](std::string*) {
    std::vector<viz::ModelMap> maps;
    for (const Input& in : inputs)
      maps.push_back(
          {in.name, &in.map, 0, &in.analysis->picture, in.window, in.shift, in.window_w});
    return std::optional<viz::CaptionedFigure>(viz::model_compare_figure(
        inputs.front().analysis->picture, maps, fq, title, style, options));
  };
}

// The view's style and title: what every map figure's key starts with.
std::string style_key(const Workspace& ws, const ViewState& view) {
  const viz::OverlayStyle& s = view.style;
  return std::string(viz::colormap_name(s.cmap)) + "|" + text::format_g(s.alpha, 3) + "|" +
         viz::upsample_name(s.upsample) + (s.grey_background ? "|grey" : "|rgb") + "|" +
         std::to_string(int(view.norm)) + "|" + map_view(ws, view).title("") + "|" +
         std::to_string(view.image);
}

// What the figure of `models` shows: the style, the view's title, and each map's identity.
std::string models_figure_key(const Workspace& ws, const ViewState& view, const FrameView& frame,
                              const std::vector<int>& models) {
  std::string key = style_key(ws, view);
  for (int k : models) {
    const ShownMap& sm = frame_map(frame, k);
    char id[48];
    std::snprintf(id, sizeof id, "|%d:%p", k, sm.source);
    key += id + sm.label + "|" + std::to_string(sm.rows) + "x" + std::to_string(sm.cols) + "|" +
           sm.query.prefix + std::to_string(sm.query.row) + "," + std::to_string(sm.query.col);
    const ResultSlot* r = result_of(ws, k, view.image);
    if (r && r->analysis)
      key += "|" + std::to_string(r->analysis->picture.width) + "x" +
             std::to_string(r->analysis->picture.height);
  }
  return key;
}

viz::CompareOptions compare_options(const ViewState& view, const ComparePanels& panels) {
  viz::CompareOptions o;
  o.scale = view.shared_scale ? viz::CompareScale::Shared : viz::CompareScale::PerPanel;
  o.difference = panels.difference;
  return o;
}

// Model k is loaded and has a map of the view on the current image.
bool has_map(const Workspace& ws, const ViewState& view, int k) {
  return k >= 0 && k < int(ws.models.size()) && ws.models[size_t(k)].status == LoadStatus::Ready &&
         shown_map(ws, view, k).ok;
}

}  // namespace

ComparePanels compare_panels(const Workspace& ws, const ViewState& view) {
  ComparePanels p;
  for (int k = 0; k < int(ws.models.size()); ++k)
    if (has_map(ws, view, k)) p.models.push_back(k);
  if (!view.difference) return p;
  int a = -1, b = -1;  // where models A and B sit among those compared
  for (int i = 0; i < int(p.models.size()); ++i) {
    if (p.models[size_t(i)] == view.difference_a) a = i;
    if (p.models[size_t(i)] == view.difference_b) b = i;
  }
  if (a >= 0 && b >= 0 && a != b) p.difference = std::make_pair(a, b);
  return p;
}

FigureJob compare_figure_job(const Workspace& ws, const ViewState& view) {
  const ComparePanels panels = compare_panels(ws, view);
  if (panels.models.empty()) return no_figure("no model has a map yet");
  return figure_job(ws, view, panels.models, compare_options(view, panels));
}

std::string compare_figure_key(const Workspace& ws, const ViewState& view, const FrameView& frame,
                               const ComparePanels& panels) {
  std::string key = models_figure_key(ws, view, frame, panels.models);
  key += view.shared_scale ? "|shared" : "|own";
  if (panels.difference)
    key += "|diff" + std::to_string(panels.difference->first) + "-" +
           std::to_string(panels.difference->second);
  return key;
}

FigureJob single_map_figure_job(const Workspace& ws, const ViewState& view) {
  if (!has_map(ws, view, view.model)) return no_figure(shown_map(ws, view, view.model).why);
  viz::CompareOptions o;
  o.input_panel = false;
  const double z = std::max(1.0f, view.zoom);
  if (z > 1) {  // the zoomed part
    o.view_x0 = view.pan_x;
    o.view_y0 = view.pan_y;
    o.view_x1 = std::min(1.0, double(view.pan_x) + 1.0 / z);
    o.view_y1 = std::min(1.0, double(view.pan_y) + 1.0 / z);
  }
  return figure_job(ws, view, {view.model}, o);
}

std::string single_map_figure_key(const Workspace& ws, const ViewState& view,
                                  const FrameView& frame) {
  return "single|" + models_figure_key(ws, view, frame, {view.model}) + "|" +
         text::format_g(view.zoom, 4) + "," + text::format_g(view.pan_x, 4) + "," +
         text::format_g(view.pan_y, 4);
}

bool edit_difference_shown(const Workspace& ws, const ViewState& view) {
  const int i = view.image;
  const bool heads = view.heads_grid && view.kind != MapKind::Rollout;  // the heads grid wins
  return view.edit.difference && !view.compare && !heads && !is_explanation(view.kind) && i >= 0 &&
         i < int(ws.images.size()) && !ws.images[size_t(i)].edits.empty();
}

FigureJob edit_difference_figure_job(const Workspace& ws, const ViewState& view) {
  const int m = view.model;
  ShownMap edited = shown_map(ws, view, m), original = shown_original_map(ws, view, m);
  if (!edited.ok) return no_figure(edited.why);
  if (!original.ok) return no_figure(original.why);
  const ResultSlot* r = result_of(ws, m, view.image);
  const viz::MapQuery fq = shown_figure_query(ws, view, m, edited);
  std::vector<Input> inputs;
  inputs.push_back(figure_input("original", std::move(original), r->original->analysis));
  inputs.push_back(figure_input("edited", std::move(edited), r->analysis));
  viz::CompareOptions o;
  o.input_panel = false;  // each panel is over its own picture
  o.difference = std::make_pair(1, 0);
  return inputs_figure_job(ws, view, std::move(inputs), fq, o);
}

std::string edit_difference_figure_key(const Workspace& ws, const ViewState& view,
                                       const FrameView& frame) {
  const ShownMap& edited = frame_map(frame, view.model);
  const ShownMap& original = frame.original;
  char id[64];
  std::snprintf(id, sizeof id, "|%p|%p", edited.source, original.source);
  return "edit-diff|" + models_figure_key(ws, view, frame, {view.model}) + id + original.label +
         (original.ok ? "|ok" : "|" + original.why);
}

std::string heads_figure_key(const Workspace& ws, const ViewState& view, const FrameView& frame) {
  return "heads|" + models_figure_key(ws, view, frame, {view.model});
}

std::string explanation_figure_key(const Workspace& ws, const ViewState& view) {
  std::string key = "explain|" + style_key(ws, view) + "|" + std::to_string(int(view.kind)) + "|" +
                    std::to_string(view.explain_class);
  for (int k = 0; k < int(ws.models.size()); ++k) {
    if (!view.compare && k != view.model) continue;
    const ResultSlot* r = result_of(ws, k, view.image);
    char id[32];
    std::snprintf(id, sizeof id, "|%p",
                  r ? static_cast<const void*>(r->explanation.get()) : nullptr);
    key += id;
  }
  return key;
}

}  // namespace attnlab::gui
