// The GUI script interpreter; see script_runner.h.
#include "app/gui/script_runner.h"

#include <cstdio>
#include <filesystem>

#include "app/gui/figure_tabs.h"
#include "app/gui/menu.h"
#include "app/gui/series_view.h"
#include "app/gui/workspace.h"

namespace attnlab::gui {
namespace {

bool is_index(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

void fail(ScriptRunner& r, const ScriptCommand& c, const std::string& message) {
  r.failed = r.done = true;
  r.failure = "script line " + std::to_string(c.line) + " (" + c.name + "): " + message;
}

// Runs one command; returns false when the script must wait before the next one.
bool run_command(ScriptRunner& r, GuiState& state, const ScriptCommand& c, bool idle, double now) {
  ViewState& v = state.view;
  const auto& a = c.args;
  const std::string& n = c.name;
  if (n == "open-image") {
    state.open_requests.push_back(OpenRequest{FileKind::Image, a[0]});
    state.status.notice.clear();
    state.status.notice_is_error = false;
  } else if (n == "open-model") {
    state.open_requests.push_back(OpenRequest{FileKind::Model, a[0]});
    state.status.notice.clear();
    state.status.notice_is_error = false;
  } else if (n == "open-dialog") {
    request_open_dialog(state, a[0] == "image" ? FileKind::Image : FileKind::Model);
  } else if (n == "select-model" || n == "select-image") {
    const bool model = n == "select-model";
    const int count = model ? int(state.models.size()) : int(state.images.size());
    int found = -1;
    if (is_index(a[0])) {
      found = std::stoi(a[0]);
    } else {
      for (int i = 0; i < count; ++i) {
        const std::string name =
            model ? state.models[size_t(i)].info.name
                  : std::filesystem::path(state.images[size_t(i)].path).stem().string();
        if (name == a[0] ||
            (!model && std::filesystem::path(state.images[size_t(i)].path).filename() == a[0]))
          found = i;
      }
    }
    if (found < 0 || found >= count) {
      fail(r, c,
           "no " + std::string(model ? "model" : "image") + " '" + a[0] + "' (" +
               std::to_string(count) + " open)");
      return false;
    }
    (model ? v.model : v.image) = found;
  } else if (n == "layer") {
    v.layer = std::stoi(a[0]);
  } else if (n == "head") {
    v.head = std::stoi(a[0]);
  } else if (n == "heads-grid") {
    v.heads_grid = a[0] == "on";
  } else if (n == "fusion") {
    v.fusion = analysis::parse_head_fusion(a[0]);
  } else if (n == "map") {
    v.kind = a[0] == "query"     ? MapKind::Query
             : a[0] == "cls"     ? MapKind::Cls
             : a[0] == "rollout" ? MapKind::Rollout
             : a[0] == "gradcam" ? MapKind::GradCam
                                 : MapKind::GradRollout;
  } else if (n == "gradcam-target") {
    v.gradcam_target = a[0] == "default" ? "" : a[0];
    std::snprintf(v.gradcam_target_edit.data(), v.gradcam_target_edit.size(), "%s",
                  v.gradcam_target.c_str());
  } else if (n == "class") {
    if (a[0] != "top1" && a[0].find_first_not_of("0123456789") != std::string::npos) {
      fail(r, c, "class wants top1 or a class index, not '" + a[0] + "'");
      return false;
    }
    v.explain_class = a[0] == "top1" ? -1 : std::stoi(a[0]);
  } else if (n == "click-token") {
    set_query_cell(state, std::stoi(a[0]), std::stoi(a[1]));
  } else if (n == "click-prefix") {
    v.query = MapQuery{};
    v.query.prefix = a[0];
  } else if (n == "tab") {
    v.tab = a[0];
    v.tab_requested = true;
  } else if (n == "layout") {
    v.compare = a[0] == "compare";
  } else if (n == "shared-scale") {
    v.shared_scale = a[0] == "on";
  } else if (n == "difference") {
    v.difference = a[0] == "on";
  } else if (n == "colormap") {
    const auto cm = viz::colormap_from_name(a[0]);
    if (!cm) {
      fail(r, c, "unknown colormap " + a[0]);
      return false;
    }
    v.style.cmap = *cm;
  } else if (n == "alpha") {
    v.style.alpha = std::stod(a[0]);
  } else if (n == "upsample") {
    v.style.upsample = a[0] == "nearest" ? viz::Upsample::Nearest : viz::Upsample::Bilinear;
  } else if (n == "export-panel" || n == "export-stats") {
    std::string message;
    const bool ok = n == "export-panel" ? export_panel(state, a[0], &message)
                                        : export_stats(state, a[0], &message);
    std::fprintf(stderr, "attnlab: script: %s\n", message.c_str());
    if (!ok) {
      fail(r, c, message);
      return false;
    }
  } else if (n == "load-series") {
    if (series_files_of(state, v.model).empty()) {
      fail(r, c, "the current model has no checkpoint series beside it");
      return false;
    }
    r.series_requested = true;
  } else if (n == "load-as") {
    state.retry_model = {v.model, a[0]};
    state.status.notice.clear();
    state.status.notice_is_error = false;
  } else if (n == "checkpoint") {
    const int k = std::stoi(a[0]);
    if (state.series.files.empty() || size_t(k) >= state.series.analyses.size() ||
        !state.series.analyses[size_t(k)]) {
      fail(r, c, "no analysed checkpoint " + a[0] + " (load-series, then wait-idle)");
      return false;
    }
    show_series_checkpoint(state, k);
  } else if (n == "wait-idle") {
    r.waiting_idle = true;
    r.idle_deadline = now + std::stod(a[0]);
    return false;
  } else if (n == "frames") {
    r.frames_left = std::stoi(a[0]);
    return false;
  } else if (n == "screenshot") {
    r.screenshot = a[0];
    return false;  // taken after this frame is drawn
  } else if (n == "expect-error" || n == "expect-no-error") {
    const bool error = state.status.notice_is_error && !state.status.notice.empty();
    if (error != (n == "expect-error")) {
      fail(r, c,
           error ? "unexpected error: " + state.status.notice
                 : "expected an error message, there is none");
      return false;
    }
  } else if (n == "expect-answered") {  // the view's maps answer its query already
    const ResultSlot* res = result_of(state, v.model, v.image);
    const std::string wanted = wanted_query(state, v.model).tag();
    if (!res || !res->maps || res->maps_key != wanted) {
      fail(r, c, "the maps of query " + wanted + " have not arrived");
      return false;
    }
  } else if (n == "expect-busy") {  // what follows happens while a job runs
    if (idle) {
      fail(r, c, "expected a job to be running, but everything is idle");
      return false;
    }
  } else if (n == "quit") {
    r.done = true;
    return false;
  }
  return true;
}

}  // namespace

void step_script(ScriptRunner& r, GuiState& state, bool idle, double now) {
  if (!r.active()) return;
  if (r.frames_left > 0) {
    --r.frames_left;
    return;
  }
  if (r.waiting_idle) {
    if (!idle) {
      if (now > r.idle_deadline) {
        fail(r, r.commands[r.next - 1], "the workers were still busy when the wait ran out");
      }
      return;
    }
    r.waiting_idle = false;
  }
  while (r.next < r.commands.size() && !r.done) {
    const ScriptCommand& c = r.commands[r.next++];
    try {
      if (!run_command(r, state, c, idle, now)) return;
    } catch (const std::exception& e) {
      fail(r, c, e.what());
      return;
    }
  }
  if (r.next >= r.commands.size()) r.done = true;
}

}  // namespace attnlab::gui
