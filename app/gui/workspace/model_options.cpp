// Model loads with options; see model_options.h.
#include "app/gui/workspace/model_options.h"

#include <filesystem>

#include "app/gui/jobs/loaded_model.h"
#include "app/gui/views/size_sweep_view.h"
#include "app/gui/workspace/workspace.h"

namespace attnlab::gui {
namespace {

// The model loaded: it takes the slot; results of the one it replaces are dropped (jobs
// still running for them see another model in the slot and post nothing).
void install(GuiState& s, int index, std::shared_ptr<LoadedModel> model, const ModelInfo& info) {
  ModelSlot& m = s.models[size_t(index)];
  m.model = std::move(model);
  m.info = info;
  m.info.name = unique_model_name(s, index, info.name);
  m.options = info.options;
  m.status = LoadStatus::Ready;
  m.error.clear();
  m.option_error.clear();
  m.reloading = false;
  ++m.loads;
  for (auto it = s.results.begin(); it != s.results.end();)
    it = it->first.first == index ? s.results.erase(it) : std::next(it);
  if (s.series.model == index) s.series = SeriesState{};  // analysed with the old options
}

void refuse(GuiState& s, int index, bool replacing, const std::string& what) {
  ModelSlot& m = s.models[size_t(index)];
  if (replacing) {  // the open model stays as it was
    m.reloading = false;
    m.option_error = what;
    ++m.loads;
    s.status.notice = "Could not apply the options of " + m.info.name + ": " + what;
    if (m.model) {  // the device and precision pickers show where the open model still runs
      s.device.current = m.model->device.str();
      s.device.dtype = runtime::dtype_name(m.model->ready.model->dtype());
    }
  } else {
    m.status = LoadStatus::Failed;
    m.error = what;
    s.status.notice = "Could not open model " + m.arg + ": " + what;
  }
  s.status.notice_is_error = true;
}

}  // namespace

void submit_model_load(GuiState& state, ComputeWorker& worker, int index,
                       const ModelOptions& options) {
  ModelSlot& slot = state.models[size_t(index)];
  const bool replacing = slot.status == LoadStatus::Ready;
  if (replacing) {
    slot.reloading = true;
  } else {
    slot.status = LoadStatus::Loading;
    slot.error.clear();
    slot.options = options;
  }
  slot.option_error.clear();
  const std::string arg = slot.arg;
  const uint64_t id = slot.id;  // the slot's index may change before the answer (a close)
  worker.submit("load " + std::filesystem::path(arg).stem().string(),
                [id, arg, options, replacing](JobContext& ctx) {
                  try {
                    ModelInfo info;
                    auto model = load_model(arg, &info, options);
                    ctx.post([id, model, info](GuiState& s) {
                      if (const int at = find_model(s, id); at >= 0) install(s, at, model, info);
                    });
                  } catch (const std::exception& e) {
                    const std::string what = e.what();
                    ctx.post([id, replacing, what](GuiState& s) {
                      if (const int at = find_model(s, id); at >= 0) refuse(s, at, replacing, what);
                    });
                  }
                });
}

void reload_every_model(GuiState& state, ComputeWorker& worker,
                        const std::function<void(ModelOptions&)>& change) {
  for (int m = 0; m < int(state.models.size()); ++m) {
    ModelSlot& slot = state.models[size_t(m)];
    if (slot.status == LoadStatus::Ready) {
      ModelOptions options = slot.options;
      change(options);
      submit_model_load(state, worker, m, options);
    } else {
      change(slot.options);  // a retry loads with them
    }
  }
}

nlohmann::json model_info_json(const GuiState& state, int index) {
  const ModelSlot& m = state.models.at(size_t(index));
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
                        {"device", m.options.device},
                        {"dtype", m.options.dtype}}},
                      {"device", m.model ? m.model->device.str() : ""},
                      {"dtype", m.model ? runtime::dtype_name(m.model->ready.model->dtype()) : ""},
                      {"option_error", m.option_error}};
  nlohmann::json top5 = nlohmann::json::array();
  const auto r = state.results.find({index, state.view.image});
  if (r != state.results.end() && r->second.analysis) {
    const viz::RgbaImage& pic = r->second.analysis->picture;
    j["picture"] = {pic.height, pic.width};
    for (const Prediction& p : r->second.analysis->top5)
      top5.push_back({{"class", p.cls}, {"name", p.name}, {"probability", p.probability}});
  }
  j["top5"] = top5;
  // What is open (the tests of opening the same file twice read it).
  j["workspace"] = {{"models", state.models.size()},
                    {"images", state.images.size()},
                    {"image", state.images.empty() ? std::string()
                                                   : state.images[size_t(state.view.image)].path}};
  // Its analysis of the current image: "ready", "loading", "failed" (cancelled: the error
  // says so) or "none" (not asked for yet).
  j["analysis"] = r == state.results.end()                 ? "none"
                  : r->second.status == LoadStatus::Ready  ? "ready"
                  : r->second.status == LoadStatus::Failed ? "failed"
                                                           : "loading";
  j["analysis_error"] = r == state.results.end() ? "" : r->second.error;
  // Its resolution sweep (size_sweep_view.h): the sizes, those analysed, and the rows of
  // each over_sizes statistic's tables against the size.
  const SizeSweepState& sweep = state.sweep;
  if (sweep.model == index) {
    nlohmann::json analysed = nlohmann::json::array(), rows = nlohmann::json::object();
    for (size_t k = 0; k < sweep.analyses.size(); ++k)
      if (sweep.analyses[k]) analysed.push_back(sweep.sizes[k]);
    for (const auto& a : session::analyses()) {
      if (!a.over_sizes) continue;
      for (const auto& t : size_sweep_results(state, a).tables) rows[t.name] = t.rows.size();
    }
    j["size_sweep"] = {{"sizes", sweep.sizes}, {"analysed", analysed}, {"running", sweep.running},
                       {"error", sweep.error}, {"shown", has_size_sweep(state)}, {"rows", rows}};
  }
  return j;
}

std::string input_size_label(const ModelInfo& info) {
  if (info.input_size.size() != 2) return "as the image (no crop)";
  return std::to_string(info.input_size[0]) + "x" + std::to_string(info.input_size[1]) +
         (info.options.img_size.empty() ? " (the model's own)" : " (set)");
}

void add_model(GuiState& state, ComputeWorker& worker, const std::string& arg,
               const ModelOptions* given) {
  ModelSlot slot;
  slot.id = state.next_slot_id++;
  slot.arg = arg;
  slot.info.name = unique_model_name(state, int(state.models.size()),
                                     std::filesystem::path(arg).stem().string());
  state.models.push_back(slot);
  ModelOptions options = given ? *given : ModelOptions{};
  options.device = state.device.current;  // the device picker's
  options.dtype = state.device.dtype;     // and the precision picker's
  submit_model_load(state, worker, int(state.models.size()) - 1, options);
}

void retry_model_as(GuiState& state, ComputeWorker& worker, int index, const std::string& preset) {
  // Results computed with a model that failed do not exist; nothing else to clear.
  ModelOptions options = state.models[size_t(index)].options;
  options.preset = preset;
  submit_model_load(state, worker, index, options);
}

}  // namespace attnlab::gui
