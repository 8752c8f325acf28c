// Parsing of the report's figure options; see report_options.h.
#include "app/cli/report_options.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <sstream>

#include "app/session/analysis_registry.h"
#include "core/io/text.h"

namespace attnlab::cli {
namespace {

std::vector<viz::FigureFormat> parse_formats(const std::string& text) {
  std::vector<viz::FigureFormat> out;
  for (const std::string& item : text::split(text)) {
    const auto f = viz::figure_format_from_name(item);
    if (!f) throw UsageError("--formats: '" + item + "' is not svg, pdf or png");
    if (std::find(out.begin(), out.end(), *f) == out.end()) out.push_back(*f);
  }
  return out;
}

// A whole non-negative integer below 1 000 000, or -1 when `text` is not one.
int parse_count(const std::string& text) {
  if (text.empty() || text.size() > 6 || text.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  return std::atoi(text.c_str());
}

std::set<std::string> parse_figure_kinds(const std::string& text) {
  const std::vector<session::FigureKind> known = session::figure_kinds();
  std::set<std::string> out;
  for (const std::string& item : text::split(text)) {
    const bool found = std::any_of(known.begin(), known.end(),
                                   [&](const session::FigureKind& k) { return k.id == item; });
    if (!found) {
      std::vector<std::string> ids;
      for (const auto& k : known) ids.push_back(k.id);
      throw UsageError("--figures: unknown figure kind '" + item +
                       "' (known: " + text::join(ids, ", ") + ")");
    }
    out.insert(item);
  }
  return out;
}

}  // namespace

session::MapView parse_layer_option(const std::string& text) {
  session::MapView v;
  if (text == "last") return v;
  const auto slash = text.find('/');
  v.layer = parse_count(text.substr(0, slash));
  if (slash != std::string::npos) v.layer_of = parse_count(text.substr(slash + 1));
  if (v.layer < 0 || (slash != std::string::npos && v.layer_of < 1))
    throw UsageError("--layer wants last, N or N/T (layer N of a T-layer model), not '" + text +
                     "'");
  if (slash != std::string::npos && v.layer >= v.layer_of)
    throw UsageError("--layer " + text + ": a " + std::to_string(v.layer_of) +
                     "-layer model has no layer " + std::to_string(v.layer));
  return v;
}

ReportFigureOptions take_report_figure_options(Args& args) {
  ReportFigureOptions o;
  const std::string formats = args.take_option("--formats");
  o.formats = parse_formats(formats.empty() ? "svg,pdf,png" : formats);
  o.dpi = args.take_real("--dpi", 200);
  if (!(o.dpi >= 30 && o.dpi <= 1200)) throw UsageError("--dpi must lie in [30, 1200]");
  viz::MapStyle& style = o.figure.style;
  const std::string cmap = args.take_option("--colormap");
  if (!cmap.empty()) {
    const auto c = viz::colormap_from_name(cmap);
    if (!c) throw UsageError("--colormap: unknown map '" + cmap + "' (see attnlab --help)");
    style.overlay.cmap = *c;
  }
  const std::string up = args.take_option("--upsample");
  if (!up.empty()) {
    if (up != "nearest" && up != "bilinear") throw UsageError("--upsample: nearest or bilinear");
    style.overlay.upsample = up == "nearest" ? viz::Upsample::Nearest : viz::Upsample::Bilinear;
  }
  style.overlay.alpha = args.take_real("--alpha", 0.6);
  if (!(style.overlay.alpha >= 0 && style.overlay.alpha <= 1))
    throw UsageError("--alpha must lie in [0, 1]");
  const std::string norm = args.take_option("--norm");
  if (!norm.empty()) {
    if (norm != "minmax" && norm != "divmax")
      throw UsageError("--norm: minmax (each map's [min, max]) or divmax ([0, max]), not '" + norm +
                       "'");
    style.norm =
        norm == "minmax" ? viz::MapNormalisation::MinMax : viz::MapNormalisation::DivideByMax;
  }
  // The view: which layer, head or head fusion, and what the models side by side compare.
  session::MapView& view = o.figure.view;
  const std::string layer = args.take_option("--layer");
  if (!layer.empty()) view = parse_layer_option(layer);
  const std::string head = args.take_option("--head");
  const std::string fusion = args.take_option("--head-fusion");
  if (!head.empty() && !fusion.empty())
    throw UsageError("give --head N or --head-fusion mean|max|min, not both");
  if (!head.empty()) {
    view.head = parse_count(head);
    if (view.head < 0)
      throw UsageError("--head wants a head index (0, 1, ...), not '" + head + "'");
  }
  if (!fusion.empty()) {
    if (fusion != "mean" && fusion != "max" && fusion != "min")
      throw UsageError("--head-fusion: mean, max or min, not '" + fusion + "'");
    view.fusion = fusion == "mean" ? 0 : fusion == "max" ? 1 : 2;
  }
  const std::string map = args.take_option("--map");
  if (!map.empty() && map != "query" && map != "rollout")
    throw UsageError("--map: query (the query's maps) or rollout, not '" + map + "'");
  view.rollout = map == "rollout";
  const std::string scale = args.take_option("--compare-scale");
  if (!scale.empty()) {
    const auto cs = viz::compare_scale_from_name(scale);
    if (!cs)
      throw UsageError("--compare-scale: per-panel (each model on its own scale) or shared, not '" +
                       scale + "'");
    o.figure.compare_scale = *cs;
  }
  const std::string diff = args.take_option("--compare-difference");
  if (!diff.empty()) {
    const size_t comma = diff.find(',');
    const int a = comma == std::string::npos ? -1 : parse_count(diff.substr(0, comma));
    const int b = comma == std::string::npos ? -1 : parse_count(diff.substr(comma + 1));
    if (a < 0 || b < 0 || a == b)
      throw UsageError("--compare-difference wants two different model indices A,B (0 is the first "
                       "of --models), not '" + diff + "'");
    o.figure.compare_difference = std::make_pair(a, b);
  }
  const std::string kinds = args.take_option("--figures");
  if (!kinds.empty()) o.kinds = parse_figure_kinds(kinds);
  return o;
}

}  // namespace attnlab::cli
