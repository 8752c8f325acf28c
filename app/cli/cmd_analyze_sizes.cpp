// `attnlab analyze-sizes`: the same statistics at a list of input sizes (issue 26's
// resolution sweep; HiLo's point that cost and behaviour change with resolution, RALA's
// rank at 3136 tokens). The model is resolved once per size as `--img-size S` would
// (a ViT's position embedding resampled, the preprocessing cropping to S), the images run
// through the analyses at each size, and every table becomes "<table>_sizes" with the size
// as its x ("size_index", "input", "img_size"), beside "sizes": tokens and time per image
// at each size. Figures: every series statistic (entropy, map rank, locality, rank,
// outliers, spectra) against the input size, SVG and PDF.
//   analyze-sizes --model M --img-sizes 224,288,384 --images FILES|DIR --out DIR [options]
#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "app/cli/analyze_common.h"
#include "app/cli/model_options.h"
#include "app/session/checkpoint_series.h"
#include "core/analysis/output_folder.h"
#include "core/io/text.h"
#include "core/runtime/device.h"
#include "viz/render.h"

namespace attnlab::cli {
namespace {

std::vector<int64_t> parse_sizes(const std::string& text) {
  std::vector<int64_t> sizes;
  for (const auto& item : text::split(text)) {
    const std::vector<int64_t> hw = parse_img_size(item);
    if (hw[0] != hw[1]) throw UsageError("--img-sizes takes square sizes (got '" + item + "')");
    sizes.push_back(hw[0]);
  }
  if (sizes.size() < 2) throw UsageError("--img-sizes wants two or more sizes, e.g. 224,288,384");
  return sizes;
}

// The default: every series statistic that is a function of one model's images (not
// Castling's mask, only in Castling models; not CKA to the final checkpoint).
std::string series_analyses() {
  std::string names;
  for (const auto& a : session::analyses())
    if (a.series && a.name != "mask" && a.name != "cka") names += (names.empty() ? "" : ",") + a.name;
  return names;
}

}  // namespace

int cmd_analyze_sizes(Args args, const GlobalOptions& g) {
  const std::string sizes_text = args.take_option("--img-sizes");
  if (sizes_text.empty()) throw UsageError("analyze-sizes needs --img-sizes S1,S2,... (pixels)");
  const std::vector<int64_t> sizes = parse_sizes(sizes_text);
  AnalyzeRequest req = take_analyze_request(args, /*series=*/false, series_analyses());
  if (!req.model_request.img_size.empty())
    throw UsageError("analyze-sizes takes --img-sizes, not --img-size");
  const c10::Device device = runtime::select_device(g.device);
  const auto t0 = std::chrono::steady_clock::now();

  session::SeriesTables sweep({"size_index", "input", "img_size"}, "_sizes", "input size");
  analysis::Table costs;
  costs.name = "sizes";
  costs.caption = "each input size of the sweep: tokens of the first and last traced layer, "
                  "images analysed, and the seconds per image of the forward with the analyses";
  costs.columns = {"size_index", "img_size", "first_layer_tokens", "last_layer_tokens", "images",
                   "seconds_per_image"};
  costs.key_columns = 2;
  nlohmann::json per_size = nlohmann::json::array();
  std::vector<std::string> warnings;
  bool any_failed = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    session::ModelRequest r = req.model_request;
    r.img_size = {sizes[i], sizes[i]};
    r.hash_checkpoint = i == 0;  // the same file at every size
    const ModelChoice choice = choose_request(r);
    std::fprintf(stderr, "analyze-sizes: %lld x %lld (%zu/%zu)\n", (long long)sizes[i],
                 (long long)sizes[i], i + 1, sizes.size());
    ReadyModel model = load_ready_model(choice, device);
    session::AnalysisSession session(req.settings, nullptr);  // statistics only
    Progress progress("  images", static_cast<int64_t>(req.images.size()));
    const auto t_size = std::chrono::steady_clock::now();
    const auto failed = analyse_images(session, *model.model, device, choice.preprocessing,
                                       req.images, progress);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t_size).count();
    any_failed = any_failed || !failed.empty();
    if (session.images() == 0)
      throw std::runtime_error("no image could be analysed at " + std::to_string(sizes[i]) + " px");
    const std::string input = std::to_string(sizes[i]) + "x" + std::to_string(sizes[i]);
    sweep.add(int64_t(i), input, sizes[i], session.tables());
    const nlohmann::json layers = session.layers_json();
    const auto tokens = [](const nlohmann::json& l) { return l.value("tokens", int64_t{0}); };
    costs.add_row({int64_t(i), sizes[i], layers.empty() ? int64_t{0} : tokens(layers.front()),
                   layers.empty() ? int64_t{0} : tokens(layers.back()), session.images(),
                   seconds / double(session.images())});
    per_size.push_back({{"img_size", sizes[i]}, {"layers", layers}, {"seconds", seconds},
                        {"images_analysed", session.images()}});
    for (const auto& w : session.warnings())
      if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
  }

  analysis::OutputFolder folder(req.out, req.model.tag + "_sizes");
  session::SeriesResults results;
  results.name = folder.model_tag();
  results.tables = sweep.tables();
  results.suffix = "_sizes";
  results.x_column = "img_size";
  results.x_label = "input size (pixels)";
  for (const auto& t : results.tables) folder.write_table(t);
  folder.write_table(costs);
  nlohmann::json figures = nlohmann::json::array();
  for (const auto& a : session::analyses()) {
    if (!a.series_figure || !req.settings.analyses.count(a.name)) continue;
    try {
      const viz::CaptionedFigure f = a.series_figure(results);
      for (const auto format : {viz::FigureFormat::Svg, viz::FigureFormat::Pdf}) {
        const std::string path = folder.dir() + "/" + folder.model_tag() + "__" + a.name +
                                 "_sizes." + viz::figure_format_name(format);
        viz::write_figure(f.figure, path, format);
        figures.push_back({{"file", path}, {"caption", f.caption}});
      }
    } catch (const std::exception& e) {
      warnings.push_back("figure " + a.name + "_sizes: " + e.what());
    }
  }
  nlohmann::json sidecar = run_description(g, device, req.settings);
  sidecar["command"] = "analyze-sizes";
  sidecar["img_sizes"] = sizes;
  sidecar["sizes"] = per_size;
  sidecar["figures"] = figures;
  sidecar["warnings"] = warnings;
  sidecar["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string sidecar_path = folder.write_sidecar(sidecar);
  for (const auto& w : warnings) std::fprintf(stderr, "attnlab: warning: %s\n", w.c_str());
  std::printf("%zu sizes analysed, %zu files in %s (settings: %s)\n", sizes.size(),
              folder.files_written() + figures.size() + 1, folder.dir().c_str(),
              sidecar_path.c_str());
  return any_failed ? kExitFailure : kExitOk;
}

}  // namespace attnlab::cli
