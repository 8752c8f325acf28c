// Model loads with options; see model_options.h.
#include "app/gui/workspace/model_options.h"

#include <filesystem>

#include "app/gui/jobs/loaded_model.h"
#include "app/gui/workspace/workspace.h"

namespace attnlab::gui {

void submit_model_load(Workspace& ws, ComputeWorker& worker, int index,
                       const ModelOptions& options) {
  ModelSlot& slot = ws.models[size_t(index)];
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
                    ctx.post(ModelLoaded{id, model, info});
                  } catch (const std::exception& e) {
                    ctx.post(ModelLoadFailed{id, replacing, e.what()});
                  }
                });
}

void reload_every_model(Workspace& ws, ComputeWorker& worker,
                        const std::function<void(ModelOptions&)>& change) {
  for (int m = 0; m < int(ws.models.size()); ++m) {
    ModelSlot& slot = ws.models[size_t(m)];
    if (slot.status == LoadStatus::Ready || slot.status == LoadStatus::Failed) {
      // A failed model is tried again: its failure may have been the old device or
      // precision (bf16 refused on this CPU); a file that cannot be read fails again.
      ModelOptions options = slot.options;
      change(options);
      submit_model_load(ws, worker, m, options);
    } else {
      change(slot.options);  // loading: a retry loads with them
    }
  }
}

std::string input_size_label(const ModelInfo& info) {
  if (info.input_size.size() != 2) return "as the image (no crop)";
  return std::to_string(info.input_size[0]) + "x" + std::to_string(info.input_size[1]) +
         (info.options.img_size.empty() ? " (the model's own)" : " (set)");
}

void add_model(Workspace& ws, const DeviceState& device, ComputeWorker& worker,
               const std::string& arg, const ModelOptions* given) {
  ModelSlot slot;
  slot.id = ws.next_slot_id++;
  slot.arg = arg;
  slot.info.name =
      unique_model_name(ws, int(ws.models.size()), std::filesystem::path(arg).stem().string());
  ws.models.push_back(slot);
  ModelOptions options = given ? *given : ModelOptions{};
  options.device = device.current;  // the device picker's
  options.dtype = device.dtype;     // and the precision picker's
  submit_model_load(ws, worker, int(ws.models.size()) - 1, options);
}

void retry_model_as(Workspace& ws, ComputeWorker& worker, int index, const std::string& preset) {
  // Results computed with a model that failed do not exist; nothing else to clear.
  ModelOptions options = ws.models[size_t(index)].options;
  options.preset = preset;
  submit_model_load(ws, worker, index, options);
}

// The model loaded: it takes the slot; results of the one it replaces are dropped (jobs
// still running for them see another model in the slot and post nothing).
void apply_result(Workspace& ws, SeriesState& series, const ModelLoaded& loaded) {
  const int index = find_model(ws, loaded.model_id);
  if (index < 0) return;  // closed meanwhile
  ModelSlot& m = ws.models[size_t(index)];
  m.model = loaded.model;
  m.info = loaded.info;
  m.info.name = unique_model_name(ws, index, loaded.info.name);
  m.options = loaded.info.options;
  m.status = LoadStatus::Ready;
  m.error.clear();
  m.option_error.clear();
  m.reloading = false;
  ++m.loads;
  for (auto it = ws.results.begin(); it != ws.results.end();)
    it = it->first.first == index ? ws.results.erase(it) : std::next(it);
  if (series.model == index) series = SeriesState{};  // analysed with the old options
}

void apply_result(Workspace& ws, DeviceState& device, StatusBarState& status,
                  const ModelLoadFailed& failed) {
  const int index = find_model(ws, failed.model_id);
  if (index < 0) return;
  ModelSlot& m = ws.models[size_t(index)];
  const std::string& what = failed.error;
  if (failed.replacing) {  // the open model stays as it was
    m.reloading = false;
    m.option_error = what;
    ++m.loads;
    status.notice = "Could not apply the options of " + m.info.name + ": " + what;
    if (m.model) {  // the device and precision pickers show where the open model still runs
      device.current = m.model->device.str();
      device.dtype = runtime::dtype_name(m.model->ready.model->dtype());
    }
  } else {
    m.status = LoadStatus::Failed;
    m.error = what;
    status.notice = "Could not open model " + m.arg + ": " + what;
  }
  status.notice_is_error = true;
}

}  // namespace attnlab::gui
