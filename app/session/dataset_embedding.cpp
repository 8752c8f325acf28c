// write_embeddings: the batch loop of `attnlab embed` and attnlab.embed, and the merge of a
// sharded run's rows. The rows stream into "<out>/.embeddings.rows" through
// io::write_file_atomic (a temporary until the loop ends: Ctrl-C removes it), then the .npy
// is its header followed by those bytes, copied in chunks, so memory stays one batch
// whatever the dataset's size.
#include "app/session/dataset_embedding.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "app/session/analysis_session.h"
#include "app/session/dataset_heads.h"
#include "app/session/embedded_images.h"
#include "app/session/image_list.h"
#include "app/session/npy_rows.h"
#include "core/analysis/export.h"
#include "core/data/batches.h"
#include "core/io/file_bytes.h"
#include "core/io/npy.h"
#include "core/io/text.h"

namespace attnlab::session {
namespace {

constexpr const char* kRowsFile = ".embeddings.rows";

std::string name_of(const std::vector<std::string>& names, int64_t i) {
  return i >= 0 && i < int64_t(names.size()) ? names[size_t(i)] : "";
}

// Streams `rows_path` (raw float32 rows) after the .npy header for `shape` into `path`.
void write_npy_from_rows(const std::string& path, const std::string& rows_path,
                         const std::vector<int64_t>& shape) {
  const std::vector<uint8_t> header = io::npy_header(io::DType::F32, shape);
  io::write_file_atomic(path, [&](const io::ByteSink& sink) {
    sink(header.data(), header.size());
    std::ifstream in(rows_path, std::ios::binary);
    if (!in) throw std::runtime_error(rows_path + ": cannot be read back");
    std::vector<char> chunk(size_t(1) << 22);
    while (in) {
      in.read(chunk.data(), std::streamsize(chunk.size()));
      if (in.gcount() > 0) sink(chunk.data(), size_t(in.gcount()));
    }
  });
}

// One batch: its images (B, 3, H, W), its labels, and the names of its images.
struct SourceBatch {
  at::Tensor images, labels;
  std::vector<std::string> names;
  std::vector<int64_t> indices;  // the CSV's index of each
};

SourceBatch next_batch(const EmbeddingSource& source, const image::Preprocessing& pre,
                       int64_t start, int64_t count, std::array<int64_t, 2>& shape,
                       const EmbeddingCallbacks& cb) {
  SourceBatch b;
  if (source.set) {
    std::vector<int64_t> idx;
    for (int64_t i = start; i < start + count; ++i) {
      idx.push_back(source.begin + i);
      b.names.push_back(source.set->name + "#" + std::to_string(source.begin + i));
      b.indices.push_back(source.first_index + i);
    }
    b.images = data::make_batch(*source.set, idx, data::normalisation_of(pre), nullptr, 0);
    b.labels = data::batch_labels(*source.set, idx);
    return b;
  }
  const data::FileBatch f =
      data::load_file_batch(source.files, size_t(start), size_t(count), pre, shape);
  std::vector<std::string> failed;
  for (const auto& e : f.failed) {
    failed.push_back(e.path);
    if (cb.on_error) cb.on_error(e.path, e.error);
  }
  for (int64_t i = start; i < start + count; ++i) {
    const std::string& path = source.files[size_t(i)].path;
    if (std::find(failed.begin(), failed.end(), path) != failed.end()) continue;
    b.names.push_back(path);
    b.indices.push_back(source.first_index + i);
  }
  b.images = f.images;
  b.labels = f.labels;
  return b;
}

}  // namespace

EmbeddingSummary write_embeddings(models::Backbone& model,
                                  const image::Preprocessing& preprocessing,
                                  const std::vector<std::string>& class_names,
                                  const EmbeddingSource& source, const EmbeddingOptions& options,
                                  const std::string& out_dir, const EmbeddingCallbacks& callbacks) {
  std::filesystem::create_directories(out_dir);
  model.eval();
  const auto device =
      model.parameters().empty() ? c10::Device(c10::kCPU) : model.parameters().front().device();
  const int64_t n = source.size(), step = std::max<int64_t>(options.batch, 1);
  EmbeddingSummary s;
  std::vector<int64_t> row_shape;  // one image's features
  std::string csv = kEmbeddingsCsvHeader;
  std::array<int64_t, 2> shape{0, 0};
  const std::string rows_path = out_dir + "/" + kRowsFile;
  HeadStatsCollector heads;
  io::write_file_atomic(rows_path, [&](const io::ByteSink& sink) {
    for (int64_t start = 0; start < n; start += step) {
      if (callbacks.cancelled && callbacks.cancelled()) throw AnalysisCancelled();
      const int64_t count = std::min(step, n - start);
      const SourceBatch b = next_batch(source, preprocessing, start, count, shape, callbacks);
      s.skipped += count - int64_t(b.names.size());
      if (!b.names.empty()) {
        const models::EmbeddingBatch e =
            models::embed_batch(model, b.images.to(device), options.layer, options.pool,
                                options.heads, options.features);
        if (options.heads)
          for (int64_t i = 0; i < int64_t(b.names.size()); ++i) heads.add(e.traces, i);
        if (row_shape.empty()) {
          row_shape.assign(e.features.sizes().begin() + 1, e.features.sizes().end());
          s.block = e.block;
          s.layer = e.layer;
          s.blocks = e.blocks;
          s.layout = e.layout;
          s.attention = e.attention;
        }
        if (!at::isfinite(e.features).all().item<bool>())
          throw std::runtime_error("the features of " + e.block +
                                   " are not finite (NaN/Inf): check the weights");
        sink(e.features.data_ptr(), size_t(e.features.nbytes()));
        const bool classes = e.output_kind == models::OutputKind::classes;
        const at::Tensor probs = classes ? at::softmax(e.logits.to(at::kDouble), 1) : at::Tensor();
        for (size_t i = 0; i < b.names.size(); ++i) {
          const int64_t label = b.labels.defined() ? b.labels[int64_t(i)].item<int64_t>() : -1;
          int64_t pred = -1;
          double conf = 0;
          if (classes) {
            const at::Tensor row = probs[int64_t(i)];
            pred = row.argmax().item<int64_t>();
            conf = row[pred].item<double>();
          }
          const bool judged = classes && label >= 0 && source.labels_are_classes;
          s.labelled_predicted += judged;
          s.correct += judged && pred == label;
          csv += std::to_string(b.indices[i]) + "," + analysis::csv_text(b.names[i]) + "," +
                 std::to_string(label) + "," +
                 analysis::csv_text(name_of(source.label_names, label)) + "," +
                 std::to_string(pred) + "," + analysis::csv_text(name_of(class_names, pred)) + "," +
                 (classes ? text::format_g(conf, 6) : "") + "," +
                 (judged ? (pred == label ? "1" : "0") : "") + "\n";
        }
        s.embedded += int64_t(b.names.size());
      }
      if (callbacks.on_progress)
        callbacks.on_progress(start + count, n, b.names.empty() ? std::string() : b.names.back());
    }
  });
  if (s.embedded == 0) {
    std::filesystem::remove(rows_path);
    throw std::runtime_error("no image could be embedded (" + std::to_string(s.skipped) +
                             " unreadable)");
  }
  s.shape = {s.embedded};
  s.shape.insert(s.shape.end(), row_shape.begin(), row_shape.end());
  try {
    write_npy_from_rows(out_dir + "/" + kEmbeddingsNpy, rows_path, s.shape);
  } catch (...) {
    std::filesystem::remove(rows_path);
    throw;
  }
  std::filesystem::remove(rows_path);
  io::write_file_atomic(out_dir + "/" + kEmbeddingsCsv, csv);
  if (options.heads) {
    heads.write(out_dir);
    write_head_extremes(out_dir, options.head_examples);
  }
  return s;
}

nlohmann::json embedding_record(const EmbeddingSummary& s, const EmbeddingSource& source,
                                const EmbeddingOptions& options,
                                const std::vector<std::string>& class_names) {
  nlohmann::json j = {
      {"source", source.what},
      {"layer", s.layer},
      {"block", s.block},
      {"blocks", s.blocks},
      {"pool", models::embedding_pool_name(options.pool)},
      {"features", models::embedding_features_name(options.features)},
      {"grid",
       {{"height", s.layout.height}, {"width", s.layout.width}, {"prefix", s.layout.prefix}}},
      {"shape", s.shape},
      {"images", s.embedded},
      {"skipped", s.skipped},
      {"label_names", source.label_names},
      {"class_names", class_names},
      {"labels_are_classes", source.labels_are_classes},
      {"correct", s.correct},
      {"judged", s.labelled_predicted},
      {"batch", options.batch},
      {"head_stats", options.heads},
  };
  if (options.heads) j["head_examples"] = options.head_examples;
  if (!s.attention.empty()) j["attention"] = s.attention;
  // Where relative image paths are relative to (EmbeddedImagePaths finds them from elsewhere).
  const std::string cwd = embedding_working_directory();
  if (!cwd.empty()) j["working_directory"] = cwd;
  if (s.labelled_predicted > 0)
    j["accuracy_percent"] = 100.0 * double(s.correct) / double(s.labelled_predicted);
  return j;
}

std::string embedding_features_of(const nlohmann::json& record) {
  const auto it = record.find("features");
  return it != record.end() && it->is_string() ? it->get<std::string>() : "output";
}

namespace {

// A directory whose images sit in class sub-folders (and none at its top).
bool is_class_tree(const std::string& path) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(path)) return false;
  bool sub = false;
  for (const auto& e : fs::directory_iterator(path)) {
    if (e.is_regular_file()) return false;
    sub = sub || e.is_directory();
  }
  return sub;
}

}  // namespace

EmbeddingSource EmbeddingSource::part(int64_t from, int64_t to) const {
  EmbeddingSource p = *this;
  p.first_index = first_index + from;
  if (set) {
    p.begin = begin + from;
    p.end = begin + to;
  } else {
    p.files.assign(files.begin() + from, files.begin() + to);
  }
  return p;
}

EmbeddingSource embedding_source(const std::vector<std::string>& images, const std::string& dataset,
                                 int64_t img_size, int64_t model_classes) {
  if (dataset.empty() && images.empty())
    throw std::invalid_argument(
        "nothing to embed: images (files or folders) or a dataset (fashion-mnist:test, "
        "folder:DIR)");
  if (!dataset.empty() && !images.empty())
    throw std::invalid_argument("embed takes a dataset or images, not both");
  EmbeddingSource source;
  std::string folder = data::folder_of_spec(dataset);
  if (dataset.empty() && images.size() == 1 && is_class_tree(images[0])) folder = images[0];
  if (!folder.empty()) {
    const data::FolderListing listing = data::list_image_folder(folder);
    source.files = listing.files;
    source.label_names = listing.class_names;
    source.what = "folder:" + folder;
  } else if (dataset.empty()) {
    for (const auto& arg : images)
      for (const auto& path : image_files(arg)) source.files.push_back({path, -1});
    source.what = source.files.size() == 1 ? source.files.front().path
                                           : std::to_string(source.files.size()) + " images";
  } else if (dataset.rfind("fashion-mnist:", 0) == 0) {
    auto set = std::make_shared<data::ImageDataset>(data::load_dataset(dataset, int(img_size)));
    if (set->images.size(2) != img_size || set->images.size(3) != img_size)
      throw std::invalid_argument(dataset + " holds " + std::to_string(set->images.size(3)) + "×" +
                                  std::to_string(set->images.size(2)) +
                                  " images; the model takes " + std::to_string(img_size) + "×" +
                                  std::to_string(img_size));
    source.label_names = set->class_names;
    source.end = set->size();
    source.set = set;
    source.what = dataset;
  } else {
    throw std::invalid_argument("dataset " + dataset +
                                ": no such folder (folder:DIR, DIR/<class>/<image>, or "
                                "fashion-mnist:test)");
  }
  source.labels_are_classes = model_classes > 0 && !source.label_names.empty() &&
                              int64_t(source.label_names.size()) <= model_classes;
  return source;
}

namespace {

// The fields of one CSV record starting at `pos` (quoted fields as analysis::csv_text writes them);
// `pos` moves past the record's line break.
std::vector<std::string> csv_record(const std::string& text, size_t& pos,
                                    const std::string& where) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  while (pos < text.size()) {
    const char c = text[pos++];
    if (quoted) {
      if (c == '"' && pos < text.size() && text[pos] == '"') {
        fields.back() += '"';
        ++pos;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c == '\n') {
      return fields;
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  if (quoted) throw std::runtime_error(where + ": a quoted field is not closed");
  return fields;
}

}  // namespace

std::vector<EmbeddingRow> read_embedding_rows(const std::string& dir) {
  const std::string path = dir + "/" + kEmbeddingsCsv;
  const std::vector<uint8_t> bytes = io::read_file_bytes(path);
  const std::string text(bytes.begin(), bytes.end());
  if (text.rfind(kEmbeddingsCsvHeader, 0) != 0)
    throw std::runtime_error(path + ": not the images table of attnlab embed (its header is " +
                             std::string(kEmbeddingsCsvHeader).substr(0, 40) + "...)");
  std::vector<EmbeddingRow> rows;
  size_t pos = std::string(kEmbeddingsCsvHeader).size();
  int64_t line = 1;
  while (pos < text.size()) {
    ++line;
    const std::string where = path + " line " + std::to_string(line);
    const std::vector<std::string> f = csv_record(text, pos, where);
    if (f.size() != 8) throw std::runtime_error(where + ": 8 fields expected");
    EmbeddingRow r;
    try {
      r.index = std::stoll(f[0]);
      r.image = f[1];
      r.label = std::stoll(f[2]);
      r.label_name = f[3];
      r.prediction = std::stoll(f[4]);
      r.prediction_name = f[5];
      r.confidence = f[6].empty() ? std::nan("") : std::stod(f[6]);
      r.correct = f[7].empty() ? -1 : std::stoi(f[7]);
    } catch (const std::exception&) {
      throw std::runtime_error(where + ": a number is malformed");
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

int64_t concatenate_embeddings(const std::vector<std::string>& dirs, const std::string& out_dir) {
  const int64_t rows = concatenate_npy_rows(dirs, kEmbeddingsNpy, io::DType::F32, out_dir);
  std::string csv = kEmbeddingsCsvHeader;
  for (const auto& d : dirs) {
    const std::vector<uint8_t> bytes = io::read_file_bytes(d + "/" + kEmbeddingsCsv);
    const std::string part(bytes.begin(), bytes.end());
    if (part.rfind(kEmbeddingsCsvHeader, 0) != 0)
      throw std::runtime_error(d + "/" + kEmbeddingsCsv + ": not an embed run's table");
    csv += part.substr(std::string(kEmbeddingsCsvHeader).size());
  }
  io::write_file_atomic(out_dir + "/" + kEmbeddingsCsv, csv);
  return rows;
}

}  // namespace attnlab::session
