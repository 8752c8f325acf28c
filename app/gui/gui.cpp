// run_gui: the window, the OpenGL 3.3 core context, Dear ImGui and the frame loop.
// Each frame: poll input, fold in dropped files and finished loads (controller.h), draw
// the UI from GuiState (menu.h, panels.h), render, swap. Loads run on a LoadWorker and
// analyses on a ComputeWorker, so the loop never blocks on the disk or on LibTorch, and a
// corrupt file only ever becomes red text.
#include "app/gui/gui.h"

#include <GL/gl.h>
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "app/gui/controller.h"
#include "app/gui/gui_state.h"
#include "app/gui/jobs/compute_worker.h"
#include "app/gui/jobs/load_worker.h"
#include "app/gui/leak_check_gl_driver.h"
#include "app/gui/projector/projector.h"
#include "app/gui/script/gui_script.h"
#include "app/gui/script/screenshot.h"
#include "app/gui/script/script_runner.h"
#include "app/gui/views/controls.h"
#include "app/gui/views/cost_view.h"
#include "app/gui/views/edit_view.h"
#include "app/gui/views/figure_tabs.h"
#include "app/gui/views/map_source.h"
#include "app/gui/views/menu.h"
#include "app/gui/views/panels.h"
#include "app/gui/views/report_command.h"
#include "app/gui/views/series_view.h"
#include "app/gui/views/size_sweep_view.h"
#include "app/gui/views/theme.h"
#include "app/gui/workspace/close_slots.h"
#include "app/gui/workspace/model_options.h"
#include "app/gui/workspace/schedule_compute.h"
#include "app/gui/workspace/settings_store.h"
#include "app/gui/workspace/workspace.h"
#include "app/session/figure_view_options.h"
#include "core/io/file_bytes.h"
#include "core/runtime/bf16_products.h"
#include "core/runtime/data_paths.h"
#include "core/runtime/device.h"
#include "models/zoo.h"

namespace attnlab::gui {
namespace {

constexpr int kWindowWidth = 1280;
constexpr int kWindowHeight = 800;
// Smoke runs (max_frames > 0) keep drawing past max_frames until the loads they started
// have landed, so the screenshot shows results rather than "loading"; at most this long.
constexpr double kSettleSeconds = 60.0;
constexpr double kIdleWaitSeconds = 0.25;        // nothing moves: wake up this often anyway
constexpr double kBusyFramePeriod = 1.0 / 30.0;  // only background work: 30 frames a second
// A script waiting for the workers (wait-idle, wait-job) shows nothing new: 5 frames a
// second. Under Xvfb's software GL a frame costs ~25 ms of a core, which at 30 frames a
// second was most of a core taken from the job being waited for.
constexpr double kScriptWaitFramePeriod = 0.2;
constexpr double kFrameBudgetMs = 33.0;          // frames longer than this are reported

// Exit codes of run_gui.
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;   // UI set-up or the screenshot failed
constexpr int kExitNoWindow = 2;  // no display / no usable OpenGL 3.3 context
constexpr int kExitUsage = 2;     // the script does not parse

// Frame durations in ms, for the report printed at exit.
class FrameTimes {
 public:
  void add(double ms) { ms_.push_back(ms); }
  size_t count() const { return ms_.size(); }
  size_t count_over(double ms) const {
    return size_t(std::count_if(ms_.begin(), ms_.end(), [ms](double t) { return t > ms; }));
  }
  double percentile(double p) {
    std::sort(ms_.begin(), ms_.end());
    return ms_[std::min(ms_.size() - 1, size_t(p * double(ms_.size() - 1) + 0.5))];
  }

 private:
  std::vector<double> ms_;
};

bool take_screenshot(GLFWwindow* window, const std::string& path,
                     const PixelRect* crop = nullptr) {
  int fb_width = 0;
  int fb_height = 0;
  glfwGetFramebufferSize(window, &fb_width, &fb_height);
  std::string error;
  if (save_framebuffer_png(fb_width, fb_height, path, &error, crop)) return true;
  std::fprintf(stderr, "attnlab: cannot save the screenshot: %s\n", error.c_str());
  return false;
}

std::string take_glfw_error() {
  const char* description = nullptr;
  const int code = glfwGetError(&description);
  if (description != nullptr) return description;
  return code != GLFW_NO_ERROR ? "GLFW error " + std::to_string(code) : "unknown GLFW error";
}

// Scope guards, declared in set-up order so that tear-down runs in reverse.
struct GlfwLibrary {
  bool ok = glfwInit() == GLFW_TRUE;
  ~GlfwLibrary() {
    if (ok) glfwTerminate();
  }
};

struct WindowHandle {
  GLFWwindow* window = nullptr;
  ~WindowHandle() {
    if (window != nullptr) glfwDestroyWindow(window);
  }
};

struct ImGuiSession {
  bool context = false, platform = false, renderer = false;
  ~ImGuiSession() {
    if (renderer) ImGui_ImplOpenGL3_Shutdown();
    if (platform) ImGui_ImplGlfw_Shutdown();
    if (context) ImGui::DestroyContext();
  }
};

GLFWwindow* create_window(int width, int height) {
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);  // required for 3.2+ core on macOS
  return glfwCreateWindow(width, height, "attnlab", nullptr, nullptr);
}

void print_glfw_error(int code, const char* description) {
  std::fprintf(stderr, "attnlab: GLFW error %d: %s\n", code, description);
}

// GLFW calls this from inside glfwPollEvents, i.e. on the main thread, so appending to
// the state directly is safe; the paths are routed at the start of the frame.
void on_files_dropped(GLFWwindow* window, int count, const char** paths) {
  auto* state = static_cast<GuiState*>(glfwGetWindowUserPointer(window));
  if (state == nullptr) return;
  for (int i = 0; i < count; ++i) state->requests.dropped_paths.emplace_back(paths[i]);
}

void draw_frame(GLFWwindow* window, GuiState& state, LoadWorker& loader, ComputeWorker& compute) {
  take_native_dialog_answer(state.dialogs.native, state.status, state.requests);
  route_dropped_files(state.requests, state.status);
  // Closes asked for last frame, here and not after last frame's panels: those drew the
  // closed image's thumbnail, so deleting its texture before they render would leave the
  // draw list naming a deleted texture (GL_INVALID_OPERATION in a core profile).
  apply_close_requests(state);
  submit_open_requests(state, loader, compute);
  apply_load_results(state, loader);
  apply_worker_results(state, compute);
  clamp_view(state.workspace, state.view);
  apply_edit_requests(state.workspace, state.view,
                      state.status);  // last frame's brush presses, Undo and Clear
  schedule_compute(state.workspace, state.view, compute);

  state.cache.new_frame();
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  ImGui::NewFrame();
  handle_shortcuts(state.workspace, state.view, state.checkpoint, state.dialogs, state.requests);
  handle_view_keys(state.workspace, state.view);
  clamp_view(state.workspace, state.view);  // the keys may have moved the view past an end
  state.frame = compute_frame_view(state.workspace,
                                   state.view);  // the panels read this frame's maps from here
  draw_main_menu(state.workspace, state.view, state.recent, state.checkpoint, state.dialogs,
                 state.requests);
  draw_workspace(state, compute);
  draw_open_dialog(state.dialogs, state.requests);
  draw_export_dialog(state.workspace, state.view, state.series, state.cost,
                     state.dialogs.export_panel, state.status);
  draw_help_overlay(state.view);
  // What the panels asked for this frame.
  if (state.requests.retry_model.first != 0) {  // the sidebar's "load as" of a failed model
    const int index = find_model(state.workspace, state.requests.retry_model.first);
    if (index >= 0)
      retry_model_as(state.workspace, compute, index, state.requests.retry_model.second);
    state.requests.retry_model = {0, ""};
  }
  for (const auto& [id, options] : state.requests.model_options)  // the sidebar's Apply
    if (const int index = find_model(state.workspace, id);
        index >= 0 && !state.workspace.models[size_t(index)].reloading &&
        state.workspace.models[size_t(index)].status != LoadStatus::Loading)
      submit_model_load(state.workspace, compute, index, options);
  state.requests.model_options.clear();
  if (state.requests.load_series) {  // the sidebar's button or a script's load-series
    state.requests.load_series = false;
    load_series(state.workspace, state.view, state.series, compute);
  }
  if (state.requests.sweep_sizes) {  // the sidebar's Sweep sizes or a script's sweep-sizes
    state.requests.sweep_sizes = false;
    start_size_sweep(state.workspace, state.view, state.sweep, compute);
  }
  if (state.requests.count_complexity) {  // the Cost tab, when the open models changed
    state.requests.count_complexity = false;
    if (!state.cost.counting) start_complexity(state.workspace, state.cost, compute);
  }
  if (state.requests.run_bench) {  // the Cost tab's Measure or the script's bench
    state.requests.run_bench = false;
    if (!state.cost.benching) start_bench(state.workspace, state.device, state.cost, compute);
  }
  run_projector_requests(state.projector, loader, compute);  // the Projector tab's jobs
  if (state.requests.show_checkpoint >= 0) {  // the series slider
    show_series_checkpoint(state.workspace, state.view, state.series,
                           state.requests.show_checkpoint);
    state.requests.show_checkpoint = -1;
  }
  if (state.requests.cancel_jobs) {  // the status bar's Cancel
    state.requests.cancel_jobs = false;
    compute.cancel_all();
    state.cost.counting = state.cost.benching = false;
    cancel_projector(state.projector);
    // Analyses that will not come are cancelled, not asked for again at the next frame
    // (which would start them over): Analyse again does that. Queries and maps the view
    // still wants are asked again.
    for (auto& [key, r] : state.workspace.results) {
      for (ResultSlot* slot : {&r, r.original.get()}) {  // the edited picture's and the original's
        if (slot && slot->status == LoadStatus::Loading) {
          slot->status = LoadStatus::Failed;
          slot->error = kAnalysisCancelled;
        }
        if (slot) slot->pending_key.clear();
      }
    }
    for (ModelSlot& m : state.workspace.models) {
      m.reloading = false;  // its new options never came
      // A first load dropped from the queue would leave the model "loading" for ever (a
      // load already running still finishes and installs it).
      if (m.status == LoadStatus::Loading) {
        m.status = LoadStatus::Failed;
        m.error = kLoadCancelled;
      }
    }
    state.status.notice = "cancelled";
    state.status.notice_is_error = false;
  }
  if (!state.requests.device.empty()) {  // the device picker: every model loads there again
    state.device.current = state.requests.device;
    state.requests.device.clear();
    const std::string device = state.device.current;
    reload_every_model(state.workspace, compute, [&](ModelOptions& o) { o.device = device; });
    state.status.notice = "running the models on " + device;
    state.status.notice_is_error = false;
  }
  if (!state.requests.dtype.empty()) {  // the precision picker: every model loads again at it
    state.device.dtype = state.requests.dtype;
    state.requests.dtype.clear();
    const std::string dtype = state.device.dtype;
    reload_every_model(state.workspace, compute, [&](ModelOptions& o) { o.dtype = dtype; });
    state.status.notice = "running the models at " + dtype;
    state.status.notice_is_error = false;
  }
  if (state.requests.reanalyse) {  // the status bar's Analyse again: the view asks again
    state.requests.reanalyse = false;
    for (auto it = state.workspace.results.begin(); it != state.workspace.results.end();) {
      if (it->first.second == state.view.image && it->second.original &&
          it->second.original->status == LoadStatus::Failed)
        it->second.original.reset();  // computed again while the difference view asks
      it = it->first.second == state.view.image && it->second.status == LoadStatus::Failed
               ? state.workspace.results.erase(it)
               : std::next(it);
    }
    state.status.notice.clear();
  }
  if (state.requests.copy_command) {
    state.requests.copy_command = false;
    const std::string cmd = report_command(state.workspace, state.view, state.cost);
    ImGui::SetClipboardText(cmd.c_str());
    state.status.notice = "copied: " + cmd;
    state.status.notice_is_error = false;
    if (!state.requests.copy_command_to.empty()) {
      try {
        io::write_file_atomic(state.requests.copy_command_to, cmd + "\n");
      } catch (const std::exception& e) {
        state.status.notice = std::string("cannot write the command: ") + e.what();
        state.status.notice_is_error = true;
      }
      state.requests.copy_command_to.clear();
    }
  }
  ImGui::Render();

  int fb_width = 0;
  int fb_height = 0;
  glfwGetFramebufferSize(window, &fb_width, &fb_height);
  glViewport(0, 0, fb_width, fb_height);
  glClearColor(0.10f, 0.10f, 0.11f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

void apply_settings(const GuiSettings& s, ViewState& v) {
  if (const auto cm = viz::colormap_from_name(s.colormap)) v.style.cmap = *cm;
  v.style.alpha = s.alpha;
  v.style.upsample = s.bilinear ? viz::Upsample::Bilinear : viz::Upsample::Nearest;
  v.norm =
      session::normalisation_from_name(s.normalisation).value_or(viz::MapNormalisation::MinMax);
  v.compare = s.layout == "compare";
  v.shared_scale = s.shared_scale;
  // Entries no analysis declares, or out of range, are dropped (a file of another version).
  v.options = {};
  v.options.read(nlohmann::json::parse(s.analysis_options, nullptr, false));
}

void store_view(const ViewState& v, GuiSettings& s) {
  s.colormap = viz::colormap_name(v.style.cmap);
  s.alpha = v.style.alpha;
  s.bilinear = v.style.upsample == viz::Upsample::Bilinear;
  s.normalisation = session::normalisation_option_name(v.norm);
  s.layout = v.compare ? "compare" : "single";
  s.shared_scale = v.shared_scale;
  s.analysis_options = v.options.set_values().dump();
}

// With no files on the command line: the zoo's models and the demo images.
void open_demo(FrameRequests& requests, StatusBarState& status) {
  const std::string zoo = models::zoo_dir();
  if (!zoo.empty()) {
    try {
      for (const auto& m : models::zoo_demo(zoo).models)
        requests.open.push_back(OpenRequest{FileKind::Model, m});
    } catch (const std::exception& e) {
      status.notice = std::string("the demo zoo: ") + e.what();
      status.notice_is_error = true;
    }
  }
  const std::string assets_dir = runtime::assets_data_dir().path;
  if (assets_dir.empty()) return;  // no demo images: the zoo's models open alone
  const std::filesystem::path assets(assets_dir);
  for (const char* im :
       {"fashion-mnist/09-ankle-boot-00000.png", "fashion-mnist/00-t-shirt-top-00019.png",
        "fashion-mnist/08-bag-00030.png", "fashion-mnist/07-sneaker-00009.png"})
    requests.open.push_back(OpenRequest{FileKind::Image, (assets / im).string()});
}

}  // namespace

int run_gui(const GuiOptions& options) {
  // Before any worker thread runs LibTorch: a bf16 model picked later must not change the
  // dispatcher's kernels under a running job (core/runtime/bf16_products.h).
  runtime::install_fp32_accumulating_bf16_products();
  // A script is checked whole before any window opens: a typo fails at once, with its line.
  std::vector<ScriptCommand> script_commands;
  int script_wait_scale = 1;
  if (!options.script_path.empty()) {
    try {
      script_commands = load_script(options.script_path);
      script_wait_scale = script_wait_scale_from_env();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "attnlab: %s\n", e.what());
      return kExitUsage;
    }
  }
  // What the last run left: window size, recent files, view options. A bad settings file
  // is reported and replaced by defaults, never a reason not to start.
  const std::string settings_file = settings_path();
  std::string settings_warning;
  GuiSettings settings = load_settings(settings_file, &settings_warning);
  if (!settings_warning.empty()) std::fprintf(stderr, "attnlab: %s\n", settings_warning.c_str());
  GlfwLibrary glfw;
  WindowHandle handle;
  if (glfw.ok)
    handle.window = create_window(
        script_commands.empty() && options.max_frames == 0 ? settings.window_width : kWindowWidth,
        script_commands.empty() && options.max_frames == 0 ? settings.window_height
                                                           : kWindowHeight);
  if (handle.window == nullptr) {
    std::fprintf(stderr,
                 "attnlab: cannot open a window: %s; is a display available? (try xvfb-run)\n",
                 take_glfw_error().c_str());
    return kExitNoWindow;
  }
  GLFWwindow* window = handle.window;
  glfwSetErrorCallback(print_glfw_error);  // from here on, report GLFW trouble as it happens
  glfwMakeContextCurrent(window);
  keep_gl_driver_loaded_for_leak_check();
  glfwSwapInterval(1);  // vsync: no point drawing faster than the display

  ThemeState theme;  // outlives the ImGui session: the font atlas points into it
  ImGuiSession imgui;
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  imgui.context = true;
  ImGui::GetIO().IniFilename = nullptr;  // the layout is tiled by code; write no imgui.ini
  apply_theme(theme);
  imgui.platform = ImGui_ImplGlfw_InitForOpenGL(window, true);
  imgui.renderer = imgui.platform && ImGui_ImplOpenGL3_Init("#version 330 core");
  if (!imgui.renderer) {
    std::fprintf(stderr, "attnlab: cannot initialise Dear ImGui's GLFW/OpenGL 3 backends\n");
    return kExitFailure;
  }

  // Reverse order of destruction matters: the state (and its GL textures) goes first,
  // while the context is still current, then the worker joins its threads.
  LoadWorker worker(run_job);
  ComputeWorker compute;
  GuiState state;
  glfwSetWindowUserPointer(window, &state);
  glfwSetDropCallback(window, on_files_dropped);

  for (const auto& d : runtime::available_devices())
    state.device.available.emplace_back(d.spec, d.description);
  try {  // --device / ATTNLAB_DEVICE; "auto" is CUDA when there is one
    state.device.current = runtime::select_device(options.device).str();
    state.device.dtype = runtime::dtype_name(runtime::parse_dtype(options.dtype));
  } catch (const std::exception& e) {
    state.status.notice = std::string("running on the CPU: ") + e.what();
    state.status.notice_is_error = true;
  }
  for (const auto& p : options.models)
    state.requests.open.push_back(OpenRequest{FileKind::Model, p, options.merge});
  for (const auto& p : options.images)
    state.requests.dropped_paths.push_back(p);  // folders expand there
  if (options.images.empty() && options.models.empty() && !options.no_demo)
    open_demo(state.requests, state.status);
  state.view.image = 0;
  state.recent.images = settings.recent_images;
  state.recent.models = settings.recent_models;
  apply_settings(settings, state.view);
  state.status.runtime_job = worker.submit(JobKind::Runtime, "");
  ScriptRunner script;
  script.commands = std::move(script_commands);
  script.wait_scale = script_wait_scale;
  script.log_waits = true;  // each wait's time against its limit, on stderr

  const bool smoke = options.max_frames > 0;
  int frames = 0;
  double settle_deadline = 0.0;
  int exit_code = kExitOk;
  FrameTimes busy_frames;  // frame times while the compute worker runs a job
  FrameTimes calm_frames;  // and while it does not: the baseline they are compared with
  double last_frame = 0.0;
  const bool log_slow_frames = std::getenv("ATTNLAB_TIMINGS") != nullptr;
  // Nothing is loading, computing or being drawn off the main thread.
  const auto workers_idle = [&] { return worker.idle() && compute.idle() && !state.cache.busy(); };
  for (;;) {
    // Sleep while nothing moves (no input, job, script or drawing in flight). While only
    // background work runs, draw at most kBusyFramePeriod apart, so the interface leaves
    // the cores to the worker; input still wakes it at once. Dragging and smoke runs poll.
    const bool quiet = workers_idle() && !script.active();
    const bool script_waits = script.waiting_idle || !script.waiting_job.empty();
    const double period = script_waits ? kScriptWaitFramePeriod : kBusyFramePeriod;
    const double wait = last_frame + period - glfwGetTime();
    if (!smoke && quiet && !ImGui::IsAnyMouseDown())
      glfwWaitEventsTimeout(kIdleWaitSeconds);
    else if (!smoke && !ImGui::IsAnyMouseDown() && wait > 0.0)
      glfwWaitEventsTimeout(wait);
    else
      glfwPollEvents();
    const double frame_start = glfwGetTime();
    last_frame = frame_start;
    const bool busy = !compute.idle();
    draw_frame(window, state, worker, compute);
    const double t_draw = glfwGetTime();
    ++frames;
    // Timed: every frame but the first two (GL and ImGui set up their device objects and
    // fonts there) and those that save a screenshot; apart while a job runs and not.
    bool measured = frames > 2;
    if (!script.screenshot.empty()) {  // a script's screenshot: this frame, as drawn
      const auto& f = state.view.shown_figure;
      const PixelRect region{f.x, f.y, f.w, f.h};
      if (script.screenshot_figure && f.dpi <= 0) {
        std::fprintf(stderr, "attnlab: script: screenshot-figure: the view shows no figure\n");
        exit_code = kExitFailure;
      } else if (!take_screenshot(window, script.screenshot,
                                  script.screenshot_figure ? &region : nullptr)) {
        exit_code = kExitFailure;
      }
      script.screenshot.clear();
      script.screenshot_figure = false;
      measured = false;
    }
    const bool idle = workers_idle() && state.requests.open.empty() &&
                      state.requests.dropped_paths.empty() && state.requests.model_options.empty() &&
                      !state.requests.count_complexity && !state.requests.run_bench &&
                      !projector_has_requests(state.projector);
    const WorkerProgress job = compute.progress();
    step_script(script, state, idle, glfwGetTime(), job.busy ? job.label : "");
    if (script.mouse_away) {  // outside the window: nothing hovered from the next frame on
      glfwSetCursorPos(window, -64.0, -64.0);
      script.mouse_away = false;
    }
    if (script.mouse_x >= 0) {  // hover a place (a figure's value tooltip)
      glfwSetCursorPos(window, double(script.mouse_x), double(script.mouse_y));
      script.mouse_x = script.mouse_y = -1;
    }
    if (script.series_requested) {
      script.series_requested = false;
      load_series(state.workspace, state.view, state.series, compute);
    }

    if (state.requests.quit) glfwSetWindowShouldClose(window, GLFW_TRUE);
    bool last = glfwWindowShouldClose(window) == GLFW_TRUE;
    if (!script.commands.empty() && script.done) {
      last = true;
      if (script.failed) {
        std::fprintf(stderr, "attnlab: %s\n", script.failure.c_str());
        exit_code = kExitFailure;
      }
    }
    if (smoke && script.commands.empty() && frames >= options.max_frames) {
      if (settle_deadline == 0.0) settle_deadline = glfwGetTime() + kSettleSeconds;
      if (workers_idle() || glfwGetTime() > settle_deadline) last = true;
    }
    if (last && !options.screenshot_path.empty() &&
        !take_screenshot(window, options.screenshot_path))
      exit_code = kExitFailure;
    glfwSwapBuffers(window);
    if (measured) (busy ? busy_frames : calm_frames).add(1000.0 * (glfwGetTime() - frame_start));
    if (log_slow_frames && 1000.0 * (glfwGetTime() - frame_start) > kFrameBudgetMs)
      std::fprintf(stderr,
                   "slow frame %d: %.1f ms (frame %.1f, swap %.1f; busy %d, measured %d, %s)\n",
                   frames, 1000.0 * (glfwGetTime() - frame_start), 1000.0 * (t_draw - frame_start),
                   1000.0 * (glfwGetTime() - t_draw), int(busy), int(measured),
                   compute.progress().label.c_str());
    if (last) break;
  }
  const auto report = [](const char* when, FrameTimes& t) {
    if (t.count() == 0) return;
    std::fprintf(stderr,
                 "attnlab: frame time %s: median %.1f ms, p95 %.1f ms, p99 %.1f ms, max %.1f ms "
                 "over %zu frames, %zu over %.0f ms\n",
                 when, t.percentile(0.5), t.percentile(0.95), t.percentile(0.99), t.percentile(1.0),
                 t.count(), t.count_over(kFrameBudgetMs), kFrameBudgetMs);
  };
  report("while the worker was busy", busy_frames);
  report("while it was not", calm_frames);

  // Remember the window, the recent files and the view options (tests run with
  // ATTNLAB_SETTINGS pointing at a temporary file, so they never touch the user's).
  if (options.max_frames == 0 && !settings_file.empty()) {
    glfwGetWindowSize(window, &settings.window_width, &settings.window_height);
    settings.recent_images = state.recent.images;
    settings.recent_models = state.recent.models;
    settings.last_images.clear();
    settings.last_models.clear();
    for (const auto& im : state.workspace.images) settings.last_images.push_back(im.path);
    for (const auto& m : state.workspace.models) settings.last_models.push_back(m.arg);
    store_view(state.view, settings);
    std::string error;
    if (!save_settings(settings_file, settings, &error))
      std::fprintf(stderr, "attnlab: settings not saved: %s\n", error.c_str());
  }
  glfwSetDropCallback(window, nullptr);
  glfwSetWindowUserPointer(window, nullptr);
  return exit_code;
}

}  // namespace attnlab::gui
