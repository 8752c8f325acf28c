// A model slot as JSON; see model_info.h.
#include "app/gui/script/model_info.h"

#include "app/gui/jobs/loaded_model.h"
#include "app/gui/views/size_sweep_view.h"
#include "app/session/analysis_registry.h"
#include "core/runtime/precision.h"

namespace attnlab::gui {

nlohmann::json model_info_json(const Workspace& ws, const ViewState& view,
                               const SizeSweepState& sweep, int index) {
  const ModelSlot& m = ws.models.at(size_t(index));
  const char* status = m.status == LoadStatus::Ready     ? "ready"
                       : m.status == LoadStatus::Failed  ? "failed"
                       : m.status == LoadStatus::Loading ? "loading"
                                                         : "empty";
  nlohmann::json j = {{"name", m.info.name},
                      {"file", m.arg},
                      {"status", status},
                      {"error", m.error},
                      {"recognition", m.info.recognition},
                      {"describe", m.info.describe},
                      {"preprocessing", m.info.preprocessing},
                      {"input_size", m.info.input_size},
                      {"options",
                       {{"preset", m.options.preset},
                        {"img_size", m.options.img_size},
                        {"class_names", m.options.class_names_path},
                        {"prompts", m.options.prompts},
                        {"merge", m.options.merge},
                        {"device", m.options.device},
                        {"dtype", m.options.dtype}}},
                      {"device", m.model ? m.model->device.str() : ""},
                      {"dtype", m.model ? runtime::dtype_name(m.model->ready.model->dtype()) : ""},
                      {"option_error", m.option_error}};
  nlohmann::json top5 = nlohmann::json::array();
  const auto r = ws.results.find({index, view.image});
  if (r != ws.results.end() && r->second.analysis) {
    const viz::RgbaImage& pic = r->second.analysis->picture;
    j["picture"] = {pic.height, pic.width};
    for (const Prediction& p : r->second.analysis->top5)
      top5.push_back({{"class", p.cls}, {"name", p.name}, {"probability", p.probability}});
  }
  j["top5"] = top5;
  // What is open (the tests of opening the same file twice read it).
  j["workspace"] = {
      {"models", ws.models.size()},
      {"images", ws.images.size()},
      {"image", ws.images.empty() ? std::string() : ws.images[size_t(view.image)].path}};
  // Its analysis of the current image: "ready", "loading", "failed" (cancelled: the error
  // says so) or "none" (not asked for yet).
  j["analysis"] = r == ws.results.end()                    ? "none"
                  : r->second.status == LoadStatus::Ready  ? "ready"
                  : r->second.status == LoadStatus::Failed ? "failed"
                                                           : "loading";
  j["analysis_error"] = r == ws.results.end() ? "" : r->second.error;
  // Its resolution sweep (size_sweep_view.h): the sizes, those analysed, and the rows of
  // each over_sizes statistic's tables against the size.
  if (sweep.model == index) {
    nlohmann::json analysed = nlohmann::json::array(), rows = nlohmann::json::object();
    for (size_t k = 0; k < sweep.analyses.size(); ++k)
      if (sweep.analyses[k]) analysed.push_back(sweep.sizes[k]);
    for (const auto& a : session::analyses()) {
      if (!a.over_sizes) continue;
      for (const auto& t : size_sweep_results(ws, sweep, a).tables) rows[t.name] = t.rows.size();
    }
    j["size_sweep"] = {{"sizes", sweep.sizes},
                       {"analysed", analysed},
                       {"running", sweep.running},
                       {"error", sweep.error},
                       {"shown", has_size_sweep(ws, view, sweep)},
                       {"rows", rows}};
  }
  return j;
}

}  // namespace attnlab::gui
