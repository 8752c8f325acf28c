// erf: the effective receptive field of one output token (default: the centre of the last
// block's / stage's grid) — per image the gradient of the token's summed features with
// respect to the input pixels (models/erf_run.h), Σ_rgb |∂/∂I| normalised to sum 1 and
// averaged over the images; from that mean map (core/analysis/erf.h) the radial profile
// and the area and radius holding --erf-percent (20, 50, 99) % of the contribution.
// Needs the model and the image (its own forward and backward pass). Figure: each model's
// map with the token and those radii, and the cumulative share against the radius.
// Its figures (report, series, GUI tab): erf_figures.cpp.
#include <ATen/ATen.h>

#include <cmath>

#include "app/session/analyses/step_helpers.h"
#include "core/analysis/erf.h"
#include "models/erf_run.h"

namespace attnlab::session {
namespace {

const analysis::ResultKey kMapKey{"erf", "", -1, "", "", "map"};
const analysis::ResultKey kSetupKey{"erf", "", -1, "", "", "setup"};

analysis::Table areas_table(const std::string& name, const std::string& caption,
                            const analysis::ErfSummary& s) {
  analysis::Table t = make_table(name, caption,
                                 {"percent", "pixels", "area_share", "side_px", "radius_px"}, 1);
  for (const auto& a : s.areas)
    t.add_row({a.fraction * 100, a.pixels, a.area_share, a.side_px, a.radius_px});
  return t;
}

// The shares of the contribution whose area is reported (--erf-percent / 100).
std::vector<double> erf_fractions(const AnalysisSettings& settings) {
  std::vector<double> out;
  for (const double p : settings.options.numbers("erf-percent")) out.push_back(p / 100);
  return out;
}

void explain_erf(ExplainStep& s) {
  const auto cell = s.settings.options.cell("erf-token");
  const models::ErfRequest q{"", cell ? cell->first : -1, cell ? cell->second : -1};
  const std::vector<double> fractions = erf_fractions(s.settings);
  const models::ErfResult r = models::run_erf(s.model, s.input, q);
  const double total = r.map.sum().item<double>();
  if (!(total > 0) || !std::isfinite(total))
    throw models::ModelError("erf: the gradient of " + r.target + "'s token with respect to "
                             "the input is " + (total == 0 ? "zero" : "not finite"));
  const at::Tensor share = r.map / total;
  s.session.add_sum(analysis::format_result_key(kMapKey),
                    "effective receptive field of token (" + std::to_string(r.token_y) + ", " +
                        std::to_string(r.token_x) + ") of " + r.target + "'s " +
                        grid_text(r.layout) + " grid: sum over RGB of |d(sum_c z_c)/d pixel|, "
                        "each image's map normalised to sum 1, averaged over the images",
                    {"y", "x"}, share);
  // What the derived tables and the figure need beside the map (the same for every image,
  // so its mean is itself): the token's centre in pixels, its cell, and the fractions.
  std::vector<double> setup{r.centre_y, r.centre_x, double(r.token_y), double(r.token_x)};
  for (const double f : fractions) setup.push_back(f);
  s.session.add_sum(analysis::format_result_key(kSetupKey),
                    "erf: the token's centre in input pixels (y, x), its grid cell (y, x), "
                    "then the fractions whose area is reported",
                    {"value"}, at::tensor(setup, at::kDouble));
  const analysis::ErfSummary one = analysis::erf_summary(share, r.centre_y, r.centre_x, fractions);
  s.session.accumulate(areas_table(
      "erf_images",
      "each image's own effective receptive field of " + r.target + "'s token (" +
          std::to_string(r.token_y) + ", " + std::to_string(r.token_x) +
          "): the fewest pixels holding percent % of the contribution, as a share of the "
          "image and the side of a square, and the radius around the token's centre holding it",
      one));
}

std::vector<analysis::Table> erf_tables(const std::vector<analysis::Array>& means) {
  const analysis::Array *map = nullptr, *setup = nullptr;
  for (const auto& a : means) {
    if (a.name == analysis::format_result_key(kMapKey)) map = &a;
    if (a.name == analysis::format_result_key(kSetupKey)) setup = &a;
  }
  if (!map || !setup || setup->data.size() < 5) return {};
  const at::Tensor m = at::tensor(std::vector<double>(map->data.begin(), map->data.end()))
                           .reshape({map->shape[0], map->shape[1]});
  // Stored as float32: back to the fractions asked for (percentages to 1e-4).
  std::vector<double> fractions;
  for (auto it = setup->data.begin() + 4; it != setup->data.end(); ++it)
    fractions.push_back(std::round(double(*it) * 1e6) / 1e6);
  const analysis::ErfSummary s = analysis::erf_summary(m, setup->data[0], setup->data[1], fractions);
  analysis::Table areas = areas_table(
      "erf",
      "effective receptive field of the image-averaged map (erf__map): the fewest pixels "
      "holding percent % of the contribution, as a share of the image and the side of a "
      "square, and the smallest radius (whole pixels) around the token's centre holding it",
      s);
  analysis::Table profile = make_table(
      "erf_profile",
      "radial profile of the image-averaged effective receptive field around the token's "
      "centre, by distance rounded to whole pixels: the mean share of the contribution per "
      "pixel at that radius, and the share within it",
      {"radius_px", "share_per_pixel", "cumulative"}, 1);
  for (size_t r = 0; r < s.profile.size(); ++r)
    profile.add_row({int64_t(r), s.profile[r], s.cumulative[r]});
  return {areas, profile};
}

}  // namespace

AnalysisInfo erf_analysis() {
  AnalysisInfo info;
  info.name = "erf";
  info.summary =
      "effective receptive field of an output token (gradient to the input pixels): map, "
      "radial profile, area and radius holding 20/50/99 %";
  info.tables = {"erf", "erf_profile", "erf_images"};
  info.arrays = {"erf__map", "erf__setup"};
  info.key_shape = analysis::ResultKeyShape{false, false, false, false, true};
  info.in_image_analysis = true;
  info.opt_in = true;  // a backward pass to the pixels per image: named, or in the GUI
  info.in_demo = true;  // milliseconds per image on the zoo
  info.explain = explain_erf;
  AnalysisOption token{"erf-token", AnalysisOption::Kind::Cell, "y,x", nullptr,
                       "the centre of the last block's / stage's grid"};
  token.help = "the output token whose receptive field is measured";
  token.in_gui = false;  // the GUI measures the grid's centre token, as the CLI's default
  AnalysisOption percent{"erf-percent", AnalysisOption::Kind::Percentages, "LIST",
                         nlohmann::json::array({20, 50, 99})};
  percent.help = "shares of the contribution (in %) whose area is reported";
  info.options = {token, percent};
  info.derived_tables = erf_tables;
  return info;
}

}  // namespace attnlab::session
