// run_gui: the window, the OpenGL 3.3 core context, Dear ImGui and the frame loop.
// Each frame: poll input, fold in dropped files and finished loads (controller.h), draw
// the UI from GuiState (menu.h, panels.h), render, swap. Loads run on a LoadWorker, so
// the loop never blocks on the disk and a corrupt file only ever becomes red text.
#include "app/gui/gui.h"

#include <GL/gl.h>
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "app/gui/compute_worker.h"
#include "app/gui/controller.h"
#include "app/gui/controls.h"
#include "app/gui/figure_tabs.h"
#include "app/gui/workspace.h"
#include "models/zoo.h"
#include "app/gui/gui_state.h"
#include "app/gui/load_worker.h"
#include "app/gui/menu.h"
#include "app/gui/panels.h"
#include "app/gui/screenshot.h"
#include "app/gui/theme.h"

namespace attnlab::gui {
namespace {

constexpr int kWindowWidth = 1280;
constexpr int kWindowHeight = 800;
// Smoke runs (max_frames > 0) keep drawing past max_frames until the loads they started
// have landed, so the screenshot shows results rather than "loading"; at most this long.
constexpr double kSettleSeconds = 60.0;

// Exit codes of run_gui.
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;   // UI set-up or the screenshot failed
constexpr int kExitNoWindow = 2;  // no display / no usable OpenGL 3.3 context

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

GLFWwindow* create_window() {
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);  // required for 3.2+ core on macOS
  return glfwCreateWindow(kWindowWidth, kWindowHeight, "attnlab", nullptr, nullptr);
}

void print_glfw_error(int code, const char* description) {
  std::fprintf(stderr, "attnlab: GLFW error %d: %s\n", code, description);
}

// GLFW calls this from inside glfwPollEvents, i.e. on the main thread, so appending to
// the state directly is safe; the paths are routed at the start of the frame.
void on_files_dropped(GLFWwindow* window, int count, const char** paths) {
  auto* state = static_cast<GuiState*>(glfwGetWindowUserPointer(window));
  if (state == nullptr) return;
  for (int i = 0; i < count; ++i) state->dropped_paths.emplace_back(paths[i]);
}

void draw_frame(GLFWwindow* window, GuiState& state, LoadWorker& loader, ComputeWorker& compute) {
  route_dropped_files(state);
  submit_open_requests(state, loader, compute);
  apply_results(state, loader);
  compute.run_posted(state);
  clamp_view(state);
  schedule_compute(state, compute);

  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  ImGui::NewFrame();
  handle_shortcuts(state);
  handle_view_keys(state);
  draw_main_menu(state);
  draw_workspace(state, compute);
  draw_open_dialog(state);
  draw_export_dialog(state);
  draw_help_overlay(state);
  if (state.copy_command_requested) {
    state.copy_command_requested = false;
    const std::string cmd = report_command(state);
    ImGui::SetClipboardText(cmd.c_str());
    state.status.notice = "copied: " + cmd;
    state.status.notice_is_error = false;
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

// With no files on the command line: the zoo's models and the demo images.
void open_demo(GuiState& state) {
  const std::string zoo = models::zoo_dir();
  if (!zoo.empty())
    for (const char* m : {"softmax", "linear", "castling", "rala", "hilo", "anchor"})
      state.open_requests.push_back(OpenRequest{FileKind::Checkpoint, (std::filesystem::path(zoo) / (std::string(m) + ".safetensors")).string()});
  const std::filesystem::path assets(ATTNLAB_ASSETS_DIR);
  for (const char* im : {"fashion-mnist/09-ankle-boot-00000.png", "fashion-mnist/00-t-shirt-top-00019.png",
                         "fashion-mnist/08-bag-00030.png", "fashion-mnist/07-sneaker-00009.png"})
    state.open_requests.push_back(OpenRequest{FileKind::Image, (assets / im).string()});
}

}  // namespace

int run_gui(const GuiOptions& options) {
  GlfwLibrary glfw;
  WindowHandle handle;
  if (glfw.ok) handle.window = create_window();
  if (handle.window == nullptr) {
    std::fprintf(stderr,
                 "attnlab: cannot open a window: %s; is a display available? (try xvfb-run)\n",
                 take_glfw_error().c_str());
    return kExitNoWindow;
  }
  GLFWwindow* window = handle.window;
  glfwSetErrorCallback(print_glfw_error);  // from here on, report GLFW trouble as it happens
  glfwMakeContextCurrent(window);
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

  for (const auto& p : options.models) state.open_requests.push_back(OpenRequest{FileKind::Checkpoint, p});
  for (const auto& p : options.images) state.dropped_paths.push_back(p);  // folders expand there
  if (options.images.empty() && options.models.empty() && !options.no_demo) open_demo(state);
  state.view.image = 0;
  state.status.runtime_job = worker.submit(JobKind::Runtime, "");

  const bool smoke = options.max_frames > 0;
  int frames = 0;
  double settle_deadline = 0.0;
  int exit_code = kExitOk;
  for (;;) {
    // Sleep while nothing moves: no input, no job running, nothing to show.
    if (!smoke && worker.idle() && compute.idle() && !ImGui::IsAnyMouseDown()) glfwWaitEventsTimeout(0.25);
    else glfwPollEvents();
    draw_frame(window, state, worker, compute);
    if (state.images.size() > 0 && state.view.image >= int(state.images.size())) state.view.image = 0;
    ++frames;

    if (state.quit_requested) glfwSetWindowShouldClose(window, GLFW_TRUE);
    bool last = glfwWindowShouldClose(window) == GLFW_TRUE;
    if (smoke && frames >= options.max_frames) {
      if (settle_deadline == 0.0) settle_deadline = glfwGetTime() + kSettleSeconds;
      if ((worker.idle() && compute.idle()) || glfwGetTime() > settle_deadline) last = true;
    }
    if (last && !options.screenshot_path.empty()) {
      int fb_width = 0;
      int fb_height = 0;
      glfwGetFramebufferSize(window, &fb_width, &fb_height);
      std::string error;
      if (!save_framebuffer_png(fb_width, fb_height, options.screenshot_path, &error)) {
        std::fprintf(stderr, "attnlab: cannot save the screenshot: %s\n", error.c_str());
        exit_code = kExitFailure;
      }
    }
    glfwSwapBuffers(window);
    if (last) break;
  }

  glfwSetDropCallback(window, nullptr);
  glfwSetWindowUserPointer(window, nullptr);
  return exit_code;
}

}  // namespace attnlab::gui
