// What the paper figures (viz/figures/*) share: finding a result table or array by name,
// reading its columns by name with errors that say what is missing, the layer tag of
// array names, error bars, and sizing a figure whose rows mix
// image panels with plot panels. Plain analysis results in (analysis::Table/Array, as
// AnalysisSession::tables()/arrays() or the exported files give them), nothing else.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/analysis/table.h"
#include "viz/figure.h"
#include "viz/figures/captioned_figure.h"

namespace attnlab::viz {

// The figure functions return viz::CaptionedFigure (viz/figures/captioned_figure.h): the
// figure and one sentence saying what it shows and with which settings.

// The table or array called `name`. Exported files carry a model prefix
// ("rala__rank_layers"), so a name ending in "__" + name matches too. Throws
// std::invalid_argument naming `who` (the figure), what is missing and what there is.
const analysis::Table& find_table(const std::vector<analysis::Table>& tables,
                                  const std::string& name, const std::string& who);
const analysis::Table* find_table_or_null(const std::vector<analysis::Table>& tables,
                                          const std::string& name);
const analysis::Array& find_array(const std::vector<analysis::Array>& arrays,
                                  const std::string& name, const std::string& who);
const analysis::Array* find_array_or_null(const std::vector<analysis::Array>& arrays,
                                          const std::string& name);
// Checks the array's rank (and its axis names when given); throws std::invalid_argument.
void require_axes(const analysis::Array& a, const std::vector<std::string>& axes,
                  const std::string& who);

// Columns of a table read by name: throws std::invalid_argument naming the figure, the
// table, the missing column and the columns there are.
class Columns {
 public:
  Columns(const analysis::Table& table, std::string who) : table_(table), who_(std::move(who)) {}
  size_t index(const std::string& column) const;
  // The numeric value (text cells are parsed; unparsable text gives NaN).
  double number(const std::vector<analysis::Cell>& row, const std::string& column) const;
  std::string text(const std::vector<analysis::Cell>& row, const std::string& column) const;
  const analysis::Table& table() const { return table_; }

 private:
  const analysis::Table& table_;
  std::string who_;
};

// One model's values of `column` against its "layer" column, a line with markers (rows in
// table order; a row whose layer or value is not finite is left out, so the line joins
// the layers it has).
LineSeries layer_series(const Columns& cols, const std::string& column, Color color);

// "L00", "L07", "L12": the layer tag of array names.
std::string layer_tag(int64_t layer);
// The distinct values of a numeric column in first-seen order, sorted ascending.
std::vector<int64_t> distinct_layers(const Columns& cols, const std::string& column = "layer");

// Short number text for captions and labels ("0.25", "64", "1.3e-05").
std::string format_number(double v, int significant = 3);

// Vertical error bars (one short line per point, with caps) of y ± err at x.
void add_error_bars(Panel& panel, const std::vector<double>& x, const std::vector<double>& y,
                    const std::vector<double>& err, Color color, double cap_halfwidth);

// A log axis that spans too few decades for decade ticks to be enough gets 1-2-5 ticks.
void log_ticks_125(Axis& axis);

// For figures whose rows mix image panels (square maps) and plot panels: the height at
// which the image panels fill their cells without blank space below (all rows share one
// height). Start from a generous height_in; the figure is changed in place.
void fit_height_to_images(Figure& figure);

}  // namespace attnlab::viz
