// `attnlab complexity`: parameters and multiply-accumulates (MACs) of a model at one or
// more input sizes, or of attention mechanisms on one or more token grids, per attention
// layer and per op group (projections, scores, aggregation, convs, norms), counted from
// the operations the forward really runs (fvcore's convention: one multiply-add = one
// MAC; core/runtime/mac_counter.h). Prints a summary; --out writes the tables as CSV,
// JSON and LaTeX.
#include <cstdio>
#include <map>

#include "app/cli/cli_common.h"
#include "app/cli/model_options.h"
#include "app/session/complexity.h"
#include "app/session/cost_figures.h"
#include "core/analysis/export.h"
#include "core/analysis/output_folder.h"
#include "core/io/text.h"
#include "viz/render.h"

namespace attnlab::cli {
namespace {

std::string giga(int64_t macs) {
  return text::format_g(static_cast<double>(macs) / 1e9, 4) + " G";
}

std::string mega(int64_t params) {
  return text::format_g(static_cast<double>(params) / 1e6, 4) + " M";
}

void print_run(const session::ComplexityRun& run, bool per_layer) {
  std::printf("%s at %lldx%lld%s: params %s, MACs %s\n", run.subject.c_str(),
              static_cast<long long>(run.height), static_cast<long long>(run.width),
              run.tokens ? (" (" + std::to_string(run.tokens) + " tokens)").c_str() : "",
              mega(run.params).c_str(), giga(run.total_macs()).c_str());
  std::string groups;
  for (const auto& g : session::mac_groups())
    if (run.group_macs(g)) groups += "  " + g + " " + giga(run.group_macs(g));
  std::printf("  by group:%s\n", groups.c_str());
  if (!per_layer) return;
  int index = 0;
  for (const auto& l : run.layers)
    std::printf(
        "  %-24s params %-10s MACs %s\n",
        l.name.empty() ? "rest of the model" : (std::to_string(index++) + " " + l.name).c_str(),
        l.name.empty() ? "" : mega(l.params).c_str(), giga(l.total()).c_str());
}

}  // namespace

int cmd_complexity(Args args, const GlobalOptions&) {
  const std::string mechanisms = args.take_option("--mechanism");
  const auto sizes = args.take_list("--img-size");
  const auto grids = args.take_list("--tokens");
  const auto option_args = args.take_list("--option");
  const int dim = args.take_positive_int("--dim", 768);
  const int heads = args.take_positive_int("--heads", 12);
  const std::string prefix_text = args.take_option("--prefix");
  const std::string out_dir = args.take_option("--out");
  const bool per_layer = args.take_flag("--per-layer");
  session::ModelRequest request;
  request.model = args.take_option("--model");
  request.preset = args.take_option("--preset");
  request.config_path = args.take_option("--config");
  request.checkpoint = args.take_option("--checkpoint");
  request.key = args.take_option("--key");
  if (!args.positionals().empty()) throw UsageError("complexity takes no positional arguments");
  const bool model = !request.model.empty() || !request.preset.empty() ||
                     !request.config_path.empty() || !request.checkpoint.empty();
  if (model == !mechanisms.empty())
    throw UsageError(
        "complexity needs either a model (--model/--preset/--config/--checkpoint) "
        "or --mechanism NAME[,NAME...]");
  if (model && !grids.empty())
    throw UsageError("--tokens is for --mechanism; a model takes --img-size");
  if (!model && !sizes.empty())
    throw UsageError("--img-size is for a model; a mechanism takes --tokens");

  std::vector<session::ComplexityRun> runs;
  if (model) {
    std::vector<std::vector<int64_t>> hw;
    for (const auto& s : sizes) hw.push_back(parse_img_size(s));
    if (hw.empty()) hw.push_back({});
    for (const auto& size : hw)  // no --img-size: the model's own (height 0)
      runs.push_back(
          session::count_model(request, size.empty() ? 0 : size[0], size.empty() ? 0 : size[1]));
  } else {
    const int64_t prefix = prefix_text.empty() ? 0 : std::stoll(prefix_text);
    std::vector<std::pair<int64_t, int64_t>> hw;
    try {
      for (const auto& g : grids) hw.push_back(session::parse_token_grid(g));
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    if (hw.empty()) hw.push_back({14, 14});
    for (const auto& name : text::split(mechanisms)) {
      std::map<std::string, double> options;
      try {
        options = session::mechanism_options(name, option_args);
      } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
      }
      for (const auto& [h, w] : hw)
        runs.push_back(session::count_mechanism(name, dim, heads, options, h, w, prefix));
    }
  }
  for (const auto& run : runs) print_run(run, per_layer || model);
  if (!out_dir.empty()) {
    analysis::OutputFolder folder(out_dir, model ? runs.front().subject : "mechanisms");
    for (const auto& table :
         {session::complexity_layers_table(runs), session::complexity_totals_table(runs)}) {
      folder.write_table(table);
      analysis::write_table_latex(
          folder.dir() + "/" + folder.model_tag() + "__" + table.name + ".tex", table, 0);
    }
    // With more than one size per subject: cost against size (HiLo's Fig. 2 style).
    if (session::complexity_has_sizes(runs)) {
      const auto figure = session::complexity_macs_figure(runs, model);
      for (const auto format : {viz::FigureFormat::Svg, viz::FigureFormat::Pdf})
        viz::write_figure(figure.figure,
                          folder.dir() + "/" + folder.model_tag() + "__complexity_macs." +
                              viz::figure_format_name(format),
                          format);
    }
    folder.write_sidecar({{"command", "complexity"},
                          {"convention",
                           "one multiply-add = one MAC (fvcore); norms one MAC "
                           "per element; element-wise ops, softmax, pooling: 0"}});
    std::printf("wrote %s\n", out_dir.c_str());
  }
  return kExitOk;
}

}  // namespace attnlab::cli
