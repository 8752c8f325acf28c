// The Projector tab's jobs, answers, selection and opening; see projector.h.
#include "app/gui/projector/projector.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "core/io/image_io.h"
#include "core/projection/pca.h"
#include "core/projection/tsne.h"
#include "core/projection/umap.h"

namespace attnlab::gui {
namespace {

namespace fs = std::filesystem;

std::string resolve_image(const EmbedFolder& d, const std::string& image) {
  if (image.empty() || fs::exists(image)) return image;
  const fs::path beside = fs::path(d.dir) / image;
  return fs::exists(beside) ? beside.string() : image;
}

std::string percent(double x) {
  char s[32];
  std::snprintf(s, sizeof s, "%.1f%%", 100.0 * x);
  return s;
}

// The projection of `data` by `method`, on the worker; posts the answer (nothing when
// cancelled).
void run_projection(JobContext& ctx, const std::shared_ptr<const EmbedFolder>& data,
                    ProjectionMethod method, float perplexity, int n_neighbors, int seed,
                    uint64_t request) {
  namespace pj = attnlab::projection;
  const auto t0 = std::chrono::steady_clock::now();
  ProjectorProjected out;
  out.request = request;
  out.method = method;
  const pj::Progress progress = [&](int64_t done, int64_t total) {
    ctx.progress(done, total);
    return !ctx.cancelled();
  };
  // The cores but one: the interface keeps one (the result does not depend on it).
  const int threads = std::max(1, pj::resolve_threads(0) - 1);
  try {
    const pj::MatrixView x(data->x.data(), data->n, data->dims);
    std::vector<double> coords;
    if (method == ProjectionMethod::Pca) {
      const pj::PcaResult r = pj::pca(x, 2, progress);
      coords = r.coords;
      if (r.explained_variance_ratio.size() >= 2)
        out.note = "PC1 " + percent(r.explained_variance_ratio[0]) + ", PC2 " +
                   percent(r.explained_variance_ratio[1]) + " of the variance";
    } else if (method == ProjectionMethod::Tsne) {
      pj::TsneOptions o;
      // Perplexity must stay under N − 1; ⌊3·perplexity⌋ + 1 neighbours must exist.
      const double most = std::max(1.0, double(data->n - 2) / 3.0);
      o.perplexity = std::min(double(perplexity), most);
      o.seed = uint64_t(seed);
      o.threads = threads;
      const pj::TsneResult r = pj::tsne(x, o, progress);
      coords = r.coords;
      char s[96];
      std::snprintf(s, sizeof s, "perplexity %.4g, KL divergence %.3f", o.perplexity,
                    r.kl_divergence);
      out.note = s;
    } else {
      pj::UmapOptions o;
      o.n_neighbors = std::clamp(n_neighbors, 2, int(std::max<int64_t>(2, data->n - 1)));
      o.seed = uint64_t(seed);
      o.threads = threads;
      const pj::UmapResult r = pj::umap(x, o, progress);
      coords = r.coords;
      out.note = "n_neighbors " + std::to_string(o.n_neighbors) + ", seed " + std::to_string(seed);
    }
    out.xy.assign(coords.begin(), coords.end());
  } catch (const pj::ProjectionCancelled&) {
    return;
  } catch (const std::exception& e) {
    out.error = std::string(projection_method_name(method)) + ": " + e.what();
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!ctx.cancelled()) ctx.post(std::move(out));
}

}  // namespace

const char* projection_method_name(ProjectionMethod m) {
  return m == ProjectionMethod::Pca ? "PCA" : m == ProjectionMethod::Tsne ? "t-SNE" : "UMAP";
}

void run_projector_requests(ProjectorState& p, LoadWorker& loader, ComputeWorker& compute) {
  if (p.load_wanted) {
    p.load_wanted = false;
    p.loading = true;
    p.error.clear();
    const uint64_t request = ++p.load_request;
    compute.submit(
        "projector: reading embeddings",
        [dir = p.dir, request](JobContext& ctx) {
          ProjectorLoaded out;
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
  if (p.project_wanted && !p.loading) {
    p.project_wanted = false;
    if (p.data) {
      p.computing = true;
      p.error.clear();
      const uint64_t request = ++p.project_request;
      compute.submit(std::string("projector: ") + projection_method_name(p.method),
                     [data = p.data, method = p.method, perplexity = p.perplexity,
                      nn = p.n_neighbors, seed = p.seed, request](JobContext& ctx) {
                       run_projection(ctx, data, method, perplexity, nn, seed, request);
                     });
    }
  }
  if (p.thumb_wanted >= 0) {
    const int i = p.thumb_wanted;
    p.thumb_wanted = -1;
    if (p.data && i < p.data->n && !p.thumbs.count(i) && !p.thumb_errors.count(i)) {
      bool pending = false;
      for (const auto& [job, point] : p.thumb_jobs) pending = pending || point == i;
      if (!pending)
        p.thumb_jobs[loader.submit(JobKind::Image,
                                   resolve_image(*p.data, p.data->rows[size_t(i)].image))] = i;
    }
  }
}

bool projector_has_requests(const ProjectorState& p) {
  return p.load_wanted || (p.project_wanted && p.data) || p.thumb_wanted >= 0;
}

void cancel_projector(ProjectorState& p) {
  p.loading = p.computing = false;
  p.project_wanted = false;
}

void apply_result(ProjectorState& p, StatusBarState& status, const ProjectorLoaded& r) {
  if (r.request != p.load_request) return;  // a newer folder was asked for
  p.loading = false;
  if (!r.data) {
    p.error = r.error;
    status.notice = "projector: " + r.error;
    status.notice_is_error = true;
    return;
  }
  p.data = r.data;
  p.xy.clear();
  p.note.clear();
  p.thumbs.clear();
  p.thumb_jobs.clear();
  p.thumb_errors.clear();
  p.hovered = p.script_hover = p.clicked = -1;
  p.opened_path.clear();
  p.zoom = 1.0f;
  p.pan_x = p.pan_y = 0.0f;
  clear_selection(p);
  p.project_wanted = true;  // show something at once: the method picked (PCA by default)
  status.notice = "projector: " + std::to_string(r.data->n) + " embeddings of " +
                  std::to_string(r.data->dims) + " dimensions from " + r.data->dir;
  status.notice_is_error = false;
}

void apply_result(ProjectorState& p, StatusBarState& status, const ProjectorProjected& r) {
  if (r.request != p.project_request) return;
  p.computing = false;
  if (!r.error.empty()) {
    p.error = r.error;
    status.notice = "projector: " + r.error;
    status.notice_is_error = true;
    return;
  }
  if (!p.data || r.xy.size() != size_t(p.data->n) * 2) return;
  p.xy = r.xy;
  p.shown = r.method;
  p.note = r.note;
  p.seconds = r.seconds;
  p.zoom = 1.0f;
  p.pan_x = p.pan_y = 0.0f;
  clear_selection(p);  // its box was in the old coordinates
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

void select_box(ProjectorState& p, float x0, float y0, float x1, float y1) {
  p.has_selection = true;
  p.sel_x0 = std::min(x0, x1);
  p.sel_x1 = std::max(x0, x1);
  p.sel_y0 = std::min(y0, y1);
  p.sel_y1 = std::max(y0, y1);
  p.selected.clear();
  for (size_t i = 0; i * 2 + 1 < p.xy.size(); ++i) {
    const float x = p.xy[2 * i], y = p.xy[2 * i + 1];
    if (x >= p.sel_x0 && x <= p.sel_x1 && y >= p.sel_y0 && y <= p.sel_y1)
      p.selected.push_back(int(i));
  }
}

void clear_selection(ProjectorState& p) {
  p.has_selection = false;
  p.selected.clear();
}

std::string point_image_file(const ProjectorState& p, int i, std::string* error) {
  if (!p.data || i < 0 || i >= p.data->n) {
    *error = "no point " + std::to_string(i);
    return "";
  }
  const EmbedFolder& d = *p.data;
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

nlohmann::json projector_info(const ProjectorState& p, const Workspace& ws, const ViewState& view) {
  nlohmann::json j;
  j["dir"] = p.dir;
  j["loading"] = p.loading;
  j["computing"] = p.computing;
  j["error"] = p.error;
  j["points"] = p.data ? p.data->n : 0;
  j["dims"] = p.data ? p.data->dims : 0;
  j["projected"] = !p.xy.empty();
  j["method"] = p.xy.empty() ? "" : projection_method_name(p.shown);
  j["note"] = p.note;
  j["hovered"] = p.hovered;
  j["hovered_image"] = p.data && p.hovered >= 0 && p.hovered < p.data->n
                           ? p.data->rows[size_t(p.hovered)].image
                           : "";
  j["hovered_thumbnail"] = p.hovered >= 0 && p.thumbs.count(p.hovered) > 0;
  j["clicked"] = p.clicked;
  j["opened_path"] = p.opened_path;
  j["selected"] = p.selected.size();
  int judged = 0, correct = 0;
  if (p.data)
    for (const int i : p.selected) {
      const int c = p.data->rows[size_t(i)].correct;
      judged += c >= 0;
      correct += c == 1;
    }
  j["selected_judged"] = judged;
  j["selected_correct"] = correct;
  nlohmann::json images = nlohmann::json::array();
  for (const auto& im : ws.images) images.push_back(im.path);
  j["workspace_images"] = images;
  j["current_image"] = view.image >= 0 && view.image < int(ws.images.size())
                           ? ws.images[size_t(view.image)].path
                           : "";
  return j;
}

}  // namespace attnlab::gui
