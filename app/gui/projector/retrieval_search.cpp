// The worker side of patch retrieval; see retrieval_search.h.
#include "app/gui/projector/retrieval_search.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <thread>

#include "app/gui/jobs/loaded_model.h"
#include "app/session/edited_input.h"
#include "app/session/embedded_images.h"
#include "core/retrieval/top_k.h"
#include "models/embedding_run.h"

namespace attnlab::gui {
namespace {

std::string grid_text(int64_t h, int64_t w) {
  return std::to_string(h) + "x" + std::to_string(w);
}

// The query image's token vector of cell (patch_y, patch_x), computed by the workspace's
// model at the folder's block.
std::vector<float> computed_query(const RetrievalAsk& a, int64_t features) {
  LoadedModel& m = *a.model;
  at::NoGradGuard no_grad;
  const at::Tensor x = session::edited_input(io::load_rgb_image(a.image_file),
                                             m.choice.preprocessing, *m.ready.model, a.edits);
  const models::EmbeddingBatch e =
      models::embed_batch(*m.ready.model, x.to(m.device), a.layer, models::EmbeddingPool::tokens,
                          false, models::parse_embedding_features(a.features));
  if (!a.block.empty() && e.block != a.block)
    throw std::runtime_error("block " + std::to_string(a.layer) + " of the workspace's model is " +
                             e.block + ", the folder's is " + a.block + ": another model");
  if (e.layout.height != a.grid_h || e.layout.width != a.grid_w)
    throw std::runtime_error("the image's grid at " + e.block + " is " +
                             grid_text(e.layout.height, e.layout.width) + ", the folder's " +
                             grid_text(a.grid_h, a.grid_w) +
                             " (the model runs at another input size)");
  const at::Tensor f = e.features.to(at::kCPU, at::kFloat).contiguous();  // (1, H·W, F)
  if (f.dim() != 3 || f.size(2) != features)
    throw std::runtime_error("the model's token vectors have " +
                             std::to_string(f.dim() == 3 ? f.size(2) : 0) + " features, the " +
                             "folder's " + std::to_string(features));
  const float* v = f.data_ptr<float>() + (a.patch_y * a.grid_w + a.patch_x) * features;
  return std::vector<float>(v, v + features);
}

}  // namespace

io::RgbImage retrieval_row_picture(const EmbedFolder& d, int64_t row,
                                   const image::Preprocessing& pre, bool pre_known) {
  namespace fs = std::filesystem;
  if (!d.has_pixels.empty() && d.has_pixels[size_t(row)]) {  // a dataset's: as embed read it
    io::RgbImage im;
    im.width = d.thumb_w;
    im.height = d.thumb_h;
    const size_t size = size_t(d.thumb_w) * size_t(d.thumb_h);
    const uint8_t* g = d.pixels.data() + size_t(row) * size;
    im.rgb.resize(size * 3);
    for (size_t i = 0; i < size; ++i) im.rgb[3 * i] = im.rgb[3 * i + 1] = im.rgb[3 * i + 2] = g[i];
    return im;
  }
  const std::string& name = d.rows[size_t(row)].image;
  const std::string path = session::EmbeddedImagePaths(d.dir, d.meta).resolve(name);
  if (!fs::exists(path)) throw std::runtime_error("the image " + name + " is not here");
  const io::RgbImage im = io::load_rgb_image(path);
  return pre_known ? image::preprocess_picture(im, pre) : im;
}

io::RgbImage outlined_patch_crop(const io::RgbImage& pic, int64_t grid_h, int64_t grid_w,
                                 int64_t py, int64_t px) {
  if (pic.width <= 0 || pic.height <= 0 || grid_h <= 0 || grid_w <= 0)
    throw std::runtime_error("an empty picture");
  const double ch = double(pic.height) / double(grid_h), cw = double(pic.width) / double(grid_w);
  const auto edge = [](double v, int hi) { return std::clamp(int(std::lround(v)), 0, hi); };
  const int y0 = edge(double(py) * ch, pic.height - 1), x0 = edge(double(px) * cw, pic.width - 1);
  const int y1 = std::max(y0 + 1, edge(double(py + 1) * ch, pic.height));
  const int x1 = std::max(x0 + 1, edge(double(px + 1) * cw, pic.width));
  // Context: one cell on each side, more for cells of a few pixels (at least ~6 pixels).
  const int cells = std::max(1, int(std::ceil(6.0 / std::max(1.0, std::min(ch, cw)))));
  const int my = std::max(1, int(std::lround(ch * cells))),
            mx = std::max(1, int(std::lround(cw * cells)));
  const int cy0 = std::max(0, y0 - my), cy1 = std::min(pic.height, y1 + my);
  const int cx0 = std::max(0, x0 - mx), cx1 = std::min(pic.width, x1 + mx);
  const int w = cx1 - cx0, h = cy1 - cy0;
  const int s = std::clamp(int(std::ceil(96.0 / double(std::max(w, h)))), 1, 16);
  io::RgbImage out;
  out.width = w * s;
  out.height = h * s;
  out.rgb.resize(size_t(out.width) * size_t(out.height) * 3);
  for (int y = 0; y < out.height; ++y)
    for (int x = 0; x < out.width; ++x) {
      const int sy = cy0 + y / s, sx = cx0 + x / s;
      const bool inside = sy >= y0 && sy < y1 && sx >= x0 && sx < x1;
      const uint8_t* src = pic.rgb.data() + (size_t(sy) * size_t(pic.width) + size_t(sx)) * 3;
      uint8_t* dst = out.rgb.data() + (size_t(y) * size_t(out.width) + size_t(x)) * 3;
      for (int c = 0; c < 3; ++c) dst[c] = inside ? src[c] : uint8_t(src[c] * 0.6f);
    }
  // The cell's outline, inside its own pixels.
  const int t = std::clamp(out.width / 48, 1, 3);
  const int oy0 = (y0 - cy0) * s, oy1 = (y1 - cy0) * s, ox0 = (x0 - cx0) * s, ox1 = (x1 - cx0) * s;
  for (int y = oy0; y < oy1; ++y)
    for (int x = ox0; x < ox1; ++x) {
      if (y >= oy0 + t && y < oy1 - t && x >= ox0 + t && x < ox1 - t) continue;
      uint8_t* dst = out.rgb.data() + (size_t(y) * size_t(out.width) + size_t(x)) * 3;
      dst[0] = 255;
      dst[1] = 220;
      dst[2] = 0;
    }
  return out;
}

void run_patch_retrieval(JobContext& ctx, const RetrievalAsk& a) {
  namespace fs = std::filesystem;
  ProjectorRetrieved out;
  out.request = a.request;
  const EmbedFolder& d = *a.folder;
  try {
    const retrieval::TokenIndex index((fs::path(d.dir) / session::kEmbeddingsNpy).string());
    if (index.shape().size() != 3 || index.tokens() != a.grid_h * a.grid_w || index.images() != d.n)
      throw std::runtime_error(index.path() + ": its shape does not hold " + std::to_string(d.n) +
                               " images of the " + grid_text(a.grid_h, a.grid_w) +
                               " grid embed.json names");
    std::vector<float> query;
    if (a.row >= 0) {
      query = index.vector(a.row, a.patch_y * a.grid_w + a.patch_x);
      out.query_source = "stored";
    } else {
      query = computed_query(a, index.features());
      out.query_source = "computed";
    }
    if (ctx.cancelled()) return;
    retrieval::SearchOptions o;
    o.exclude_image = a.row >= 0 && a.exclude_self ? a.row : -1;
    // The cores but one (the interface keeps one); the scores and their order do not depend
    // on the thread count (core/retrieval/top_k.h).
    o.threads = std::max(1, int(std::thread::hardware_concurrency()) - 1);
    o.on_progress = [&ctx](int64_t done, int64_t total) { ctx.progress(done, total); };
    o.cancelled = [&ctx] { return ctx.cancelled(); };
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<retrieval::Match> best = retrieval::top_k_similar(index, query, a.k, o);
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out.candidates = (index.images() - (o.exclude_image >= 0 ? 1 : 0)) * index.tokens();
    for (const retrieval::Match& m : best)
      out.matches.push_back(
          RetrievalMatch{m.image, m.token / a.grid_w, m.token % a.grid_w, m.score});
  } catch (const retrieval::Cancelled&) {
    return;
  } catch (const std::exception& e) {
    if (ctx.cancelled()) return;
    out.error = std::string("patch retrieval: ") + e.what();
  }
  if (ctx.cancelled()) return;
  const std::vector<RetrievalMatch> matches = out.matches;
  ctx.post(std::move(out));

  // The crops, each as soon as it is cut (an image holding several matches read once).
  std::map<int64_t, io::RgbImage> pictures;
  for (size_t i = 0; i < matches.size(); ++i) {
    if (ctx.cancelled()) return;
    ctx.progress(int64_t(i), int64_t(matches.size()));
    const RetrievalMatch& m = matches[i];
    ProjectorCropCut crop;
    crop.request = a.request;
    crop.place = int(i);
    try {
      auto it = pictures.find(m.row);
      if (it == pictures.end())
        it = pictures
                 .emplace(m.row,
                          retrieval_row_picture(d, m.row, a.preprocessing, a.preprocessing_known))
                 .first;
      io::RgbImage c = outlined_patch_crop(it->second, a.grid_h, a.grid_w, m.patch_y, m.patch_x);
      crop.width = c.width;
      crop.height = c.height;
      crop.rgb = std::move(c.rgb);
    } catch (const std::exception& e) {
      crop.error = e.what();
    }
    ctx.post(std::move(crop));
  }
}

}  // namespace attnlab::gui
