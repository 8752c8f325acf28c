// HeadStatsCollector and the extremes table (dataset_heads.h). The arrays are small
// (N·L·H values: 10 000 images of 12 layers × 6 heads are 2.9 MB each) and kept in memory.
#include "app/session/dataset_heads.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "app/session/dataset_embedding.h"
#include "app/session/npy_rows.h"
#include "core/analysis/export.h"
#include "core/analysis/head_sharpness.h"
#include "core/analysis/rank.h"
#include "core/io/file_bytes.h"
#include "core/io/npy.h"
#include "core/io/text.h"

namespace attnlab::session {
namespace {

template <typename T>
io::RawTensor heads_array(const std::vector<T>& values, io::DType dtype, int64_t n, int64_t l,
                          int64_t h) {
  io::RawTensor t;
  t.dtype = dtype;
  t.shape = {n, l, h};
  t.bytes.resize(values.size() * sizeof(T));
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

nlohmann::json read_heads_json(const std::string& dir) {
  const std::vector<uint8_t> bytes = io::read_file_bytes(dir + "/" + kHeadsJson);
  try {
    return nlohmann::json::parse(std::string(bytes.begin(), bytes.end()));
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(dir + "/" + kHeadsJson + ": not JSON (" + e.what() + ")");
  }
}

io::RawTensor read_heads_array(const std::string& dir, const char* file, io::DType dtype,
                               const std::vector<int64_t>& shape) {
  io::RawTensor t = io::read_npy(dir + "/" + file);
  if (t.dtype != dtype || t.shape != shape)
    throw std::runtime_error(dir + "/" + file + " is " + t.describe() + ", not the " +
                             std::to_string(shape[0]) + " images × layers × heads of " +
                             kHeadsJson);
  return t;
}

}  // namespace

void HeadStatsCollector::add(const std::vector<models::LayerTrace>& traces, int64_t b) {
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& t : traces)
    layers.push_back({{"path", t.path},
                      {"mechanism", t.trace->mechanism},
                      {"head_count", t.trace->heads},
                      {"grid_height", t.trace->layout.height},
                      {"grid_width", t.trace->layout.width}});
  if (images_ == 0) {
    if (traces.empty())
      throw std::runtime_error("--heads: the model's forward traced no attention layer");
    layers_ = layers;
    for (const auto& t : traces) max_heads_ = std::max(max_heads_, t.trace->heads);
  } else if (layers != layers_) {
    throw std::runtime_error("--heads: an image ran other attention layers than the first");
  }
  const size_t at = mean_.size();
  const size_t cells = traces.size() * size_t(max_heads_);
  mean_.resize(at + cells, std::numeric_limits<float>::quiet_NaN());
  patch_value_.resize(at + cells, std::numeric_limits<float>::quiet_NaN());
  patch_.resize(at + cells, -1);
  rank_.resize(at + cells, std::numeric_limits<float>::quiet_NaN());
  for (size_t l = 0; l < traces.size(); ++l) {
    const attention::AttentionTrace& trace = *traces[l].trace;
    const analysis::HeadSharpness s = analysis::head_sharpness(trace, b);
    // Every head's output (tokens × head dim), the matrix the rank analysis reads for every
    // mechanism; its effective rank needs only the float64 singular values.
    std::vector<analysis::RankStats> ranks;
    for (auto& subject : analysis::rank_subjects(trace, b))
      if (subject.name == "output") ranks = analysis::rank_statistics(subject.matrices);
    for (int64_t h = 0; h < trace.heads; ++h) {
      const size_t i = at + l * size_t(max_heads_) + size_t(h);
      mean_[i] = float(s.mean[h].item<double>());
      patch_value_[i] = float(s.sharpest_value[h].item<double>());
      patch_[i] = s.sharpest_query[h].item<int64_t>();
      if (size_t(h) < ranks.size()) rank_[i] = float(ranks[size_t(h)].effective_rank);
    }
  }
  ++images_;
}

void HeadStatsCollector::write(const std::string& dir) const {
  const auto l = int64_t(layers_.size());
  io::write_npy(dir + "/" + kHeadEntropyNpy,
                heads_array(mean_, io::DType::F32, images_, l, max_heads_));
  io::write_npy(dir + "/" + kHeadPatchNpy,
                heads_array(patch_, io::DType::I64, images_, l, max_heads_));
  io::write_npy(dir + "/" + kHeadPatchEntropyNpy,
                heads_array(patch_value_, io::DType::F32, images_, l, max_heads_));
  io::write_npy(dir + "/" + kHeadRankNpy,
                heads_array(rank_, io::DType::F32, images_, l, max_heads_));
  io::write_file_atomic(dir + "/" + kHeadsJson,
                        nlohmann::json{{"layers", layers_}, {"max_heads", max_heads_}}.dump(2));
}

std::vector<HeadExtreme> head_extremes(const std::string& dir, int64_t k) {
  if (k < 1) throw std::invalid_argument("head extremes: k must be >= 1");
  const nlohmann::json heads = read_heads_json(dir);
  const nlohmann::json& layers = heads.at("layers");
  const auto l = int64_t(layers.size());
  const int64_t hmax = heads.at("max_heads").get<int64_t>();
  const io::RawTensor e = io::read_npy(dir + "/" + kHeadEntropyNpy);
  if (e.shape.size() != 3 || e.shape[1] != l || e.shape[2] != hmax)
    throw std::runtime_error(dir + "/" + kHeadEntropyNpy + " is " + e.describe() +
                             ", not images × " + std::to_string(l) + " layers × " +
                             std::to_string(hmax) + " heads");
  const int64_t n = e.shape[0];
  read_heads_array(dir, kHeadEntropyNpy, io::DType::F32, {n, l, hmax});
  const io::RawTensor p = read_heads_array(dir, kHeadPatchNpy, io::DType::I64, {n, l, hmax});
  const auto* mean = reinterpret_cast<const float*>(e.bytes.data());
  const auto* patch = reinterpret_cast<const int64_t*>(p.bytes.data());
  std::vector<HeadExtreme> out;
  for (int64_t li = 0; li < l; ++li) {
    const nlohmann::json& layer = layers[size_t(li)];
    const int64_t width = layer.at("grid_width").get<int64_t>();
    for (int64_t h = 0; h < layer.at("head_count").get<int64_t>(); ++h) {
      const auto at = [&](int64_t row) { return size_t((row * l + li) * hmax + h); };
      std::vector<int64_t> rows(static_cast<size_t>(n));
      std::iota(rows.begin(), rows.end(), 0);
      // Stable: among equal entropies the earlier row comes first, in both orders.
      std::stable_sort(rows.begin(), rows.end(),
                       [&](int64_t a, int64_t b) { return mean[at(a)] < mean[at(b)]; });
      std::vector<int64_t> broad(rows);
      std::stable_sort(broad.begin(), broad.end(),
                       [&](int64_t a, int64_t b) { return mean[at(a)] > mean[at(b)]; });
      for (const auto& [kind, order] : {std::make_pair("sharpest", &rows), {"broadest", &broad}})
        for (int64_t r = 0; r < std::min(k, n); ++r) {
          const int64_t row = (*order)[size_t(r)];
          const int64_t q = patch[at(row)];
          out.push_back({li, h, r + 1, row, layer.at("path").get<std::string>(), kind,
                         double(mean[at(row)]), q >= 0 && width > 0 ? q / width : -1,
                         q >= 0 && width > 0 ? q % width : -1});
        }
    }
  }
  return out;
}

int64_t write_head_extremes(const std::string& dir, int64_t k) {
  const std::vector<HeadExtreme> rows = head_extremes(dir, k);
  const std::vector<EmbeddingRow> images = read_embedding_rows(dir);
  std::string csv = "layer,path,head,kind,rank,row,image,entropy,patch_y,patch_x\n";
  for (const HeadExtreme& x : rows) {
    const std::string image =
        x.row < int64_t(images.size()) ? images[size_t(x.row)].image : std::string();
    csv += std::to_string(x.layer) + "," + x.path + "," + std::to_string(x.head) + "," + x.kind +
           "," + std::to_string(x.rank) + "," + std::to_string(x.row) + "," +
           analysis::csv_text(image) + "," + text::format_g(x.entropy, 6) + "," +
           std::to_string(x.patch_y) + "," + std::to_string(x.patch_x) + "\n";
  }
  io::write_file_atomic(dir + "/" + kHeadExtremesCsv, csv);
  return int64_t(rows.size());
}

void concatenate_head_stats(const std::vector<std::string>& dirs, const std::string& out_dir,
                            int64_t k) {
  if (dirs.empty() || !std::filesystem::exists(dirs.front() + "/" + kHeadsJson)) return;
  const nlohmann::json first = read_heads_json(dirs.front());
  for (const auto& d : dirs)
    if (read_heads_json(d) != first)
      throw std::runtime_error(d + "/" + kHeadsJson + " names other layers than " + dirs.front() +
                               "'s");
  concatenate_npy_rows(dirs, kHeadEntropyNpy, io::DType::F32, out_dir);
  concatenate_npy_rows(dirs, kHeadPatchNpy, io::DType::I64, out_dir);
  concatenate_npy_rows(dirs, kHeadPatchEntropyNpy, io::DType::F32, out_dir);
  concatenate_npy_rows(dirs, kHeadRankNpy, io::DType::F32, out_dir);
  io::write_file_atomic(out_dir + "/" + kHeadsJson, first.dump(2));
  write_head_extremes(out_dir, k);
}

}  // namespace attnlab::session
