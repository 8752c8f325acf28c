// The Projector tab's jobs, answers, selection and opening; see projector.h.
#include "app/gui/projector/projector.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "app/gui/projector/patch_retrieval.h"
#include "app/gui/projector/projector_groups.h"
#include "app/session/embedded_images.h"
#include "app/session/embedding_projection.h"
#include "core/io/image_io.h"

namespace attnlab::gui {
namespace {

namespace fs = std::filesystem;

std::string resolve_image(const EmbedFolder& d, const std::string& image) {
  return session::EmbeddedImagePaths(d.dir, d.meta).resolve(image);
}

std::string projector_percent(double x) {
  char s[32];
  std::snprintf(s, sizeof s, "%.1f%%", 100.0 * x);
  return s;
}

// The caption's line from session::project_embeddings' info.
std::string projection_note(const nlohmann::json& info) {
  const std::string method = info.value("method", "");
  std::string note;
  if (method == "pca") {
    const auto& r = info.value("explained_variance_ratio", nlohmann::json::array());
    if (r.size() >= 2)
      note = "PC1 " + projector_percent(r[0].get<double>()) + ", PC2 " +
             projector_percent(r[1].get<double>()) + " of the variance";
  } else if (method == "tsne") {
    char s[96];
    std::snprintf(s, sizeof s, "perplexity %.4g, KL divergence %.3f", info.value("perplexity", 0.0),
                  info.value("kl_divergence", 0.0));
    note = s;
  } else if (method == "umap") {
    note = "n_neighbors " + std::to_string(info.value("n_neighbors", 0)) + ", seed " +
           std::to_string(info.value("seed", uint64_t(0)));
  }
  if (info.contains("note") && info["note"].is_string())
    note += (note.empty() ? "" : "; ") + info["note"].get<std::string>();
  return note;
}

// The projection of `data`, on the worker; posts the answer (nothing when cancelled).
void run_projection(JobContext& ctx, const std::shared_ptr<const EmbedFolder>& data,
                    session::ProjectionRequest request, ProjectorPlot plot, uint64_t id) {
  ProjectorProjected out;
  out.plot = plot;
  out.request = id;
  out.method = request.method;
  // The cores but one: the interface keeps one (the result does not depend on it).
  request.threads = std::max(1, int(std::thread::hardware_concurrency()) - 1);
  try {
    const session::EmbeddingProjection r = session::project_embeddings(
        data->x.data(), data->n, data->dims, request, [&](int64_t done, int64_t total) {
          ctx.progress(done, total);
          return !ctx.cancelled();
        });
    if (ctx.cancelled()) return;
    out.xy.assign(r.coords.begin(), r.coords.end());
    out.info = r.info;
    out.note = projection_note(r.info);
    out.seconds = r.info.value("seconds", 0.0);
  } catch (const std::exception& e) {
    if (ctx.cancelled()) return;  // the library's ProjectionCancelled, or anything after Cancel
    out.error = session::projection_method_title(request.method) + ": " + e.what();
  }
  ctx.post(std::move(out));
}

void submit_load(ProjectorSide& s, ProjectorPlot plot, ComputeWorker& compute) {
  s.load_wanted = false;
  s.loading = true;
  const uint64_t request = ++s.load_request;
  compute.submit(
      plot == ProjectorPlot::Main ? "projector: reading embeddings"
                                  : "projector: reading the comparison's embeddings",
      [dir = s.dir, request, plot](JobContext& ctx) {
        ProjectorLoaded out;
        out.plot = plot;
        out.request = request;
        try {
          out.data = std::make_shared<const EmbedFolder>(read_embed_folder(dir));
        } catch (const std::exception& e) {
          out.error = e.what();
        }
        ctx.post(std::move(out));
      },
      Lane::Traces);
}

void submit_projection(ProjectorState& p, ProjectorSide& s, ProjectorPlot plot,
                       ComputeWorker& compute) {
  s.project_wanted = false;
  if (!s.data) return;
  s.computing = true;
  session::ProjectionRequest request;
  request.method = p.method;
  request.perplexity = double(p.perplexity);
  request.neighbors = p.n_neighbors;
  request.seed = uint64_t(p.seed);
  if (plot == ProjectorPlot::Compare && p.main.project_request > 0) request = p.main.asked;
  s.asked = request;
  const uint64_t id = ++s.project_request;
  compute.submit("projector: " + session::projection_method_title(request.method) +
                     (plot == ProjectorPlot::Compare ? " (comparison)" : ""),
                 [data = s.data, request, plot, id](JobContext& ctx) {
                   run_projection(ctx, data, request, plot, id);
                 });
}

void reset_side(ProjectorSide& s) {
  s.data.reset();
  s.xy.clear();
  s.note.clear();
  s.shown.clear();
  s.loading = s.computing = s.project_wanted = false;
  s.zoom = 1.0f;
  s.pan_x = s.pan_y = 0.0f;
  s.drawn_selected = -1;
}

}  // namespace

void run_projector_requests(ProjectorState& p, LoadWorker& loader, ComputeWorker& compute) {
  for (const ProjectorPlot plot : {ProjectorPlot::Main, ProjectorPlot::Compare}) {
    ProjectorSide& s = p.side(plot);
    if (s.load_wanted) submit_load(s, plot, compute);
    if (s.project_wanted && !s.loading) submit_projection(p, s, plot, compute);
  }
  run_group_maps_request(p.group_maps, compute);
  run_retrieval_request(p.retrieval, compute);
  if (p.thumb_wanted >= 0) {
    const int i = p.thumb_wanted;
    p.thumb_wanted = -1;
    const EmbedFolder* d = p.main.data.get();
    if (d && i < d->n && !p.thumbs.count(i) && !p.thumb_errors.count(i)) {
      bool pending = false;
      for (const auto& [job, point] : p.thumb_jobs) pending = pending || point == i;
      if (!pending)
        p.thumb_jobs[loader.submit(JobKind::Image, resolve_image(*d, d->rows[size_t(i)].image))] =
            i;
    }
  }
}

bool projector_has_requests(const ProjectorState& p) {
  const auto waiting = [](const ProjectorSide& s) {
    return s.load_wanted || (s.project_wanted && s.data);
  };
  return waiting(p.main) || waiting(p.compare) || p.thumb_wanted >= 0 || p.group_maps.wanted ||
         p.retrieval.wanted;
}

void cancel_projector(ProjectorState& p) {
  for (ProjectorSide* s : {&p.main, &p.compare}) {
    s->loading = s->computing = false;
    s->project_wanted = false;
  }
  p.group_maps.computing = p.group_maps.wanted = false;
  cancel_retrieval(p.retrieval);
}

void open_projector_folder(ProjectorState& p, const std::string& dir) {
  p.main.dir = dir;
  p.main.load_wanted = true;
  p.error.clear();
  std::snprintf(p.dir_edit.data(), p.dir_edit.size(), "%s", dir.c_str());
}

void open_projector_compare(ProjectorState& p, const std::string& dir) {
  reset_side(p.compare);
  p.compare.dir = dir;
  p.compare.load_wanted = !dir.empty();
  ++p.compare.load_request;  // an answer still coming is for the folder closed
  p.compare_error.clear();
  std::snprintf(p.compare_edit.data(), p.compare_edit.size(), "%s", dir.c_str());
}

void request_projection(ProjectorState& p) {
  p.main.project_wanted = true;
  p.compare.project_wanted = p.compare.data != nullptr || p.compare.loading;
}

std::string same_images_error(const EmbedFolder& a, const EmbedFolder& b) {
  if (a.n != b.n)
    return b.dir + " holds " + std::to_string(b.n) + " images, " + a.dir + " " +
           std::to_string(a.n) + ": not the same images";
  for (size_t i = 0; i < a.rows.size(); ++i)
    if (a.rows[i].image != b.rows[i].image)
      return "row " + std::to_string(i) + " of " + b.dir + " is " + b.rows[i].image + ", of " +
             a.dir + " " + a.rows[i].image + ": not the same images in the same order";
  return "";
}

namespace {

// Drops the comparison when its images are not the main folder's (said in the tab and the
// status bar); true when it stays.
bool check_compare(ProjectorState& p, StatusBarState& status) {
  if (!p.main.data || !p.compare.data) return true;
  const std::string why = same_images_error(*p.main.data, *p.compare.data);
  if (why.empty()) return true;
  const std::string dir = p.compare.dir;
  reset_side(p.compare);
  p.compare.dir.clear();
  p.compare_error = "comparison refused: " + why;
  status.notice = "projector: " + p.compare_error;
  status.notice_is_error = true;
  return false;
}

}  // namespace

void apply_result(ProjectorState& p, StatusBarState& status, const ProjectorLoaded& r) {
  ProjectorSide& s = p.side(r.plot);
  if (r.request != s.load_request) return;  // a newer folder was asked for
  s.loading = false;
  const bool main = r.plot == ProjectorPlot::Main;
  if (!r.data) {
    (main ? p.error : p.compare_error) = r.error;
    if (!main) p.compare.dir.clear();
    status.notice = "projector: " + r.error;
    status.notice_is_error = true;
    return;
  }
  s.data = r.data;
  s.xy.clear();
  s.note.clear();
  s.zoom = 1.0f;
  s.pan_x = s.pan_y = 0.0f;
  s.project_wanted = true;  // show something at once: the method picked (PCA by default)
  if (main) {
    p.thumbs.clear();
    p.thumb_jobs.clear();
    p.thumb_errors.clear();
    p.hovered = p.script_hover = p.clicked = -1;
    p.opened_path.clear();
    clear_selection(p);
    clear_retrieval(p.retrieval);
    if ((p.colour == ProjectorColour::HeadEntropy && !r.data->has_heads()) ||
        (p.colour == ProjectorColour::HeadRank && !r.data->has_head_rank()))
      p.colour = ProjectorColour::Label;
    clamp_projector_head(p);
  }
  if (!check_compare(p, status)) return;
  status.notice = std::string("projector: ") + (main ? "" : "comparison: ") +
                  std::to_string(r.data->n) + " embeddings of " + std::to_string(r.data->dims) +
                  " dimensions from " + r.data->dir;
  status.notice_is_error = false;
}

void apply_result(ProjectorState& p, StatusBarState& status, const ProjectorProjected& r) {
  ProjectorSide& s = p.side(r.plot);
  if (r.request != s.project_request) return;
  s.computing = false;
  if (!r.error.empty()) {
    (r.plot == ProjectorPlot::Main ? p.error : p.compare_error) = r.error;
    status.notice = "projector: " + r.error;
    status.notice_is_error = true;
    return;
  }
  if (!s.data || r.xy.size() != size_t(s.data->n) * 2) return;
  s.xy = r.xy;
  s.shown = r.method;
  s.note = r.note;
  s.seconds = r.seconds;
  s.zoom = 1.0f;
  s.pan_x = s.pan_y = 0.0f;
  // A box drawn in this plot's old coordinates means nothing now; the other plot's stays.
  if (p.sel_plot == r.plot) clear_selection(p);
}

bool apply_projector_thumbnail(ProjectorState& p, JobResult& r) {
  const auto it = p.thumb_jobs.find(r.id);
  if (it == p.thumb_jobs.end()) return false;
  const int i = it->second;
  p.thumb_jobs.erase(it);
  std::string error = r.error;
  GlTexture t;
  if (error.empty() && t.upload_rgb(r.image.rgb.data(), r.image.width, r.image.height, &error))
    p.thumbs[i] = std::move(t);
  else
    p.thumb_errors[i] = error;
  return true;
}

namespace {

// The group maps are of the selection: another selection drops them (and any on the way).
void drop_group_maps(ProjectorGroupMaps& g) {
  const uint64_t request = g.request + 1;
  g = ProjectorGroupMaps{};
  g.request = request;
}

}  // namespace

void select_box(ProjectorState& p, float x0, float y0, float x1, float y1, ProjectorPlot plot) {
  const std::vector<float>& xy = p.side(plot).xy;
  drop_group_maps(p.group_maps);
  p.has_selection = true;
  p.sel_plot = plot;
  p.sel_x0 = std::min(x0, x1);
  p.sel_x1 = std::max(x0, x1);
  p.sel_y0 = std::min(y0, y1);
  p.sel_y1 = std::max(y0, y1);
  p.selected.clear();
  for (size_t i = 0; i * 2 + 1 < xy.size(); ++i) {
    const float x = xy[2 * i], y = xy[2 * i + 1];
    if (x >= p.sel_x0 && x <= p.sel_x1 && y >= p.sel_y0 && y <= p.sel_y1)
      p.selected.push_back(int(i));
  }
}

void clear_selection(ProjectorState& p) {
  if (p.has_selection) drop_group_maps(p.group_maps);
  p.has_selection = false;
  p.selected.clear();
}

std::string point_image_file(const ProjectorState& p, int i, std::string* error) {
  if (!p.main.data || i < 0 || i >= p.main.data->n) {
    *error = "no point " + std::to_string(i);
    return "";
  }
  const EmbedFolder& d = *p.main.data;
  const EmbedRow& row = d.rows[size_t(i)];
  if (!d.has_pixels.empty() && d.has_pixels[size_t(i)]) {  // a dataset's: written as a PNG
    std::string name = row.image;
    for (char& c : name)
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '-';
    try {
      const fs::path dir = fs::temp_directory_path() / "attnlab-projector";
      fs::create_directories(dir);
      const std::string path = (dir / (name + ".png")).string();
      const size_t size = size_t(d.thumb_w) * size_t(d.thumb_h);
      io::save_png(path, d.thumb_w, d.thumb_h, 1, d.pixels.data() + size_t(i) * size);
      return path;
    } catch (const std::exception& e) {
      *error = e.what();
      return "";
    }
  }
  const std::string path = resolve_image(d, row.image);
  if (!fs::exists(path)) {
    *error = "the image " + row.image + " is not here (" +
             (row.image.find(':') != std::string::npos ? "its dataset is not installed"
                                                       : "moved or deleted") +
             ")";
    return "";
  }
  return path;
}

bool open_point(ProjectorState& p, int i, FrameRequests& requests, StatusBarState& status) {
  std::string error;
  const std::string path = point_image_file(p, i, &error);
  if (path.empty()) {
    status.notice = "projector: " + error;
    status.notice_is_error = true;
    return false;
  }
  p.clicked = i;
  p.opened_path = path;
  requests.open.push_back(OpenRequest{FileKind::Image, path});
  return true;
}

void clamp_projector_head(ProjectorState& p) {
  const EmbedFolder* d = p.main.data.get();
  if (!d || !d->has_heads()) {
    p.head_layer = p.head_index = 0;
    return;
  }
  p.head_layer = std::clamp(p.head_layer, 0, int(d->head_layers) - 1);
  const int heads = int(d->head_info[size_t(p.head_layer)].heads);
  p.head_index = std::clamp(p.head_index, 0, std::max(0, heads - 1));
}

std::string projector_colour_name(ProjectorColour c) {
  switch (c) {
    case ProjectorColour::Label:
      return "label";
    case ProjectorColour::Prediction:
      return "prediction";
    case ProjectorColour::Correct:
      return "correct";
    case ProjectorColour::Confidence:
      return "confidence";
    case ProjectorColour::HeadEntropy:
      return "head-entropy";
    case ProjectorColour::HeadRank:
      return "head-rank";
  }
  return "";
}

}  // namespace attnlab::gui
