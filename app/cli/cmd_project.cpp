// `attnlab project`: an embed folder's embeddings projected to 2-D (or 3-D) — PCA, t-SNE or
// UMAP (app/session/embedding_projection.h) — with the figures coloured by label,
// prediction, correct/wrong and confidence (viz/figures/projection.h).
//   attnlab project EMBED_DIR [--method pca|tsne|umap] [--dims 2] [--perplexity 30]
//                   [--neighbors 15] [--min-dist 0.1] [--iterations N] [--seed 0]
//                   [--colour label,prediction,correct,confidence] [--formats png,pdf,svg]
//                   [--dpi 200] [--out DIR]
// Writes projection_<method>.npy (N × dims float32, the rows of images.csv in order),
// projection_<method>.json (the method, its options as used, explained variance or KL
// divergence, seconds) and, in 2-D, projection_<method>.<format>, into --out (the embed
// folder by default). Progress on stderr; Ctrl-C leaves no partial file.
#include <cstdio>
#include <filesystem>
#include <optional>

#include "app/cli/analyze_common.h"
#include "app/cli/cli_common.h"
#include "app/session/dataset_embedding.h"
#include "app/session/embedding_figure.h"
#include "app/session/embedding_projection.h"
#include "core/analysis/export.h"
#include "core/io/file_bytes.h"
#include "core/io/npy.h"
#include "core/io/text.h"
#include "viz/render.h"

namespace attnlab::cli {
namespace {

// The model's name for the figure's title: its preset, else its checkpoint's stem.
std::string project_model_name(const nlohmann::json& embed) {
  const nlohmann::json m = embed.value("model", nlohmann::json::object());
  if (m.contains("preset") && m["preset"].is_string() && !m["preset"].get<std::string>().empty())
    return m["preset"].get<std::string>();
  const nlohmann::json c = m.value("checkpoint", nlohmann::json());
  const nlohmann::json path = c.is_object() ? c.value("path", nlohmann::json()) : c;
  if (path.is_string()) return std::filesystem::path(path.get<std::string>()).stem().string();
  return m.value("arch", std::string("model"));
}

int project_int(Args& args, const std::string& name, int fallback) {
  return args.take_positive_int(name, fallback);
}

}  // namespace

int cmd_project(Args args, const GlobalOptions&) {
  session::ProjectionRequest request;
  const std::string method = args.take_option("--method");
  const std::string out_arg = args.take_option("--out");
  request.dims = project_int(args, "--dims", 2);
  request.perplexity = args.take_real("--perplexity", request.perplexity);
  request.neighbors = project_int(args, "--neighbors", request.neighbors);
  request.min_dist = args.take_real("--min-dist", request.min_dist);
  request.iterations = project_int(args, "--iterations", 0);
  const std::string seed = args.take_option("--seed");
  const std::vector<std::string> colours = args.take_list("--colour");
  std::vector<std::string> formats = args.take_list("--formats");
  const double dpi = args.take_real("--dpi", 200);
  const std::vector<std::string> dirs = args.positionals();
  if (dirs.size() != 1)
    throw UsageError("project needs one EMBED_DIR (the folder attnlab embed wrote)");
  const std::string dir = dirs.front();
  try {
    request.method = session::parse_projection_method(method.empty() ? "pca" : method);
    if (!seed.empty()) request.seed = std::stoull(seed);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("project: ") + e.what());
  }
  if (!(request.perplexity > 0)) throw UsageError("project: --perplexity must be > 0");
  if (!(request.min_dist >= 0)) throw UsageError("project: --min-dist must be >= 0");
  if (formats.empty()) formats = {"png", "pdf", "svg"};
  std::vector<viz::FigureFormat> figure_formats;
  for (const auto& f : formats) {
    const auto format = viz::figure_format_from_name(f);
    if (!format) throw UsageError("project: --formats takes png, pdf and svg, not '" + f + "'");
    figure_formats.push_back(*format);
  }

  const io::RawTensor x = io::read_npy(dir + "/" + session::kEmbeddingsNpy);
  if (x.dtype != io::DType::F32 || x.shape.size() != 2)
    throw std::runtime_error(dir + "/" + session::kEmbeddingsNpy + " is " + x.describe() +
                             ": project takes pooled embeddings (N, F) float32 — the token "
                             "grids of --pool tokens are for attnlab retrieve");
  const std::vector<session::EmbeddingRow> rows = session::read_embedding_rows(dir);
  if (int64_t(rows.size()) != x.shape[0])
    throw std::runtime_error(dir + ": " + std::to_string(x.shape[0]) + " embeddings but " +
                             std::to_string(rows.size()) + " rows in " + session::kEmbeddingsCsv);
  std::vector<viz::ProjectionColouring> colourings;
  try {
    for (const auto& c : colours) colourings.push_back(session::parse_colouring(c));
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("project: ") + e.what());
  }
  if (colourings.empty()) colourings = session::available_colourings(rows);
  nlohmann::json embed = nlohmann::json::object();
  if (std::filesystem::exists(dir + "/embed.json")) try {
      const std::vector<uint8_t> bytes = io::read_file_bytes(dir + "/embed.json");
      embed = nlohmann::json::parse(std::string(bytes.begin(), bytes.end()));
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(dir + "/embed.json: not JSON (" + std::string(e.what()) + ")");
    }

  // One progress line per stage of the method (each stage says its own total).
  std::optional<Progress> progress;
  int64_t stage_total = -1;
  const std::string label = "project " + session::projection_method_title(request.method);
  const session::EmbeddingProjection p =
      session::project_embeddings(reinterpret_cast<const float*>(x.bytes.data()), x.shape[0],
                                  x.shape[1], request, [&](int64_t done, int64_t total) {
                                    if (total != stage_total) {
                                      if (progress) progress->finish();
                                      progress.emplace(label, total, "step");
                                      stage_total = total;
                                    }
                                    progress->update(done, "");
                                    return true;
                                  });
  if (progress) progress->finish();

  const std::string out = out_arg.empty() ? dir : out_arg;
  std::filesystem::create_directories(out);
  const std::string stem = out + "/projection_" + request.method;
  io::RawTensor coords;
  coords.dtype = io::DType::F32;
  coords.shape = {p.n, int64_t(p.dims)};
  std::vector<float> values(p.coords.begin(), p.coords.end());
  coords.bytes.assign(reinterpret_cast<const uint8_t*>(values.data()),
                      reinterpret_cast<const uint8_t*>(values.data() + values.size()));
  io::write_npy(stem + ".npy", coords);
  nlohmann::json info = p.info;
  info["source"] = std::filesystem::absolute(dir).string();
  info["block"] = embed.value("block", "");
  info["pool"] = embed.value("pool", "");
  analysis::write_json(stem + ".json", info);
  size_t figures = 0;
  if (p.dims == 2 && !colourings.empty()) {
    const viz::CaptionedFigure figure =
        session::embedding_projection_figure(rows, p, project_model_name(embed), colourings);
    for (const auto format : figure_formats) {
      viz::write_figure(figure.figure, stem + "." + viz::figure_format_name(format), format, dpi);
      ++figures;
    }
  }
  std::printf("project: %s of %lld embeddings (%lld features) in %.1f s: %s.npy, .json%s\n",
              session::projection_method_title(request.method).c_str(), static_cast<long long>(p.n),
              static_cast<long long>(x.shape[1]), p.info.value("seconds", 0.0), stem.c_str(),
              figures > 0 ? (" and " + std::to_string(figures) + " figure file(s)").c_str() : "");
  return kExitOk;
}

}  // namespace attnlab::cli
