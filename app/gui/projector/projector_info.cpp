// projector-info's answer (issue 70): the Projector tab's state as JSON for scripts and
// tests — the main folder and its projection, the colouring and head statistics, the hovered,
// opened and selected points, the comparison plot, the group maps, the patch retrieval and
// the workspace's images. Kept apart from projector.cpp, which runs the tab's jobs.
#include <algorithm>
#include <cmath>

#include "app/gui/projector/patch_retrieval.h"
#include "app/gui/projector/projector.h"
#include "app/gui/projector/projector_groups.h"
#include "app/session/embedding_projection.h"

namespace attnlab::gui {

namespace {

// The head statistics for projector-info: the head picked, its entropy's range, its extremes.
nlohmann::json projector_heads_info(const ProjectorState& p) {
  const EmbedFolder* d = p.main.data.get();
  nlohmann::json j;
  j["available"] = d && d->has_heads();
  j["error"] = d ? d->heads_error : "";
  j["layers"] = d ? d->head_layers : 0;
  j["max_heads"] = d ? d->max_heads : 0;
  j["layer"] = p.head_layer;
  j["head"] = p.head_index;
  if (!d || !d->has_heads()) return j;
  j["path"] = d->head_info[size_t(std::clamp(p.head_layer, 0, int(d->head_layers) - 1))].path;
  // The picked head's values over the folder: how many are finite, and their range.
  const auto spread = [&](bool rank, const char* finite_key, const char* range_key) {
    float lo = INFINITY, hi = -INFINITY;
    int finite = 0;
    for (int64_t i = 0; i < d->n; ++i) {
      const float v = d->head_value(i, p.head_layer, p.head_index, rank);
      if (!std::isfinite(v)) continue;
      ++finite;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    j[finite_key] = finite;
    j[range_key] = finite > 0 ? nlohmann::json::array({lo, hi}) : nlohmann::json::array();
  };
  spread(false, "finite", "range");
  // The same head's effective output ranks (head_output_rank.npy): what HeadRank colours by.
  j["rank_available"] = d->has_head_rank();
  if (d->has_head_rank()) spread(true, "rank_finite", "rank_range");
  nlohmann::json sharpest = nlohmann::json::array(), broadest = nlohmann::json::array();
  for (const EmbedHeadExtreme& e : d->head_extremes) {
    if (e.layer != p.head_layer || e.head != p.head_index) continue;
    nlohmann::json r;
    r["place"] = e.rank;
    r["row"] = e.row;
    r["image"] = e.row >= 0 && e.row < d->n ? d->rows[size_t(e.row)].image : "";
    r["head_entropy"] = e.entropy;
    (e.sharpest ? sharpest : broadest).push_back(r);
  }
  j["sharpest"] = sharpest;
  j["broadest"] = broadest;
  return j;
}

// How many of the selected rows `d` judges (a label and a prediction), and how many of
// those it has right: selected_judged and selected_correct of `j`.
void add_selection_accuracy(const EmbedFolder* d, const std::vector<int>& selected,
                            nlohmann::json& j) {
  int judged = 0, correct = 0;
  if (d)
    for (const int i : selected) {
      const int c = d->rows[size_t(i)].correct;
      judged += c >= 0;
      correct += c == 1;
    }
  j["selected_judged"] = judged;
  j["selected_correct"] = correct;
}

}  // namespace

nlohmann::json projector_info(const ProjectorState& p, const Workspace& ws, const ViewState& view) {
  const EmbedFolder* d = p.main.data.get();
  nlohmann::json j;
  j["dir"] = p.main.dir;
  j["loading"] = p.main.loading;
  j["computing"] = p.main.computing;
  j["error"] = p.error;
  j["points"] = d ? d->n : 0;
  j["dims"] = d ? d->dims : 0;
  j["tokens"] = d ? d->tokens : 0;  // a tokens folder: each point is the mean of these
  j["projected"] = !p.main.xy.empty();
  j["method"] = p.main.xy.empty() ? "" : session::projection_method_title(p.main.shown);
  j["note"] = p.main.note;
  j["colour"] = projector_colour_name(p.colour);
  j["head_stats"] = projector_heads_info(p);
  j["hovered"] = p.hovered;
  j["hovered_image"] =
      d && p.hovered >= 0 && p.hovered < d->n ? d->rows[size_t(p.hovered)].image : "";
  j["hovered_thumbnail"] = p.hovered >= 0 && p.thumbs.count(p.hovered) > 0;
  j["clicked"] = p.clicked;
  j["opened_path"] = p.opened_path;
  j["selected"] = p.selected.size();
  j["selected_in"] = p.has_selection && p.sel_plot == ProjectorPlot::Compare ? "compare" : "main";
  j["selected_drawn"] = p.main.drawn_selected;  // highlighted by the main plot's last frame
  add_selection_accuracy(d, p.selected, j);
  // The second plot: the same images through another model, projected alike.
  const ProjectorSide& c = p.compare;
  const EmbedFolder* cd = c.data.get();
  nlohmann::json cj;
  cj["dir"] = c.dir;
  cj["open"] = cd != nullptr;
  cj["description"] = cd ? cd->description : "";
  cj["loading"] = c.loading;
  cj["computing"] = c.computing;
  cj["error"] = p.compare_error;
  cj["points"] = cd ? cd->n : 0;
  cj["dims"] = cd ? cd->dims : 0;
  cj["projected"] = !c.xy.empty();
  cj["method"] = c.xy.empty() ? "" : session::projection_method_title(c.shown);
  cj["note"] = c.note;
  cj["selected_drawn"] = c.drawn_selected;  // highlighted by its last frame
  add_selection_accuracy(cd, p.selected, cj);
  j["compare"] = cj;
  j["group_maps"] = group_maps_info(p.group_maps);
  j["retrieval"] = retrieval_info(p);
  // The view's query cell and the grid it was picked on (a match opened sets it).
  j["query_cell"] = nlohmann::json::array(
      {view.query.row, view.query.col, view.query.grid_rows, view.query.grid_cols});
  nlohmann::json images = nlohmann::json::array();
  for (const auto& im : ws.images) images.push_back(im.path);
  j["workspace_images"] = images;
  j["current_image"] = view.image >= 0 && view.image < int(ws.images.size())
                           ? ws.images[size_t(view.image)].path
                           : "";
  return j;
}

}  // namespace attnlab::gui
