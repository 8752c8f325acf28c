// `attnlab analyze-sizes`: the same statistics at a list of input sizes (issue 26's
// resolution sweep; HiLo's point that cost and behaviour change with resolution, RALA's
// rank at 3136 tokens), as size_sweep.h runs it: every table becomes "<table>_sizes" with
// the size as its x, beside "sizes": tokens and time per image at each size. Figures:
// every over_sizes statistic (entropy, map rank, locality, rank, outliers, spectra)
// against the input size, SVG and PDF.
//   analyze-sizes --model M --img-sizes 224,288,384 --images FILES|DIR --out DIR [options]
#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "app/cli/size_sweep.h"
#include "app/session/analysis_registry.h"
#include "app/session/edited_input.h"
#include "core/analysis/output_folder.h"
#include "core/runtime/precision.h"
#include "viz/render.h"

namespace attnlab::cli {

int cmd_analyze_sizes(Args args, const GlobalOptions& g) {
  const std::string sizes_text = args.take_option("--img-sizes");
  if (sizes_text.empty()) throw UsageError("analyze-sizes needs --img-sizes S1,S2,... (pixels)");
  const std::vector<int64_t> sizes = parse_img_sizes(sizes_text);
  AnalyzeRequest req = take_analyze_request(args, /*series=*/false, size_sweep_analyses());
  if (!req.model_request.img_size.empty())
    throw UsageError("analyze-sizes takes --img-sizes, not --img-size");
  const runtime::ComputeTarget target = compute_target(g);
  const auto t0 = std::chrono::steady_clock::now();
  SizeSweep sweep =
      analyse_sizes(req.model_request, "analyze-sizes", sizes, req.images, req.settings, target);
  std::vector<std::string>& warnings = sweep.warnings;

  analysis::OutputFolder folder(req.out, req.model.tag + "_sizes");
  session::SeriesResults& results = sweep.results;
  results.name = folder.model_tag();
  for (const auto& t : results.tables) folder.write_table(t);
  folder.write_table(sweep.costs);
  session::write_edits_file(folder, req.settings.edits);
  nlohmann::json figures = nlohmann::json::array();
  for (const auto& a : session::analyses()) {
    if (!a.series_figure || !a.over_sizes || !req.settings.analyses.count(a.name)) continue;
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
  nlohmann::json sidecar = run_description(g, target, req.settings);
  sidecar["command"] = "analyze-sizes";
  sidecar["img_sizes"] = sizes;
  sidecar["sizes"] = sweep.per_size;
  sidecar["figures"] = figures;
  sidecar["warnings"] = warnings;
  sidecar["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string sidecar_path = folder.write_sidecar(sidecar);
  for (const auto& w : warnings) std::fprintf(stderr, "attnlab: warning: %s\n", w.c_str());
  std::printf("%zu sizes analysed, %zu files in %s (settings: %s)\n", sizes.size(),
              folder.files_written() + figures.size() + 1, folder.dir().c_str(),
              sidecar_path.c_str());
  return sweep.any_failed ? kExitFailure : kExitOk;
}

}  // namespace attnlab::cli
