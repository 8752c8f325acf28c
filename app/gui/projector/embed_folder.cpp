// Reading an `attnlab embed` folder; see embed_folder.h.
#include "app/gui/projector/embed_folder.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "app/session/dataset_heads.h"
#include "app/session/embedding_figure.h"
#include "core/data/image_dataset.h"
#include "core/io/npy.h"
#include "core/retrieval/token_index.h"

namespace attnlab::gui {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

int64_t to_int(const std::string& s, int64_t fallback) {
  if (s.empty()) return fallback;
  try {
    size_t used = 0;
    const long long v = std::stoll(s, &used);
    return used == s.size() ? int64_t(v) : fallback;
  } catch (const std::exception&) {
    return fallback;
  }
}

std::vector<std::string> string_list(const nlohmann::json& j, const char* key) {
  std::vector<std::string> out;
  if (!j.contains(key) || !j[key].is_array()) return out;
  for (const auto& v : j[key]) out.push_back(v.is_string() ? v.get<std::string>() : v.dump());
  return out;
}

// "fashion-mnist:test#12" -> ("test", 12); false for anything else.
bool dataset_image(const std::string& image, std::string* split, int64_t* index) {
  const std::string prefix = "fashion-mnist:";
  const size_t hash = image.rfind('#');
  if (image.rfind(prefix, 0) != 0 || hash == std::string::npos) return false;
  *split = image.substr(prefix.size(), hash - prefix.size());
  *index = to_int(image.substr(hash + 1), -1);
  return *index >= 0 && (*split == "test" || *split == "train");
}

// The dataset's pixels for each row naming a Fashion-MNIST image (each split read once).
void decode_dataset_rows(EmbedFolder& f) {
  std::map<std::string, data::ImageDataset> splits;
  f.has_pixels.assign(size_t(f.n), 0);
  for (int64_t i = 0; i < f.n; ++i) {
    std::string split;
    int64_t index = 0;
    if (!dataset_image(f.rows[size_t(i)].image, &split, &index)) continue;
    auto it = splits.find(split);
    if (it == splits.end()) {
      const std::string dir = data::fashion_mnist_dir();
      if (dir.empty()) return;  // not installed here: labels only
      it = splits.emplace(split, data::load_fashion_mnist(dir, split)).first;
    }
    const at::Tensor& images = it->second.images;  // (N, 1, 28, 28) uint8
    if (index >= images.size(0)) continue;
    const int h = int(images.size(2)), w = int(images.size(3));
    if (f.pixels.empty()) {
      f.thumb_w = w;
      f.thumb_h = h;
      f.pixels.assign(size_t(f.n) * size_t(w * h), 0);
    }
    if (w != f.thumb_w || h != f.thumb_h) continue;
    const at::Tensor one = images[index][0].contiguous();
    std::memcpy(f.pixels.data() + size_t(i) * size_t(w * h), one.data_ptr<uint8_t>(),
                size_t(w * h));
    f.has_pixels[size_t(i)] = 1;
  }
}

// DIR/heads.json, head_entropy.npy and the extremes drawn from them (session/dataset_heads.h),
// when the folder has them; a problem is kept in heads_error.
void read_head_stats(EmbedFolder& f) {
  namespace fs = std::filesystem;
  const std::string json = (fs::path(f.dir) / session::kHeadsJson).string();
  if (!fs::exists(json)) return;
  try {
    const nlohmann::json j = nlohmann::json::parse(read_text(json));
    std::vector<EmbedHeadLayer> layers;
    for (const auto& l : j.at("layers"))
      layers.push_back(EmbedHeadLayer{l.value("path", ""), l.value("mechanism", ""),
                                      l.value("head_count", int64_t(0))});
    const std::string npy = (fs::path(f.dir) / session::kHeadEntropyNpy).string();
    const io::RawTensor t = io::read_npy(npy);
    if (t.dtype != io::DType::F32 || t.shape.size() != 3 || t.shape[0] != f.n ||
        t.shape[1] != int64_t(layers.size()))
      throw std::runtime_error(npy + ": expected (" + std::to_string(f.n) + ", " +
                               std::to_string(layers.size()) + ", H) float32, got " + t.describe());
    f.head_entropy.resize(size_t(t.numel()));
    std::memcpy(f.head_entropy.data(), t.bytes.data(), f.head_entropy.size() * sizeof(float));
    // The effective output ranks beside them (a folder from before they were written has none).
    const std::string rank_npy = (fs::path(f.dir) / session::kHeadRankNpy).string();
    if (fs::exists(rank_npy)) {
      const io::RawTensor r = io::read_npy(rank_npy);
      if (r.dtype != io::DType::F32 || r.shape != t.shape)
        throw std::runtime_error(rank_npy + ": expected " + t.describe() + " like " + npy +
                                 ", got " + r.describe());
      f.head_rank.resize(size_t(r.numel()));
      std::memcpy(f.head_rank.data(), r.bytes.data(), f.head_rank.size() * sizeof(float));
    }
    for (const session::HeadExtreme& e : session::head_extremes(f.dir, kEmbedHeadExtremes))
      f.head_extremes.push_back(
          EmbedHeadExtreme{e.layer, e.head, e.rank, e.row, e.kind == "sharpest", e.entropy});
    f.head_info = std::move(layers);
    f.max_heads = t.shape[2];
    f.head_layers = t.shape[1];
  } catch (const std::exception& e) {
    f.head_info.clear();
    f.head_entropy.clear();
    f.head_rank.clear();
    f.head_extremes.clear();
    f.head_layers = f.max_heads = 0;
    f.heads_error = std::string("head statistics: ") + e.what();
  }
}

// An (N, F) file (or any rank ≥ 2, flattened per row), float32 or float64, read whole.
void read_embedding_rows_npy(EmbedFolder& f, const std::string& npy) {
  const io::RawTensor t = io::read_npy(npy);
  if (t.shape.size() < 2)
    throw std::runtime_error(npy + ": expected (N, F) rows, got " + t.describe());
  f.n = t.shape[0];
  f.dims = f.n > 0 ? t.numel() / f.n : 0;
  f.x.resize(size_t(t.numel()));
  if (t.dtype == io::DType::F32) {
    std::memcpy(f.x.data(), t.bytes.data(), f.x.size() * sizeof(float));
  } else if (t.dtype == io::DType::F64) {
    for (size_t i = 0; i < f.x.size(); ++i) {
      double v = 0;
      std::memcpy(&v, t.bytes.data() + i * sizeof(double), sizeof(double));
      f.x[i] = float(v);
    }
  } else {
    throw std::runtime_error(npy + ": expected float32 rows, got " + t.describe());
  }
}

}  // namespace

EmbedFolder read_embed_folder(const std::string& dir) {
  namespace fs = std::filesystem;
  EmbedFolder f;
  f.dir = dir;
  const std::string npy = (fs::path(dir) / session::kEmbeddingsNpy).string();
  const std::string csv = (fs::path(dir) / session::kEmbeddingsCsv).string();
  if (!fs::is_directory(dir)) throw std::runtime_error(dir + " is not a folder");
  if (!fs::exists(npy))
    throw std::runtime_error(dir + " has no embeddings.npy (is it an `attnlab embed` folder?)");
  // A float32 (N, T, F) file maps as a TokenIndex; any other (float64 rows, rank 2) is read
  // whole below, and a damaged one throws there or here, naming the file.
  std::unique_ptr<retrieval::TokenIndex> mapped;
  try {
    mapped = std::make_unique<retrieval::TokenIndex>(npy);
  } catch (const std::invalid_argument&) {
  }
  if (mapped && mapped->shape().size() == 3) {
    // Tokens: each image's mean token, accumulated in double (T ≤ a few thousand terms).
    const retrieval::TokenIndex& index = *mapped;
    f.n = index.images();
    f.tokens = index.tokens();
    f.dims = index.features();
    f.x.assign(size_t(f.n * f.dims), 0.0f);
    std::vector<float> scratch(size_t(f.dims));
    std::vector<double> sum(size_t(f.dims));
    for (int64_t i = 0; i < f.n; ++i) {
      std::fill(sum.begin(), sum.end(), 0.0);
      for (int64_t t = 0; t < f.tokens; ++t) {
        const float* row = index.row_floats(i * f.tokens + t, scratch.data());
        for (int64_t c = 0; c < f.dims; ++c) sum[size_t(c)] += row[c];
      }
      for (int64_t c = 0; c < f.dims; ++c)
        f.x[size_t(i * f.dims + c)] = float(sum[size_t(c)] / double(f.tokens));
    }
  } else {
    read_embedding_rows_npy(f, npy);
  }

  f.rows = session::read_embedding_rows(dir);  // names the file and line of a bad row
  if (int64_t(f.rows.size()) != f.n)
    throw std::runtime_error(csv + " has " + std::to_string(f.rows.size()) + " rows, " + npy + " " +
                             std::to_string(f.n));

  const std::string meta = (fs::path(dir) / "embed.json").string();
  if (fs::exists(meta)) {
    const nlohmann::json j = nlohmann::json::parse(read_text(meta), nullptr, false);
    if (j.is_object()) {
      f.meta = j;
      f.label_names = string_list(j, "label_names");
      f.class_names = string_list(j, "class_names");
      std::string d;
      // The model: a name, or the CLI's record (the session's one reading of it).
      if (j.contains("model") && j["model"].is_string()) d += j["model"].get<std::string>();
      if (j.contains("model") && j["model"].is_object()) d += session::embed_model_name(j);
      if (j.contains("block"))
        d += (d.empty() ? "" : ", ") + std::string("block ") +
             (j["block"].is_string() ? j["block"].get<std::string>() : j["block"].dump());
      if (j.contains("pool") && j["pool"].is_string())
        d += ", pool " + j["pool"].get<std::string>();
      f.description = d;
    }
  }
  // Names the CSV gives that embed.json did not (an older folder, or none at all).
  const auto fill = [](std::vector<std::string>& names, int64_t i, const std::string& name) {
    if (i < 0 || i > 100000 || name.empty()) return;
    if (int64_t(names.size()) <= i) names.resize(size_t(i) + 1);
    if (names[size_t(i)].empty()) names[size_t(i)] = name;
  };
  for (const EmbedRow& row : f.rows) {
    fill(f.label_names, row.label, row.label_name);
    fill(f.class_names, row.prediction, row.prediction_name);
  }
  decode_dataset_rows(f);
  read_head_stats(f);
  return f;
}

}  // namespace attnlab::gui
