// The report's datasets at a glance (report_datasets.h).
#include "app/cli/report_datasets.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <stdexcept>

#include "app/cli/analyze_common.h"
#include "app/cli/output_failure.h"
#include "app/cli/report_figures.h"
#include "app/session/dataset_embedding.h"
#include "app/session/dataset_heads.h"
#include "app/session/dataset_heads_figure.h"
#include "app/session/embedded_images.h"
#include "app/session/embedding_figure.h"
#include "app/session/projection_options.h"
#include "core/analysis/export.h"
#include "core/analysis/output_folder.h"
#include "core/data/image_dataset.h"
#include "core/io/file_bytes.h"
#include "core/io/text.h"

namespace fs = std::filesystem;

namespace attnlab::cli {
namespace {

// The report spells the method --projection (its --method would say little among the
// report's options); --dims is not taken: the figures are 2-D.
constexpr const char* kDatasetMethodFlag = "--projection";

nlohmann::json dataset_embed_json(const std::string& dir) {
  const std::string path = dir + "/embed.json";
  if (!fs::exists(path))
    throw std::runtime_error(path + " is missing (not a folder attnlab embed wrote, or a shard " +
                             "not yet merged)");
  const std::vector<uint8_t> bytes = io::read_file_bytes(path);
  try {
    nlohmann::json j = nlohmann::json::parse(std::string(bytes.begin(), bytes.end()));
    if (!j.is_object()) throw std::runtime_error(path + ": not a JSON object");
    return j;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": not JSON (" + std::string(e.what()) + ")");
  }
}

// What embed.json says of the folder, for the index.
std::vector<std::pair<std::string, std::string>> dataset_facts(const nlohmann::json& embed) {
  std::vector<std::pair<std::string, std::string>> facts;
  const auto text = [&](const char* key) -> std::string {
    const nlohmann::json v = embed.value(key, nlohmann::json());
    if (v.is_string()) return v.get<std::string>();
    if (v.is_null()) return "";
    return v.dump();
  };
  const nlohmann::json m = embed.value("model", nlohmann::json::object());
  std::string model = session::embed_model_name(embed);
  if (m.is_object() && m.contains("arch") && m["arch"].is_string())
    model += " (" + m["arch"].get<std::string>() + ")";
  facts.emplace_back("model", model);
  facts.emplace_back("source", text("source"));
  facts.emplace_back("block", text("block"));
  facts.emplace_back("pool", text("pool"));
  std::string images = text("images");
  if (const std::string skipped = text("skipped"); !skipped.empty() && skipped != "0")
    images += " (" + skipped + " could not be read)";
  facts.emplace_back("images", images);
  if (embed.contains("accuracy_percent") && embed["accuracy_percent"].is_number())
    facts.emplace_back("accuracy", text::format_g(embed["accuracy_percent"].get<double>(), 4) +
                                       " % of " + text("judged") + " labelled images");
  else
    facts.emplace_back("accuracy", "not measured (no image with a label the model predicts)");
  return facts;
}

// The method's words for a caption: its options as used and its quality numbers.
std::string projection_summary(const session::EmbeddingProjection& p) {
  const nlohmann::json& i = p.info;
  std::string s = session::projection_method_title(p.method) + " of " + std::to_string(p.n) +
                  " embeddings (" + std::to_string(i.value("features", int64_t{0})) + " features)";
  if (p.method == "pca") {
    const std::vector<double> ratio = i.value("explained_variance_ratio", std::vector<double>{});
    double total = 0;
    std::vector<std::string> parts;
    for (size_t k = 0; k < ratio.size(); ++k) {
      parts.push_back("PC " + std::to_string(k + 1) + " " + text::format_g(100 * ratio[k], 3) +
                      " %");
      total += ratio[k];
    }
    s += ": explained variance " + text::join(parts, ", ") + " (" + text::format_g(100 * total, 3) +
         " % together)";
  } else if (p.method == "tsne") {
    s += ": perplexity " + text::format_g(i.value("perplexity", 0.0), 4) + ", " +
         std::to_string(i.value("iterations", 0)) + " iterations, seed " +
         std::to_string(i.value("seed", uint64_t{0})) + ", final KL divergence " +
         text::format_g(i.value("kl_divergence", 0.0), 4);
  } else {
    s += ": n_neighbors " + std::to_string(i.value("n_neighbors", 0)) + ", min_dist " +
         text::format_g(i.value("min_dist", 0.0), 3) + ", seed " +
         std::to_string(i.value("seed", uint64_t{0})) + " (a " +
         text::format_g(i.value("a", 0.0), 4) + ", b " + text::format_g(i.value("b", 0.0), 4) + ")";
  }
  if (i.contains("note")) s += "; " + i["note"].get<std::string>();
  return s + ".";
}

// row,image,label,x,y: the coordinates as float32 (what project's .npy holds) with 9
// significant digits, which read back to the same float32.
std::string projection_csv(const std::vector<session::EmbeddingRow>& rows,
                           const session::EmbeddingProjection& p) {
  std::string csv = "row,image,label,x,y\n";
  char number[64];
  for (size_t r = 0; r < rows.size(); ++r) {
    const session::EmbeddingRow& row = rows[r];
    const std::string label = !row.label_name.empty() ? row.label_name
                              : row.label >= 0        ? std::to_string(row.label)
                                                      : std::string();
    csv +=
        std::to_string(r) + "," + analysis::csv_text(row.image) + "," + analysis::csv_text(label);
    for (int d = 0; d < 2; ++d) {
      std::snprintf(number, sizeof number, ",%.9g", double(float(p.coords[2 * r + size_t(d)])));
      csv += number;
    }
    csv += "\n";
  }
  return csv;
}

// Why a colouring the report draws is absent from `have`.
std::string missing_colouring_note(viz::ProjectionColouring c,
                                   const std::vector<session::EmbeddingRow>& rows) {
  bool labels = false, predictions = false;
  for (const auto& r : rows) {
    labels = labels || r.label >= 0;
    predictions = predictions || r.prediction >= 0;
  }
  switch (c) {
    case viz::ProjectionColouring::Label:
      return "No figure by label: no image has a label (they were not in class folders or a "
             "labelled dataset).";
    case viz::ProjectionColouring::Prediction:
      return "No figure by prediction: the model predicts no classes (an embedding model).";
    default:
      if (!labels || !predictions)
        return std::string("No correct/wrong figure: it needs labels and predictions, and ") +
               (labels ? "the model predicts no classes." : "no image has a label.");
      return "No correct/wrong figure: the labels are not the model's classes (embed judged "
             "no image).";
  }
}

// The folder's name under datasets/: its own name, made file-safe and unique.
std::string dataset_name(const std::string& dir, std::set<std::string>& taken) {
  fs::path p(dir);
  if (p.filename().empty()) p = p.parent_path();
  std::string base = analysis::file_safe(fs::absolute(p).lexically_normal().filename().string());
  if (base.empty()) base = "embeddings";
  std::string name = base;
  for (int k = 2; taken.count(name); ++k) name = base + "_" + std::to_string(k);
  taken.insert(name);
  return name;
}

// One folder: read, project, write the CSV and the figures. Throws for a folder that
// cannot be read or projected; a figure that fails goes to `errors`.
IndexDataset write_one_dataset(const std::string& dir, const std::string& name,
                               const ReportDatasetsRequest& request,
                               const ReportFigureOptions& options, const std::string& out,
                               std::vector<std::string>& errors) {
  IndexDataset d;
  d.name = name;
  d.source = dir;
  const nlohmann::json embed = dataset_embed_json(dir);
  const session::PooledEmbeddings embeddings = session::read_pooled_embeddings(dir);
  const std::vector<session::EmbeddingRow>& rows = embeddings.rows;
  d.facts = dataset_facts(embed);

  StagedProgress progress("report: " + name + " " +
                          session::projection_method_title(request.projection.method));
  const session::EmbeddingProjection p = session::project_embeddings(
      embeddings.data(), embeddings.x.shape[0], embeddings.x.shape[1], request.projection,
      [&](int64_t done, int64_t total) { return progress.update(done, total); });
  progress.finish();
  const std::string summary = projection_summary(p);
  d.facts.emplace_back("projection", summary);

  const fs::path folder = fs::path(out) / "datasets" / name;
  create_output_folder(folder);
  const std::string rel = "datasets/" + name + "/";
  const std::string stem = "projection_" + p.method;
  io::write_file_atomic((folder / (stem + ".csv")).string(), projection_csv(rows, p));
  nlohmann::json info = p.info;
  info["source"] = fs::absolute(dir).string();
  info["block"] = embed.value("block", nlohmann::json(""));
  info["pool"] = embed.value("pool", nlohmann::json(""));
  analysis::write_json((folder / (stem + ".json")).string(), info);
  d.files = {rel + stem + ".csv", rel + stem + ".json"};

  // One figure per colouring the folder has data for (confidence is project's).
  const std::vector<viz::ProjectionColouring> have = session::available_colourings(rows);
  const std::string model = session::embed_model_name(embed);
  const std::string context = " Embeddings: block " + embed.value("block", std::string("?")) +
                              ", pool " + embed.value("pool", std::string("?")) + "; " + summary;
  std::vector<session::FigureJob> jobs;
  for (const auto c : {viz::ProjectionColouring::Label, viz::ProjectionColouring::Prediction,
                       viz::ProjectionColouring::Correctness}) {
    if (std::find(have.begin(), have.end(), c) == have.end()) {
      d.notes.push_back(missing_colouring_note(c, rows));
      continue;
    }
    const std::string word = c == viz::ProjectionColouring::Correctness
                                 ? std::string("correct")
                                 : std::string(viz::projection_colouring_name(c));
    jobs.push_back({"dataset_projection", stem + "_" + word, [&rows, &p, model, c, context] {
                      viz::CaptionedFigure f =
                          session::embedding_projection_figure(rows, p, model, {c});
                      f.caption += context;
                      return f;
                    }});
  }
  // embed --heads: every head's extremes, as embed draws them (parts of 12 heads).
  std::vector<viz::CaptionedFigure> head_figures;
  if (embed.value("head_stats", false)) {
    try {
      const int64_t k = embed.value("head_examples", int64_t{8});
      const image::Preprocessing pre =
          session::embedded_image_preprocessing(embed).value_or(image::Preprocessing{});
      const std::string spec = embed.value("source", std::string());
      std::unique_ptr<data::ImageDataset> set;
      if (spec.rfind("fashion-mnist:", 0) == 0) {
        const nlohmann::json m = embed.value("model", nlohmann::json::object());
        const nlohmann::json config = m.value("config", nlohmann::json::object());
        set = std::make_unique<data::ImageDataset>(
            data::load_dataset(spec, config.value("img_size", 28)));
      }
      head_figures = session::head_extremes_figures(dir, k, pre, set.get(), model);
      io::write_file_atomic((folder / session::kHeadExtremesCsv).string(), [&] {
        const std::vector<uint8_t> b = io::read_file_bytes(dir + "/" + session::kHeadExtremesCsv);
        return std::string(b.begin(), b.end());
      }());
      d.files.push_back(rel + session::kHeadExtremesCsv);
    } catch (const std::exception& e) {
      if (is_output_failure(e)) throw;
      std::fprintf(stderr, "attnlab: error: embeddings %s: head extremes: %s (skipped)\n",
                   dir.c_str(), e.what());
      errors.push_back("embeddings " + dir + ": head extremes: " + e.what());
    }
    for (size_t i = 0; i < head_figures.size(); ++i)
      jobs.push_back(
          {"dataset_head_extremes",
           "head_extremes" + (head_figures.size() > 1 ? "_part" + std::to_string(i + 1) : ""),
           [&head_figures, i] { return head_figures[i]; }});
  } else {
    d.notes.push_back(
        "No head extremes: the folder was embedded without --heads (attnlab embed --heads "
        "keeps every head's sharpness per image).");
  }
  FigureStageResult written =
      write_report_figures(jobs, jobs.size(), options.formats, folder.string(), options.dpi);
  d.figures = std::move(written.written);
  for (const auto& e : written.errors) errors.push_back("embeddings " + dir + ": " + e);
  return d;
}

}  // namespace

ReportDatasetsRequest take_report_datasets(Args& args) {
  ReportDatasetsRequest r;
  r.dirs = args.take_list("--embeddings");
  // The projection's options: one parser for report and project (projection_options.h).
  session::ProjectionOptionParser parser;
  bool any = false;
  try {
    for (const auto& option : session::projection_options()) {
      const std::string flag =
          option.name == std::string("method") ? kDatasetMethodFlag : std::string(option.flag);
      if (flag == "--dims") continue;
      const std::string value = args.take_option(flag);
      if (value.empty()) continue;
      parser.set(option.name, value, flag);
      any = true;
    }
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("report: ") + e.what());
  }
  if (any && r.dirs.empty())
    throw UsageError("report: the projection options go with --embeddings DIR...");
  r.projection = parser.request();
  return r;
}

std::vector<IndexDataset> write_report_datasets(const ReportDatasetsRequest& request,
                                                const ReportFigureOptions& options,
                                                const std::string& out,
                                                std::vector<std::string>& errors) {
  std::vector<IndexDataset> sections;
  std::set<std::string> taken;
  for (const std::string& dir : request.dirs) {
    const std::string name = dataset_name(dir, taken);
    try {
      sections.push_back(write_one_dataset(dir, name, request, options, out, errors));
    } catch (const std::exception& e) {
      if (is_output_failure(e)) throw;
      std::fprintf(stderr, "attnlab: error: embeddings %s: %s (skipped)\n", dir.c_str(), e.what());
      errors.push_back("embeddings " + dir + ": " + e.what());
    }
  }
  return sections;
}

}  // namespace attnlab::cli
