// The Projector's group maps; see projector_groups.h.
#include "app/gui/projector/projector_groups.h"

#include <numeric>

#include "app/gui/projector/projector.h"

namespace attnlab::gui {
namespace {

// At most `cap` of `rows`, evenly spaced (all of them when fewer).
std::vector<int> evenly_capped(const std::vector<int>& rows, int cap) {
  if (int(rows.size()) <= cap) return rows;
  std::vector<int> out;
  for (int k = 0; k < cap; ++k)
    out.push_back(rows[size_t(int64_t(k) * int64_t(rows.size()) / cap)]);
  return out;
}

double map_mean(const MeanAttentionMap& m) {
  if (m.map.empty()) return 0.0;
  return std::accumulate(m.map.begin(), m.map.end(), 0.0) / double(m.map.size());
}

}  // namespace

bool request_group_maps(ProjectorState& p, const Workspace& ws, const ViewState& view,
                        std::string* error) {
  ProjectorGroupMaps& g = p.group_maps;
  const bool has_model = view.model >= 0 && view.model < int(ws.models.size()) &&
                         ws.models[size_t(view.model)].status == LoadStatus::Ready &&
                         ws.models[size_t(view.model)].model;
  if (!has_model) {
    *error = "group maps: open a model in the workspace first (its attention is averaged)";
    return false;
  }
  if (!p.main.data || !p.has_selection || p.selected.empty()) {
    *error = "group maps: select a group first (Shift + drag in a plot)";
    return false;
  }
  std::vector<uint8_t> in(size_t(p.main.data->n), 0);
  for (const int i : p.selected) in[size_t(i)] = 1;
  std::vector<int> group, rest;
  for (size_t i = 0; i < in.size(); ++i) (in[i] ? group : rest).push_back(int(i));
  if (rest.empty()) {
    *error = "group maps: the group holds every point; there is no rest to compare with";
    return false;
  }
  const auto files = [&](const std::vector<int>& rows, std::vector<std::string>& out) {
    out.clear();
    for (const int i : evenly_capped(rows, ProjectorGroupMaps::kCap)) {
      std::string why;
      const std::string f = point_image_file(p, i, &why);
      if (f.empty()) {
        *error = "group maps: " + why;
        return false;
      }
      out.push_back(f);
    }
    return true;
  };
  if (!files(group, g.group_files) || !files(rest, g.rest_files)) return false;
  const ModelSlot& m = ws.models[size_t(view.model)];
  g.model = m.model;
  g.model_name = m.info.name;
  g.group_total = int(group.size());
  g.rest_total = int(rest.size());
  g.error.clear();
  g.wanted = true;
  return true;
}

void run_group_maps_request(ProjectorGroupMaps& g, ComputeWorker& compute) {
  if (!g.wanted) return;
  g.wanted = false;
  if (!g.model) return;
  g.computing = true;
  const uint64_t request = ++g.request;
  const int64_t total = int64_t(g.group_files.size() + g.rest_files.size());
  compute.submit("projector: group maps with " + g.model_name, [model = g.model,
                                                                group = g.group_files,
                                                                rest = g.rest_files, request,
                                                                total](JobContext& ctx) {
    ProjectorGroupMapsDone out;
    out.request = request;
    try {
      const auto cancelled = [&ctx] { return ctx.cancelled(); };
      out.group = mean_attention_map(*model, group, cancelled,
                                     [&](int64_t done) { ctx.progress(done, total); });
      out.rest = mean_attention_map(*model, rest, cancelled, [&](int64_t done) {
        ctx.progress(int64_t(group.size()) + done, total);
      });
      if (out.group.map.empty() || out.rest.map.empty())
        out.error = "group maps: no image of a side could be read (" +
                    (out.group.failed.empty() ? out.rest.failed : out.group.failed).front() + ")";
      else if (out.group.rows != out.rest.rows || out.group.cols != out.rest.cols)
        out.error = "group maps: the group's grid is not the rest's";
    } catch (const std::exception& e) {
      out.error = std::string("group maps: ") + e.what();
    }
    if (!ctx.cancelled()) ctx.post(std::move(out));
  });
}

void apply_result(ProjectorState& p, StatusBarState& status, const ProjectorGroupMapsDone& r) {
  ProjectorGroupMaps& g = p.group_maps;
  if (r.request != g.request) return;
  g.computing = false;
  if (!r.error.empty()) {
    g.error = r.error;
    status.notice = "projector: " + r.error;
    status.notice_is_error = true;
    return;
  }
  g.group = r.group;
  g.rest = r.rest;
}

nlohmann::json group_maps_info(const ProjectorGroupMaps& g) {
  nlohmann::json j;
  j["computing"] = g.computing;
  j["error"] = g.error;
  j["model"] = g.model_name;
  j["shown"] = !g.group.map.empty();
  j["cap"] = ProjectorGroupMaps::kCap;
  j["group_total"] = g.group_total;
  j["rest_total"] = g.rest_total;
  j["group_images"] = g.group.images;
  j["rest_images"] = g.rest.images;
  j["failed"] = g.group.failed.size() + g.rest.failed.size();
  j["rows"] = g.group.rows;
  j["cols"] = g.group.cols;
  j["query"] = g.group.query;
  j["layer"] = g.group.layer;
  j["group_mean"] = map_mean(g.group);
  j["rest_mean"] = map_mean(g.rest);
  return j;
}

}  // namespace attnlab::gui
