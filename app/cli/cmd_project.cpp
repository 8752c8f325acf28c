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

#include "app/cli/analyze_common.h"
#include "app/cli/cli_common.h"
#include "app/session/dataset_embedding.h"
#include "app/session/embedding_figure.h"
#include "app/session/embedding_projection.h"
#include "app/session/projection_options.h"
#include "core/analysis/export.h"
#include "core/io/file_bytes.h"
#include "core/io/npy.h"
#include "core/io/text.h"
#include "viz/render.h"

namespace attnlab::cli {

int cmd_project(Args args, const GlobalOptions&) {
  // The projection's options: one parser for project and report --embeddings
  // (session/projection_options.h).
  session::ProjectionOptionParser parser;
  try {
    for (const auto& option : session::projection_options()) {
      const std::string value = args.take_option(option.flag);
      if (!value.empty()) parser.set(option.flag, value);
    }
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("project: ") + e.what());
  }
  const session::ProjectionRequest request = parser.request();
  const std::string out_arg = args.take_option("--out");
  const std::vector<std::string> colours = args.take_list("--colour");
  std::vector<std::string> formats = args.take_list("--formats");
  const double dpi = args.take_real("--dpi", 200);
  const std::vector<std::string> dirs = args.positionals();
  if (dirs.size() != 1)
    throw UsageError("project needs one EMBED_DIR (the folder attnlab embed wrote)");
  const std::string dir = dirs.front();
  if (formats.empty()) formats = {"png", "pdf", "svg"};
  std::vector<viz::FigureFormat> figure_formats;
  for (const auto& f : formats) {
    const auto format = viz::figure_format_from_name(f);
    if (!format) throw UsageError("project: --formats takes png, pdf and svg, not '" + f + "'");
    figure_formats.push_back(*format);
  }

  const session::PooledEmbeddings embeddings = session::read_pooled_embeddings(dir);
  const io::RawTensor& x = embeddings.x;
  const std::vector<session::EmbeddingRow>& rows = embeddings.rows;
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
  StagedProgress progress("project " + session::projection_method_title(request.method));
  const session::EmbeddingProjection p = session::project_embeddings(
      embeddings.data(), x.shape[0], x.shape[1], request,
      [&](int64_t done, int64_t total) { return progress.update(done, total); });
  progress.finish();

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
        session::embedding_projection_figure(rows, p, session::embed_model_name(embed), colourings);
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
