// add_explanation_grid; see explanation_figure.h.
#include "app/session/analyses/explanation_figure.h"

#include <cstdio>

#include "viz/figures/explanations.h"

namespace attnlab::session {
namespace {

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

}  // namespace

FigureKind explanations_figure_kind() {
  return {"explanations",
          "Class-specific explanations (Grad-CAM, gradient rollout; AnchorFormer Fig. 4 layout)"};
}

void add_explanation_grid(const ReportInputs& in, const std::string& analysis,
                          const std::string& title, std::vector<FigureJob>& jobs) {
  if (in.models.empty()) return;
  std::vector<viz::ExplanationImage> images;
  for (const auto& im : in.models.front().images) images.push_back({im.tag, &im.picture});
  std::vector<viz::ExplanationRow> rows;
  for (const auto& m : in.models) {
    viz::ExplanationRow row{m.name, {}};
    bool any = false;
    for (const auto& image : images) {
      viz::ExplanationCell cell;
      if (const ResultImage* im = m.image(image.name)) cell.picture = &im->picture;
      cell.map = cell.picture ? m.array({analysis, image.name, -1, "", "", ""}) : nullptr;
      cell.label = explained_class(m, image.name, analysis);
      any = any || cell.map;
      row.cells.push_back(cell);
    }
    if (any) rows.push_back(std::move(row));
  }
  if (rows.empty() || images.empty()) return;
  const viz::MapStyle style = in.options.style;
  jobs.push_back({"explanations", analysis + "__grid",
                  [=] { return viz::explanation_grid_figure(images, rows, title, style); }});
}

}  // namespace attnlab::session
