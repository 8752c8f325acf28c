// head_extremes_figures: the extremes table's rows with their pictures. Each picture is read
// once however many heads show it.
#include "app/session/dataset_heads_figure.h"

#include <ATen/ATen.h>

#include <map>
#include <stdexcept>

#include "app/session/dataset_heads.h"
#include "app/session/embedded_images.h"
#include "app/session/input_picture.h"
#include "core/data/batches.h"
#include "core/io/file_bytes.h"
#include "core/io/image_io.h"
#include "viz/figures/head_extremes.h"

namespace attnlab::session {
namespace {

viz::RgbaImage extremes_picture(const EmbeddingRow& row, const image::Preprocessing& p,
                                const data::ImageDataset* set, const EmbeddedImagePaths& paths) {
  const size_t hash = row.image.rfind('#');
  if (set && hash != std::string::npos && row.image.compare(0, hash, set->name) == 0) {
    const int64_t i = std::stoll(row.image.substr(hash + 1));
    return input_picture(data::make_batch(*set, {i}, data::normalisation_of(p), nullptr, 0), p);
  }
  return input_picture(image::preprocess(io::load_rgb_image(paths.resolve(row.image)), p), p);
}

}  // namespace

std::vector<viz::CaptionedFigure> head_extremes_figures(const std::string& dir, int64_t k,
                                                        const image::Preprocessing& preprocessing,
                                                        const data::ImageDataset* set,
                                                        const std::string& model) {
  const std::vector<HeadExtreme> extremes = head_extremes(dir, k);
  const std::vector<EmbeddingRow> rows = read_embedding_rows(dir);
  const EmbeddedImagePaths paths = EmbeddedImagePaths::of_folder(dir);
  std::map<int64_t, viz::RgbaImage> pictures;
  for (const HeadExtreme& x : extremes)
    if (!pictures.count(x.row)) {
      try {
        pictures[x.row] = extremes_picture(rows.at(size_t(x.row)), preprocessing, set, paths);
      } catch (const std::exception& e) {
        throw std::runtime_error("head extremes: " + rows.at(size_t(x.row)).image +
                                 " cannot be read again: " + e.what());
      }
    }
  std::vector<viz::HeadExtremes> heads;
  const nlohmann::json layers = [&] {
    const std::vector<uint8_t> bytes = io::read_file_bytes(dir + "/" + kHeadsJson);
    return nlohmann::json::parse(std::string(bytes.begin(), bytes.end())).at("layers");
  }();
  for (const HeadExtreme& x : extremes) {
    if (heads.empty() || heads.back().layer != x.layer || heads.back().head != x.head)
      heads.push_back({int(x.layer), int(x.head), {}, {}});
    const nlohmann::json& layer = layers.at(size_t(x.layer));
    viz::HeadExample e;
    e.picture = &pictures.at(x.row);
    e.name = "#" + std::to_string(rows.at(size_t(x.row)).index);
    e.value = x.entropy;
    e.patch_y = int(x.patch_y);
    e.patch_x = int(x.patch_x);
    e.grid_h = layer.at("grid_height").get<int>();
    e.grid_w = layer.at("grid_width").get<int>();
    (x.kind == "sharpest" ? heads.back().sharpest : heads.back().broadest).push_back(e);
  }
  // The figures keep their own copies of the pictures (shared among the heads showing one).
  return viz::head_extremes_figures(heads, model);
}

}  // namespace attnlab::session
