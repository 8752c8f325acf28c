// Report figure jobs: find each figure's inputs among the session's arrays and tables
// (by the names analysis_session gives them) and wire them to viz/figures.
#include "app/cli/report_figures.h"

#include <algorithm>
#include <cstdlib>

#include "viz/figures/anchors.h"
#include "viz/figures/attention_maps.h"
#include "viz/figures/castling_mask.h"
#include "viz/figures/explanations.h"
#include "viz/figures/hilo_spectra.h"
#include "viz/figures/locality.h"
#include "viz/figures/model_compare.h"
#include "viz/figures/rank.h"
#include "viz/figures/rollout.h"

namespace attnlab::cli {
namespace {

// "maps__<image>__L03__q7-7__heads" -> layer 3, query "q7-7".
struct MapName {
  int layer = -1;
  std::string query, kind;
};
std::optional<MapName> parse_map_name(const std::string& name, const std::string& prefix) {
  if (name.rfind(prefix, 0) != 0) return std::nullopt;
  const std::string rest = name.substr(prefix.size());  // "L03__q7-7__heads"
  const size_t a = rest.find("__"), b = rest.rfind("__");
  if (a == std::string::npos || b == a || rest[0] != 'L') return std::nullopt;
  MapName m;
  m.layer = std::atoi(rest.substr(1, a - 1).c_str());
  m.query = rest.substr(a + 2, b - a - 2);
  m.kind = rest.substr(b + 2);
  return m;
}

// "q7-7" on the first layer's grid -> a cell; prefix tokens ("cls") have none.
viz::MapQuery map_query(const std::string& qtag, int ref_rows, int ref_cols) {
  viz::MapQuery q;
  const size_t dash = qtag.find('-');
  if (qtag.size() > 1 && qtag[0] == 'q' && dash != std::string::npos) {
    viz::GridCell c{std::atoi(qtag.substr(1, dash - 1).c_str()),
                    std::atoi(qtag.substr(dash + 1).c_str())};
    q.cell = c;
    q.ref_rows = ref_rows;
    q.ref_cols = ref_cols;
    q.label = "query (" + std::to_string(c.row) + ", " + std::to_string(c.col) + ")";
  } else {
    q.label = "the " + qtag + " token";
  }
  return q;
}

std::string layer_label(int layer) {
  return "layer " + std::to_string(layer);
}

// The query maps of one image of one model, by layer; prefix-token rows separately.
struct ImageMaps {
  std::vector<std::pair<MapName, const analysis::Array*>> query_heads;  // layer order
  std::vector<std::pair<MapName, const analysis::Array*>> prefix_heads;
  std::optional<std::pair<MapName, const analysis::Array*>> last_fused;
};
ImageMaps image_maps(const ModelResults& m, const std::string& image) {
  ImageMaps out;
  const std::string prefix = "maps__" + image + "__";
  for (const auto& name : m.arrays_with_prefix(prefix)) {
    const auto parsed = parse_map_name(name, prefix);
    if (!parsed) continue;
    const analysis::Array* a = m.array(name);
    // Query maps come with a head fusion ("__fused"); a prefix token's own row does not.
    const bool has_fused =
        parsed->kind == "heads" && m.array(name.substr(0, name.size() - 5) + "fused") != nullptr;
    if (parsed->kind == "heads" && has_fused)
      out.query_heads.emplace_back(*parsed, a);
    else if (parsed->kind == "heads")
      out.prefix_heads.emplace_back(*parsed, a);
    else if (parsed->kind == "fused")
      out.last_fused = std::make_pair(*parsed, a);  // sorted: last wins
  }
  const auto by_layer = [](const auto& x, const auto& y) { return x.first.layer < y.first.layer; };
  std::sort(out.query_heads.begin(), out.query_heads.end(), by_layer);
  return out;
}

void add_model_map_jobs(std::vector<FigureJob>& jobs, const ModelResults& m,
                        const ReportFigureOptions& o) {
  for (const auto& im : m.images) {
    const ImageMaps maps = image_maps(m, im.tag);
    const std::string suffix = "__" + m.name + "__" + im.tag;
    const viz::RgbaImage* picture = &im.picture;
    int ref_rows = 0, ref_cols = 0;
    if (!maps.query_heads.empty()) {
      const auto& first = *maps.query_heads.front().second;
      ref_rows = int(first.shape[1]);
      ref_cols = int(first.shape[2]);
      const auto last = maps.query_heads.back();
      const viz::MapQuery q = map_query(last.first.query, ref_rows, ref_cols);
      jobs.push_back({"head_maps", "head_maps" + suffix, [=, &m] {
                        return viz::head_maps_figure(*picture, *last.second, q, m.name,
                                                     layer_label(last.first.layer), o.style);
                      }});
      std::vector<viz::LayerMaps> layers;
      for (const auto& [name, a] : maps.query_heads) layers.push_back({layer_label(name.layer), a});
      jobs.push_back({"layers_heads", "layers_heads" + suffix, [=, &m] {
                        return viz::layers_heads_figure(*picture, layers, q, m.name, o.style);
                      }});
    }
    for (const auto& [name, a] : maps.prefix_heads) {
      const viz::MapQuery q = map_query(name.query, ref_rows, ref_cols);
      const analysis::Array* arr = a;
      const MapName nm = name;
      jobs.push_back({"prefix_maps", "prefix_maps__" + name.query + suffix, [=, &m] {
                        return viz::head_maps_figure(*picture, *arr, q, m.name,
                                                     layer_label(nm.layer), o.style);
                      }});
    }
    for (const auto& name : m.arrays_with_prefix("rollout__" + im.tag + "__")) {
      const analysis::Array* a = m.array(name);
      const viz::MapQuery q =
          map_query(name.substr(("rollout__" + im.tag + "__").size()), ref_rows, ref_cols);
      jobs.push_back({"rollout", "rollout" + suffix, [=, &m] {
                        return viz::rollout_figure(*picture, *a, q, m.name, o.rollout_switches,
                                                   o.style);
                      }});
    }
  }
}

void add_compare_jobs(std::vector<FigureJob>& jobs, const std::vector<ModelResults>& models,
                      const ReportFigureOptions& o) {
  if (models.size() < 2) return;
  for (const auto& im : models.front().images) {
    std::vector<viz::ModelMap> maps;
    viz::MapQuery q;
    for (const auto& m : models) {
      const ImageMaps found = image_maps(m, im.tag);
      if (!found.last_fused || found.query_heads.empty()) continue;
      if (maps.empty()) {
        const auto& first = *found.query_heads.front().second;
        q = map_query(found.last_fused->first.query, int(first.shape[1]), int(first.shape[2]));
      }
      maps.push_back({m.name, found.last_fused->second, 0});
    }
    if (maps.size() < 2) continue;
    const viz::RgbaImage* picture = &im.picture;
    jobs.push_back({"compare", "compare__" + im.tag, [=] {
                      return viz::model_compare_figure(
                          *picture, maps, q, "Head-mean attention of " + q.label + ", last layer",
                          o.style);
                    }});
  }
}

// "tabby cat (281)": the class an image's explanation is for, from the session's
// "explanations" table (image, analysis, explained, class, ...) and the model's names.
std::string explained_class(const ModelResults& m, const std::string& image,
                            const std::string& analysis) {
  const analysis::Table* t = m.table("explanations");
  if (!t) return "";
  for (const auto& row : t->rows) {
    if (row.size() < 4 || row[0].str() != image || row[1].str() != analysis) continue;
    const int64_t cls = row[3].i;
    const bool named = cls >= 0 && cls < int64_t(m.class_names.size());
    return (named ? m.class_names[size_t(cls)] + " (" : "class ") + std::to_string(cls) +
           (named ? ")" : "");
  }
  return "";
}

// AnchorFormer Fig. 4: every model's explanation of every image, one figure per method.
void add_explanation_jobs(std::vector<FigureJob>& jobs, const std::vector<ModelResults>& models,
                          const ReportFigureOptions& o) {
  const std::pair<const char*, const char*> methods[] = {
      {"gradcam", "Grad-CAM"}, {"gradrollout", "Gradient-weighted attention rollout"}};
  for (const auto& [analysis, what] : methods) {
    std::vector<viz::ExplanationImage> images;
    for (const auto& im : models.front().images) images.push_back({im.tag, &im.picture});
    std::vector<viz::ExplanationRow> rows;
    for (const auto& m : models) {
      viz::ExplanationRow row{m.name, {}};
      bool any = false;
      for (const auto& image : images) {
        viz::ExplanationCell cell;
        for (const auto& im : m.images)
          if (im.tag == image.name) cell.picture = &im.picture;
        cell.map = m.array(models::explanation_array_name(analysis, image.name));
        if (!cell.picture) cell.map = nullptr;
        cell.label = explained_class(m, image.name, analysis);
        any = any || cell.map;
        row.cells.push_back(cell);
      }
      if (any) rows.push_back(std::move(row));
    }
    if (rows.empty() || images.empty()) continue;
    const std::string title = what;
    jobs.push_back({"explanations", std::string(analysis) + "__grid",
                    [=] { return viz::explanation_grid_figure(images, rows, title, o.style); }});
  }
}

// Per-model statistics figures: rank, HiLo spectra, anchors.
void add_model_plot_jobs(std::vector<FigureJob>& jobs, const ModelResults& m) {
  if (m.table("rank_layers"))
    jobs.push_back(
        {"rank", "rank__" + m.name, [&m] { return viz::rank_figure(m.tables, m.arrays); }});
  // HiLo's two branches (other models record only their output's spectrum).
  std::vector<int64_t> hilo_layers;
  for (const auto& name : m.arrays_with_prefix("spectra__L")) {
    const size_t at = name.find("__hifi__log_amplitude");
    if (at != std::string::npos)
      hilo_layers.push_back(std::atoll(name.substr(10, at - 10).c_str()));
  }
  for (const int64_t layer : hilo_layers) {
    jobs.push_back(
        {"hilo_spectra", "hilo_spectra__" + m.name + "__L" + std::to_string(layer), [&m, layer] {
           viz::HiloSpectraOptions o;
           o.layer = layer;
           return viz::hilo_spectra_grid(m.arrays, o);
         }});
  }
  if (!hilo_layers.empty())
    jobs.push_back({"hilo_spectra", "hilo_spectra__" + m.name + "__profiles",
                    [&m] { return viz::hilo_spectra_profiles(m.arrays, m.tables); }});
  for (const auto& im : m.images) {
    if (m.arrays_with_prefix("anchors__" + im.tag + "__").empty()) continue;
    const ReportImage* image = &im;
    jobs.push_back({"anchors", "anchors__" + m.name + "__" + im.tag, [&m, image] {
                      return viz::anchor_figure(m.arrays, image->tag, image->picture, m.tables);
                    }});
  }
}

}  // namespace

const std::vector<FigureKind>& figure_kinds() {
  static const std::vector<FigureKind> kinds = {
      {"head_maps", "Per-head attention maps of the query (last layer)"},
      {"prefix_maps", "Attention of the prefix tokens (CLS), per head (last layer)"},
      {"layers_heads", "Every layer and head"},
      {"rollout", "Attention rollout"},
      {"compare", "Models side by side"},
      {"explanations",
       "Class-specific explanations (Grad-CAM, gradient rollout; AnchorFormer "
       "Fig. 4 layout)"},
      {"hilo_spectra", "HiLo Hi-Fi / Lo-Fi frequency spectra"},
      {"rank", "Rank of the KV buffer and of the output"},
      {"anchors", "Anchor assignments"},
      {"castling_mask", "Castling auxiliary-mask sparsity over training"},
      {"locality", "Mean attention distance per head"},
  };
  return kinds;
}

std::vector<FigureJob> report_figure_jobs(const std::vector<ModelResults>& models,
                                          const std::optional<SeriesResults>& series,
                                          const ReportFigureOptions& options) {
  std::vector<FigureJob> jobs;
  for (const auto& m : models) add_model_map_jobs(jobs, m, options);
  add_compare_jobs(jobs, models, options);
  if (!models.empty()) add_explanation_jobs(jobs, models, options);
  for (const auto& m : models) add_model_plot_jobs(jobs, m);
  std::vector<std::pair<std::string, analysis::Table>> locality;
  for (const auto& m : models)
    if (const analysis::Table* t = m.table("locality_heads")) locality.emplace_back(m.name, *t);
  if (!locality.empty())
    jobs.push_back({"locality", "locality", [locality] { return viz::locality_figure(locality); }});
  if (series) {
    const SeriesResults s = *series;
    jobs.push_back({"castling_mask", "castling_mask__" + s.name,
                    [s] { return viz::castling_mask_figure(s.tables); }});
  }
  // Order by kind as the index shows them, keeping the order within a kind.
  std::stable_sort(jobs.begin(), jobs.end(), [](const FigureJob& a, const FigureJob& b) {
    const auto rank = [](const std::string& id) {
      const auto& k = figure_kinds();
      return std::find_if(k.begin(), k.end(), [&](const FigureKind& f) { return f.id == id; }) -
             k.begin();
    };
    return rank(a.kind) < rank(b.kind);
  });
  return jobs;
}

}  // namespace attnlab::cli
