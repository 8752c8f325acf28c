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
#include <string>

#include "app/gui/controller.h"
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
constexpr double kSettleSeconds = 30.0;

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

void draw_frame(GLFWwindow* window, GuiState& state, LoadWorker& worker) {
  route_dropped_files(state);
  submit_open_requests(state, worker);
  apply_results(state, worker);

  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  ImGui::NewFrame();
  handle_shortcuts(state);
  draw_main_menu(state);
  draw_workspace(state);
  draw_open_dialog(state);
  ImGui::Render();

  int fb_width = 0;
  int fb_height = 0;
  glfwGetFramebufferSize(window, &fb_width, &fb_height);
  glViewport(0, 0, fb_width, fb_height);
  glClearColor(0.10f, 0.10f, 0.11f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
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
  GuiState state;
  glfwSetWindowUserPointer(window, &state);
  glfwSetDropCallback(window, on_files_dropped);

  if (!options.image_path.empty()) {
    state.open_requests.push_back(OpenRequest{FileKind::Image, options.image_path});
  }
  if (!options.checkpoint_path.empty()) {
    state.open_requests.push_back(OpenRequest{FileKind::Checkpoint, options.checkpoint_path});
  }
  state.status.runtime_job = worker.submit(JobKind::Runtime, "");

  const bool smoke = options.max_frames > 0;
  int frames = 0;
  double settle_deadline = 0.0;
  int exit_code = kExitOk;
  for (;;) {
    glfwPollEvents();
    draw_frame(window, state, worker);
    ++frames;

    if (state.quit_requested) glfwSetWindowShouldClose(window, GLFW_TRUE);
    bool last = glfwWindowShouldClose(window) == GLFW_TRUE;
    if (smoke && frames >= options.max_frames) {
      if (settle_deadline == 0.0) settle_deadline = glfwGetTime() + kSettleSeconds;
      if (worker.idle() || glfwGetTime() > settle_deadline) last = true;
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
