// The Fig. 4-style explanation grid: inputs on top, one row per model.
#include "viz/figures/explanations.h"

#include <algorithm>
#include <stdexcept>

#include "viz/figure_layout.h"

namespace attnlab::viz {
namespace {

Panel blank_panel(const std::string& title) {
  Panel p;
  p.title = title;
  p.image = true;
  p.x.show = p.y.show = false;
  return p;
}

}  // namespace

CaptionedFigure explanation_grid_figure(const std::vector<ExplanationImage>& images,
                                        const std::vector<ExplanationRow>& rows,
                                        const std::string& what, const MapStyle& style) {
  if (images.empty() || rows.empty())
    throw std::invalid_argument(what + " figure: needs at least one image and one model");
  MapStyle st = style;
  st.norm = MapNormalisation::MinMax;
  Figure f;
  f.font_pt = 7;
  f.cols = int(images.size());
  f.row_labels.push_back("input");
  for (const auto& im : images) {
    if (!im.picture) throw std::invalid_argument(what + " figure: no picture for " + im.name);
    f.panels.push_back(input_panel(*im.picture, 0, 0, std::nullopt, im.name));
  }
  std::string grids;
  for (const auto& row : rows) {
    if (row.cells.size() != images.size())
      throw std::invalid_argument(what + " figure: " + row.model + " has " +
                                  std::to_string(row.cells.size()) + " maps for " +
                                  std::to_string(images.size()) + " images");
    f.row_labels.push_back(row.model);
    std::string grid;
    for (const auto& cell : row.cells) {
      if (!cell.map || !cell.picture) {
        f.panels.push_back(blank_panel("(no map)"));
        continue;
      }
      const MapSlice s = map_slice(*cell.map, 0);
      grid = std::to_string(s.rows) + "\u00d7" + std::to_string(s.cols);
      f.panels.push_back(
          overlay_panel(*cell.picture, s, slice_range(s, st), st, std::nullopt, cell.label));
    }
    if (!grid.empty()) grids += (grids.empty() ? "" : ", ") + row.model + " " + grid;
  }
  f.title = what;
  f.width_in = std::min(kPageWidthIn, 0.9 + 1.25 * double(images.size()));
  f.height_in = 1.35 * double(rows.size() + 1) + 0.4;
  f.height_in = fitted_height_in(f);
  CaptionedFigure out{std::move(f), ""};
  out.caption = what + " of " + std::to_string(rows.size()) + " model" +
                (rows.size() == 1 ? "" : "s") + " (rows) on " + std::to_string(images.size()) +
                " image" + (images.size() == 1 ? "" : "s") +
                " (columns), in the layout of AnchorFormer's Fig. 4; each map is labelled with "
                "the class it explains (the model's top-1 unless a class was asked for). "
                "Token grids: " +
                grids + "; " + describe_style(st) + ".";
  return out;
}

}  // namespace attnlab::viz
