// The complexity report's counting, shared by `attnlab complexity` and the GUI: parameters
// and multiply-accumulates (MACs, fvcore's convention: core/runtime/mac_counter.h) of a
// whole model at an input size, or of one attention layer on an H×W token grid, per
// attention layer and per op group, as result tables (CSV/JSON/LaTeX through the
// exporters).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "app/session/model_source.h"
#include "core/analysis/table.h"
#include "core/runtime/mac_counter.h"

namespace attnlab::session {

// The op groups in report order.
const std::vector<std::string>& mac_groups();

// One counted forward.
struct ComplexityRun {
  std::string subject;                    // model tag or mechanism name
  int64_t height = 0, width = 0;          // input pixels (model) or token grid (mechanism)
  int64_t tokens = 0;                     // tokens of the first attention layer (mechanism: H·W)
  int64_t params = 0;                     // all parameters
  std::vector<runtime::MacLayer> layers;  // attention layers, then the rest ("")
  int64_t total_macs() const;
  int64_t group_macs(const std::string& group) const;
};

// The model of `request` built at img_size {H, W} (height 0: the size its preprocessing
// crops to) and run once on a zero image of that size. Its weights do not matter: random
// init unless a checkpoint was given.
ComplexityRun count_model(ModelRequest request, int64_t height, int64_t width);

// One `mechanism` layer (dim, heads, options as MechanismConfig) run once on random
// tokens of an H×W grid (plus `prefix` prefix tokens, e.g. 1 for a class token).
ComplexityRun count_mechanism(const std::string& mechanism, int64_t dim, int64_t heads,
                              const std::map<std::string, double>& options, int64_t height,
                              int64_t width, int64_t prefix = 0);

// A token grid as `complexity --tokens` takes it: "14x14" or "196" (a square grid when N is
// a square, else 1×N) → {H, W}. Throws std::invalid_argument naming the text.
std::pair<int64_t, int64_t> parse_token_grid(const std::string& text);

// The options of `mechanism` among "NAME=VALUE" (every mechanism that has NAME) and
// "MECH.NAME=VALUE" (that mechanism only), as MechanismConfig values. Throws
// std::invalid_argument for a malformed item, or a MECH.NAME that MECH does not have.
std::map<std::string, double> mechanism_options(const std::string& mechanism,
                                                const std::vector<std::string>& given);

// complexity_layers: one row per (run, layer) — subject, size, layer, params, MACs per
// group, total; complexity_totals: one row per run — the same summed over its layers.
analysis::Table complexity_layers_table(const std::vector<ComplexityRun>& runs);
analysis::Table complexity_totals_table(const std::vector<ComplexityRun>& runs);
// Whether the runs are a size sweep (a subject counted at more than one size): then
// complexity_macs_figure (cost_figures.h) draws MACs against size.
bool complexity_has_sizes(const std::vector<ComplexityRun>& runs);

}  // namespace attnlab::session
