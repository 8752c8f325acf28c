// The figure-view options (which layer, head or head fusion, query maps or rollout,
// colormap, upsampling, opacity, normalisation, how models side by side share a scale):
// their names, values, defaults and error texts in one place, and the one parser that the
// CLI (report's --layer, --head, ...), `import attnlab` (Results.figure's keywords) and the
// GUI's script all call. Defined in figure_view_options_figure.cpp (figure code: not part
// of a GPU-check-only build, which draws nothing).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "app/session/results.h"

namespace attnlab::session {

struct FigureViewOption {
  const char* name;    // "layer", "fusion", "compare_scale": Python's keyword, the script's word
  const char* flag;    // "--layer", "--head-fusion", "--compare-scale": the command line's
  const char* values;  // "last, N or N/T": what it takes, for help texts
  const char* help;
};
// Every figure-view option, in the order help texts list them.
const std::vector<FigureViewOption>& figure_view_options();
// The option of that name or flag; throws std::invalid_argument for another.
const FigureViewOption& figure_view_option(std::string_view name);
// Its values when they are a fixed list ("minmax|divmax" -> {"minmax", "divmax"}).
std::vector<std::string> figure_view_choices(std::string_view name);

// Reads options one at a time onto `base`; finish() checks how they combine. Each error is
// a std::invalid_argument whose text starts with the option as the caller spelled it
// ("--head-fusion: mean, max or min, not 'avg'", "fusion: ..."), so every front end
// refuses the same values with the same words.
class FigureViewParser {
 public:
  explicit FigureViewParser(FigureOptions base = {}) : options_(std::move(base)) {}
  // `name` is an option's name or flag; `spelled` how the message names it (default: name).
  void set(std::string_view name, const std::string& value, std::string spelled = {});
  FigureOptions finish() const;

 private:
  FigureOptions options_;
  std::string head_spelled_, fusion_spelled_;  // given (non-empty) and how
};

// "minmax" / "divmax" ↔ the normalisation; "mean" / "max" / "min" ↔ MapView::fusion.
std::optional<viz::MapNormalisation> normalisation_from_name(std::string_view name);
const char* normalisation_option_name(viz::MapNormalisation n);
std::optional<int> fusion_from_name(std::string_view name);

}  // namespace attnlab::session
