// The results of analysing models over images, as figures read them: per model every
// statistics table, every array (maps, rollout, anchors per image; spectra and singular
// values per model) and the picture each image became after preprocessing; plus the
// figure jobs built from them. Shared by `attnlab report` (every image of every model)
// and the GUI's tabs (the current image). Plain data: no LibTorch in this header.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/result_key.h"
#include "core/analysis/table.h"
#include "viz/figures/attention_maps.h"
#include "viz/figures/captioned_figure.h"
#include "viz/figures/map_panels.h"
#include "viz/figures/model_compare.h"
#include "viz/rgba_image.h"

namespace attnlab::session {

struct ResultImage {
  std::string tag;
  viz::RgbaImage picture;  // the preprocessed input, un-normalised to 8-bit RGB
};

struct ModelResults {
  std::string name;  // the model's tag (file names, titles)
  std::string preprocessing;
  std::vector<ResultImage> images;  // analysed images, in order
  std::vector<analysis::Table> tables;
  std::vector<analysis::Array> arrays;  // as the session gave them (names are unique)
  nlohmann::json layers;
  std::vector<std::string> class_names;  // empty when the model's classes have no names
  std::vector<std::string> warnings, failed_images;
  double seconds = 0;

  const analysis::Array* array(const analysis::ResultKey& key) const;
  const analysis::Table* table(const std::string& name) const;
  const ResultImage* image(const std::string& tag) const;
  // The arrays whose keys parse as `analysis`'s and match `image` ("" = any image), with
  // their keys, in name order.
  std::vector<std::pair<analysis::ResultKey, const analysis::Array*>> arrays_of(
      const std::string& analysis, const std::string& image = "") const;
};

// A checkpoint series' statistics (report --series): "<table>_series" tables, their x
// the training step. A resolution sweep (analyze-sizes) is read the same way: its tables
// are "<table>_sizes" and their x the input size.
struct SeriesResults {
  std::string name;  // e.g. "castling_series"
  std::vector<analysis::Table> tables;
  std::string suffix = "_series";     // of the table names
  std::string x_column = "step";      // the column the figures put on x
  std::string x_label = "training step";
};

// Which map of the query the map figures show, as the GUI's map controls say it (attnlab
// report --layer, --head, --head-fusion, --map): the per-head maps show `layer`, and the
// models side by side show `layer`'s head or head fusion, or each model's rollout.
struct MapView {
  bool rollout = false;  // the models side by side compare their rollouts
  // Non-empty: they compare the query's cosine similarity of this facet ("tokens", "keys").
  std::string similarity;
  int layer = -1;        // traced layer index; -1: the last
  // The layer count of the model `layer` is counted on: another model shows the layer at
  // the same relative depth (0: every model shows `layer` itself, clamped to its last).
  int layer_of = 0;
  int head = -1;   // -1 (or past a model's last head): the head fusion
  int fusion = 0;  // 0 mean, 1 max, 2 min (the order of the "fused" arrays)
  // The layer a model with n layers shows: clamped, or at the same relative depth (the
  // GUI's compare view maps the current model's layer to the others this way).
  int layer_in(int n) const;
  // "Head-mean attention of query (3, 3), last layer", "Head 2 attention of the cls token,
  // layer 5", "Attention rollout of query (3, 3)": the side-by-side figure's title.
  std::string title(const std::string& query_label) const;
};
const char* fusion_name(int fusion);  // "mean", "max", "min"

struct FigureOptions {
  viz::MapStyle style;
  std::string rollout_switches;  // for the rollout caption
  MapView view;
  viz::CompareScale compare_scale = viz::CompareScale::PerPanel;  // the models side by side
  // Their difference A − B as a last panel: indices into the report's models (--models order).
  std::optional<std::pair<int, int>> compare_difference;
};

// A section of the report's index: the figures of one kind.
struct FigureKind {
  std::string id;     // "head_maps", "rollout", ...
  std::string title;  // section heading in index.html
  // Written only when --figures names it (one figure per model and image that a GUI view
  // exports, e.g. "map": the single view), not in every report.
  bool on_request = false;
};

// One figure of the report, built when run (so one failing figure is reported and the
// others are still written).
struct FigureJob {
  std::string kind;  // FigureKind::id
  std::string stem;  // file name without extension, e.g. "rollout__hilo__chelsea"
  std::function<viz::CaptionedFigure()> build;
};

// What an analysis's report figures are built from.
struct ReportInputs {
  const std::vector<ModelResults>& models;
  const std::optional<SeriesResults>& series;
  const FigureOptions& options;
};

// What a GUI tab's figure is built from: the current image's results of the current model
// (or of every model in workspace order, for a tab that compares them: AnalysisTab::
// all_models), the layer shown, the map style.
struct TabInputs {
  std::vector<ModelResults> models;  // one image each (its tag is the GUI's image tag)
  int layer = 0;                     // the current model's layer shown (never -1)
  viz::MapStyle style;
  // The query the Maps tab shows (the views of one query: agents, routing, sampling);
  // none: the grid's centre.
  std::optional<viz::MapQuery> query;
};

}  // namespace attnlab::session
