// The Projector's patch retrieval, main-thread side; see patch_retrieval.h.
#include "app/gui/projector/patch_retrieval.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "app/gui/projector/projector.h"
#include "app/gui/projector/retrieval_search.h"
#include "app/session/embedded_images.h"
#include "app/session/embedding_figure.h"

namespace attnlab::gui {
namespace {

namespace fs = std::filesystem;

// What patch retrieval reads of embed.json (app/session/dataset_embedding.cpp's record and
// the CLI's "model": session::ReadyModel::describe).
struct TokensFolderMeta {
  std::string error;  // why the folder cannot be searched by patch
  int64_t grid_h = 0, grid_w = 0, layer = -1;
  std::string block, features = "output";
  std::string checkpoint, preset;  // the model it was embedded with
  image::Preprocessing pre;
  bool pre_known = false;
};

std::string retrieval_grid_text(int64_t h, int64_t w) {
  return std::to_string(h) + "x" + std::to_string(w);
}

TokensFolderMeta read_tokens_meta(const EmbedFolder& d) {
  TokensFolderMeta f;
  const nlohmann::json& j = d.meta;
  if (!j.is_object()) {
    f.error = d.dir + " has no embed.json: patch retrieval needs its pool and grid";
    return f;
  }
  try {
    const std::string pool =
        j.contains("pool") && j["pool"].is_string() ? j["pool"].get<std::string>() : "";
    if (pool != "tokens") {
      f.error = d.dir + " holds embeddings pooled '" + pool +
                "' (one vector per image); patch retrieval needs every token: run `attnlab "
                "embed ... --pool tokens`";
      return f;
    }
    f.grid_h = j.at("grid").at("height").get<int64_t>();
    f.grid_w = j.at("grid").at("width").get<int64_t>();
    if (f.grid_h <= 0 || f.grid_w <= 0 || d.tokens != f.grid_h * f.grid_w) {
      f.error = d.dir + ": embeddings of " + std::to_string(d.tokens) + " tokens per image do " +
                "not hold embed.json's " + retrieval_grid_text(f.grid_h, f.grid_w) + " grid";
      return f;
    }
    if (j.contains("layer") && j["layer"].is_number_integer()) f.layer = j["layer"].get<int64_t>();
    if (j.contains("block") && j["block"].is_string()) f.block = j["block"].get<std::string>();
    if (j.contains("features") && j["features"].is_string())
      f.features = j["features"].get<std::string>();
    // The resize and crop embed read the image files with (the crops' geometry).
    if (const auto pre = session::embedded_image_preprocessing(j)) {
      f.pre = *pre;
      f.pre_known = true;
    }
    if (j.contains("model") && j["model"].is_object()) {
      const nlohmann::json& m = j["model"];
      if (m.contains("checkpoint") && m["checkpoint"].is_object() &&
          m["checkpoint"].contains("path") && m["checkpoint"]["path"].is_string())
        f.checkpoint = m["checkpoint"]["path"].get<std::string>();
      if (m.contains("preset") && m["preset"].is_string())
        f.preset = m["preset"].get<std::string>();
    }
  } catch (const std::exception& e) {
    f.error = d.dir + "/embed.json: " + e.what();
  }
  return f;
}

// The row of the main folder that `path` is: the point last opened from the plot, else a
// row naming the same file.
int64_t retrieval_row_of(const ProjectorState& p, const std::string& path) {
  const EmbedFolder& d = *p.main.data;
  if (p.clicked >= 0 && p.clicked < d.n && !p.opened_path.empty() && path == p.opened_path)
    return p.clicked;
  for (size_t i = 0; i < d.rows.size(); ++i)
    if (d.rows[i].image == path) return int64_t(i);
  std::error_code ec;
  const fs::path want = fs::weakly_canonical(path, ec);
  if (ec) return -1;
  const session::EmbeddedImagePaths paths(d.dir, d.meta);
  for (size_t i = 0; i < d.rows.size(); ++i) {
    if (!d.has_pixels.empty() && d.has_pixels[i]) continue;
    if (fs::weakly_canonical(paths.resolve(d.rows[i].image), ec) == want && !ec) return int64_t(i);
  }
  return -1;
}

// Whether the workspace's model `arg` (a checkpoint path or a preset, as opened) is the one
// the folder was embedded with.
bool same_embedding_model(const std::string& arg, const TokensFolderMeta& f) {
  std::error_code ec;
  if (!f.checkpoint.empty()) {
    const fs::path a = fs::weakly_canonical(arg, ec);
    if (ec) return false;
    return a == fs::weakly_canonical(f.checkpoint, ec) && !ec;
  }
  return !f.preset.empty() && arg == f.preset;
}

}  // namespace

std::string retrieval_folder_error(const ProjectorState& p) {
  if (!p.main.data) return "no folder is open";
  return read_tokens_meta(*p.main.data).error;
}

bool request_patch_retrieval(ProjectorState& p, const Workspace& ws, const ViewState& view,
                             std::string* error) {
  ProjectorRetrieval& r = p.retrieval;
  const auto refuse = [&](const std::string& why) {
    r.error = "patch retrieval: " + why;
    *error = r.error;
    return false;
  };
  const EmbedFolder* d = p.main.data.get();
  if (!d) return refuse("open an `attnlab embed --pool tokens` folder in the Projector first");
  const TokensFolderMeta f = read_tokens_meta(*d);
  if (!f.error.empty()) return refuse(f.error);
  if (view.image < 0 || view.image >= int(ws.images.size()))
    return refuse(
        "open an image in the workspace first (click a point of the plot), then a patch of it "
        "in the Maps tab");
  const ImageSlot& im = ws.images[size_t(view.image)];
  const MapQuery& q = view.query;
  if (!q.prefix.empty())
    return refuse("the query is the " + q.prefix +
                  " token: click a patch of the image in the Maps tab to search by it");
  int64_t y = f.grid_h / 2, x = f.grid_w / 2;  // no cell picked: the centre, as the maps
  if (q.row >= 0) {
    if (q.grid_rows > 0 && (q.grid_rows != f.grid_h || q.grid_cols != f.grid_w))
      return refuse("the query cell (" + std::to_string(q.row) + ", " + std::to_string(q.col) +
                    ") is on the " + retrieval_grid_text(q.grid_rows, q.grid_cols) +
                    " grid of the workspace's model, the folder's tokens are on a " +
                    retrieval_grid_text(f.grid_h, f.grid_w) + " grid (" + f.block +
                    "): not the same patches");
    y = q.row;
    x = q.col;
    if (y >= f.grid_h || x >= f.grid_w)
      return refuse("the query cell (" + std::to_string(y) + ", " + std::to_string(x) +
                    ") is outside the folder's " + retrieval_grid_text(f.grid_h, f.grid_w) +
                    " grid");
  }
  auto ask = std::make_shared<RetrievalAsk>();
  ask->folder = p.main.data;
  ask->grid_h = f.grid_h;
  ask->grid_w = f.grid_w;
  ask->patch_y = y;
  ask->patch_x = x;
  ask->k = std::max(1, r.k);
  ask->exclude_self = r.exclude_self;
  ask->preprocessing = f.pre;
  ask->preprocessing_known = f.pre_known;
  ask->row = retrieval_row_of(p, im.path);
  const std::string name = fs::path(im.path).filename().string();
  if (ask->row < 0) {  // not a row: its vector from the workspace's model, if it is the folder's
    const bool ready = view.model >= 0 && view.model < int(ws.models.size()) &&
                       ws.models[size_t(view.model)].status == LoadStatus::Ready &&
                       ws.models[size_t(view.model)].model;
    if (!ready)
      return refuse(name + " is not an image of the folder, and no model is open to compute its " +
                    "patch's vector: open " + session::embed_model_name(d->meta) +
                    " in the workspace, or click a point of the plot");
    const ModelSlot& m = ws.models[size_t(view.model)];
    if (!same_embedding_model(m.arg, f))
      return refuse(name + " is not an image of the folder, and the workspace's model " +
                    m.info.name + " is not the one the folder was embedded with (" +
                    session::embed_model_name(d->meta) + "): its vectors are not comparable");
    ask->model = m.model;
    ask->image_file = im.path;
    ask->edits = im.edits;
    ask->layer = f.layer;
    ask->block = f.block;
    ask->features = f.features;
  }
  ask->request = ++r.request;
  r.ask = ask;
  r.wanted = true;
  r.computing = false;
  r.error.clear();
  r.query_image = im.path;
  r.query_row = ask->row;
  r.patch_y = y;
  r.patch_x = x;
  r.grid_h = f.grid_h;
  r.grid_w = f.grid_w;
  r.asked_k = ask->k;
  r.asked_exclude = ask->exclude_self && ask->row >= 0;
  r.query_source.clear();
  r.candidates = 0;
  r.seconds = 0;
  r.matches.clear();
  r.crops.clear();
  r.crop_errors.clear();
  r.crops_pending = 0;
  return true;
}

void run_retrieval_request(ProjectorRetrieval& r, ComputeWorker& compute) {
  if (!r.wanted) return;
  r.wanted = false;
  if (!r.ask) return;
  r.computing = true;
  compute.submit("projector: similar patches",
                 [ask = r.ask](JobContext& ctx) { run_patch_retrieval(ctx, *ask); });
  r.ask.reset();
}

void cancel_retrieval(ProjectorRetrieval& r) {
  r.wanted = false;
  r.ask.reset();
  r.computing = false;
  r.crops_pending = 0;
}

void clear_retrieval(ProjectorRetrieval& r) {
  ProjectorRetrieval fresh;
  fresh.k = r.k;
  fresh.exclude_self = r.exclude_self;
  fresh.request = r.request + 1;  // an answer still coming is for the folder closed
  r = std::move(fresh);
}

void apply_result(ProjectorState& p, StatusBarState& status, const ProjectorRetrieved& a) {
  ProjectorRetrieval& r = p.retrieval;
  if (a.request != r.request) return;  // a newer query was asked for
  r.computing = false;
  if (!a.error.empty()) {
    r.error = a.error;
    status.notice = "projector: " + a.error;
    status.notice_is_error = true;
    return;
  }
  r.matches = a.matches;
  r.query_source = a.query_source;
  r.candidates = a.candidates;
  r.seconds = a.seconds;
  r.crops_pending = int(a.matches.size());
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.1f ms", 1000.0 * a.seconds);
  status.notice = "projector: the " + std::to_string(a.matches.size()) +
                  " patches most similar to (" + std::to_string(r.patch_y) + ", " +
                  std::to_string(r.patch_x) + ") of " +
                  fs::path(r.query_image).filename().string() + " among " +
                  std::to_string(a.candidates) + ", " + ms;
  status.notice_is_error = false;
}

void apply_result(ProjectorState& p, StatusBarState&, const ProjectorCropCut& c) {
  ProjectorRetrieval& r = p.retrieval;
  if (c.request != r.request) return;
  r.crops_pending = std::max(0, r.crops_pending - 1);
  std::string error = c.error;
  GlTexture t;
  if (error.empty() && t.upload_rgb(c.rgb.data(), c.width, c.height, &error))
    r.crops[c.place] = std::move(t);
  else
    r.crop_errors[c.place] = error;
}

bool open_retrieval_match(ProjectorState& p, int place, ViewState& view, FrameRequests& requests,
                          StatusBarState& status) {
  const ProjectorRetrieval& r = p.retrieval;
  if (place < 0 || place >= int(r.matches.size())) return false;
  const RetrievalMatch m = r.matches[size_t(place)];
  if (!open_point(p, int(m.row), requests, status)) return false;
  // The cell on the folder's grid: every view maps it to its model's grid (wanted_query).
  MapQuery q;
  q.row = int(m.patch_y);
  q.col = int(m.patch_x);
  q.grid_rows = int(r.grid_h);
  q.grid_cols = int(r.grid_w);
  view.query = q;
  if (view.kind == MapKind::Cls) view.kind = MapKind::Query;
  return true;
}

nlohmann::json retrieval_info(const ProjectorState& p) {
  const ProjectorRetrieval& r = p.retrieval;
  const EmbedFolder* d = p.main.data.get();
  const std::string folder_error = retrieval_folder_error(p);
  nlohmann::json j;
  j["available"] = folder_error.empty();
  j["folder_error"] = folder_error;
  j["query_image"] = r.query_image;
  j["query_row"] = r.query_row;
  j["patch"] = nlohmann::json::array({r.patch_y, r.patch_x});
  j["grid"] = nlohmann::json::array({r.grid_h, r.grid_w});
  j["k"] = r.asked_k;
  j["exclude_self"] = r.asked_exclude;
  j["state"] = r.wanted || r.computing ? "searching"
               : r.crops_pending > 0   ? "cropping"
               : !r.error.empty()      ? "error"
               : r.matches.empty()     ? "idle"
                                       : "done";
  j["error"] = r.error;
  j["query_source"] = r.query_source;
  j["candidates"] = r.candidates;
  nlohmann::json matches = nlohmann::json::array();
  for (size_t i = 0; i < r.matches.size(); ++i) {
    const RetrievalMatch& m = r.matches[i];
    const bool row_ok = d && m.row >= 0 && m.row < d->n;
    matches.push_back({{"place", i + 1},
                       {"image_row", m.row},
                       {"image", row_ok ? d->rows[size_t(m.row)].image : ""},
                       {"label", row_ok ? d->rows[size_t(m.row)].label_name : ""},
                       {"patch_y", m.patch_y},
                       {"patch_x", m.patch_x},
                       {"score", m.score}});
  }
  j["matches"] = matches;
  j["crops_ready"] = r.crops.size();
  j["crop_errors"] = r.crop_errors.size();
  j["crop_error"] = r.crop_errors.empty() ? "" : r.crop_errors.begin()->second;
  return j;
}

}  // namespace attnlab::gui
