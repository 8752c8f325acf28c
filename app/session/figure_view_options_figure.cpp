// The figure-view options and their one parser (figure_view_options.h). Named *_figure.cpp
// because it reads viz's names (colormaps, compare scales): figure code, left out of a
// GPU-check-only build.
#include "app/session/figure_view_options.h"

#include <cerrno>
#include <cstdlib>
#include <stdexcept>

#include "core/io/text.h"
#include "viz/colormap.h"

namespace attnlab::session {
namespace {

// A whole non-negative integer below 1 000 000, or -1 when `text` is not one.
int parse_count(const std::string& text) {
  if (text.empty() || text.size() > 6 || text.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  return std::atoi(text.c_str());
}

MapView parse_layer(const std::string& text, const std::string& as) {
  MapView v;
  if (text == "last") return v;
  const auto slash = text.find('/');
  v.layer = parse_count(text.substr(0, slash));
  if (slash != std::string::npos) v.layer_of = parse_count(text.substr(slash + 1));
  if (v.layer < 0 || (slash != std::string::npos && v.layer_of < 1))
    throw std::invalid_argument(as + " wants last, N or N/T (layer N of a T-layer model), not '" +
                                text + "'");
  if (slash != std::string::npos && v.layer >= v.layer_of)
    throw std::invalid_argument(as + " " + text + ": a " + std::to_string(v.layer_of) +
                                "-layer model has no layer " + std::to_string(v.layer));
  return v;
}

double parse_alpha(const std::string& text, const std::string& as) {
  char* end = nullptr;
  errno = 0;
  const double a = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno != 0 || !(a >= 0 && a <= 1))
    throw std::invalid_argument(as + " must lie in [0, 1], not '" + text + "'");
  return a;
}

}  // namespace

const std::vector<FigureViewOption>& figure_view_options() {
  static const std::vector<FigureViewOption> options = {
      {"layer", "--layer", "last|N|N/T",
       "the layer shown: the last, layer N, or layer N of a T-layer model (another depth "
       "shows the same relative layer)"},
      {"head", "--head", "N", "one head's map instead of the head fusion"},
      {"fusion", "--head-fusion", "mean|max|min", "how the heads are fused (default mean)"},
      {"map", "--map", "query|rollout", "the query's maps or the attention rollout"},
      {"colormap", "--colormap", "NAME", "matplotlib's name (viridis, magma, RdBu, ...)"},
      {"upsample", "--upsample", "nearest|bilinear", "how a map is enlarged to the picture"},
      {"alpha", "--alpha", "A", "the map's opacity over the picture, in [0, 1] (default 0.6)"},
      {"norm", "--norm", "minmax|divmax", "each map's [min, max] or [0, max]"},
      {"compare_scale", "--compare-scale", "per-panel|shared",
       "models side by side each on its own scale, or on one"},
      {"compare_difference", "--compare-difference", "A,B",
       "a last panel with model A's map minus model B's (indices in the models' order)"},
  };
  return options;
}

std::optional<viz::MapNormalisation> normalisation_from_name(std::string_view name) {
  if (name == "minmax") return viz::MapNormalisation::MinMax;
  if (name == "divmax") return viz::MapNormalisation::DivideByMax;
  return std::nullopt;
}

const char* normalisation_option_name(viz::MapNormalisation n) {
  return n == viz::MapNormalisation::DivideByMax ? "divmax" : "minmax";
}

std::optional<int> fusion_from_name(std::string_view name) {
  for (int f = 0; f < 3; ++f)
    if (name == fusion_name(f)) return f;
  return std::nullopt;
}

const FigureViewOption& figure_view_option(std::string_view name) {
  for (const auto& o : figure_view_options())
    if (name == o.name || name == o.flag) return o;
  std::vector<std::string> names;
  for (const auto& o : figure_view_options()) names.push_back(o.name);
  throw std::invalid_argument("unknown keyword '" + std::string(name) +
                              "' (the view: " + text::join(names, ", ") + ")");
}

std::vector<std::string> figure_view_choices(std::string_view name) {
  return text::split(figure_view_option(name).values, '|');
}

void FigureViewParser::set(std::string_view name, const std::string& value, std::string as) {
  const FigureViewOption* option = &figure_view_option(name);
  if (as.empty()) as = option->name;
  const std::string key = option->name;
  viz::MapStyle& style = options_.style;
  MapView& view = options_.view;
  if (key == "layer") {
    const MapView v = parse_layer(value, as);
    view.layer = v.layer;
    view.layer_of = v.layer_of;
  } else if (key == "head") {
    view.head = parse_count(value);
    if (view.head < 0)
      throw std::invalid_argument(as + " wants a head index (0, 1, ...), not '" + value + "'");
    head_spelled_ = as;
  } else if (key == "fusion") {
    const auto f = fusion_from_name(value);
    if (!f) throw std::invalid_argument(as + ": mean, max or min, not '" + value + "'");
    view.fusion = *f;
    fusion_spelled_ = as;
  } else if (key == "map") {
    if (value != "query" && value != "rollout")
      throw std::invalid_argument(as + ": query (the query's maps) or rollout, not '" + value +
                                  "'");
    view.rollout = value == "rollout";
  } else if (key == "colormap") {
    const auto c = viz::colormap_from_name(value);
    if (!c)
      throw std::invalid_argument(as + ": unknown map '" + value +
                                  "' (matplotlib's names: viridis, magma, inferno, plasma, "
                                  "cividis, turbo, jet, gray, RdBu, coolwarm)");
    style.overlay.cmap = *c;
  } else if (key == "upsample") {
    if (value != "nearest" && value != "bilinear")
      throw std::invalid_argument(as + ": nearest or bilinear, not '" + value + "'");
    style.overlay.upsample = value == "nearest" ? viz::Upsample::Nearest : viz::Upsample::Bilinear;
  } else if (key == "alpha") {
    style.overlay.alpha = parse_alpha(value, as);
  } else if (key == "norm") {
    const auto n = normalisation_from_name(value);
    if (!n)
      throw std::invalid_argument(
          as + ": minmax (each map's [min, max]) or divmax ([0, max]), not '" + value + "'");
    style.norm = *n;
  } else if (key == "compare_scale") {
    const auto cs = viz::compare_scale_from_name(value);
    if (!cs)
      throw std::invalid_argument(
          as + ": per-panel (each model on its own scale) or shared, not '" + value + "'");
    options_.compare_scale = *cs;
  } else if (key == "compare_difference") {
    const size_t comma = value.find(',');
    const int a = comma == std::string::npos ? -1 : parse_count(value.substr(0, comma));
    const int b = comma == std::string::npos ? -1 : parse_count(value.substr(comma + 1));
    if (a < 0 || b < 0 || a == b)
      throw std::invalid_argument(as +
                                  " wants two different model indices A,B (0 is the first "
                                  "of the models), not '" +
                                  value + "'");
    options_.compare_difference = std::make_pair(a, b);
  }
}

FigureOptions FigureViewParser::finish() const {
  if (!head_spelled_.empty() && !fusion_spelled_.empty())
    throw std::invalid_argument("give " + head_spelled_ + " N or " + fusion_spelled_ +
                                " mean|max|min, not both");
  return options_;
}

}  // namespace attnlab::session
