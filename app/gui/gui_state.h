// Everything the GUI shows or edits, as plain structs owned by run_gui and passed down
// explicitly, a struct per concern (the workspace, the view, the series, the cost tab, the
// dialogs, ...): no function-local statics, so any panel's state can be inspected, reset
// or (later) saved, and a frame is a pure function of this state plus input. A function
// takes the concerns it needs, not the whole GuiState.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "app/gui/jobs/analysis_jobs.h"
#include "app/gui/jobs/explain_jobs.h"
#include "app/gui/projector/projector_state.h"
#include "app/gui/views/file_browser.h"
#include "app/gui/views/frame_view.h"
#include "app/gui/views/gl_texture.h"
#include "app/gui/views/texture_cache.h"
#include "app/gui/workspace/file_kinds.h"
#include "app/gui/workspace/native_dialog.h"
#include "app/session/cost_figures.h"
#include "core/analysis/attention_maps.h"
#include "core/image/image_edits.h"
#include "viz/overlay.h"

namespace attnlab::gui {

enum class LoadStatus { Empty, Loading, Ready, Failed };

struct CheckpointPanelState {
  LoadStatus status = LoadStatus::Empty;
  std::string path;
  std::string error;
  uint64_t pending_job = 0;
  double load_seconds = 0.0;
  std::vector<std::string> lines;     // summarize_checkpoint(...).lines, when Ready
  std::vector<std::string> warnings;  // summarize_checkpoint(...).warnings, when Ready
};

// The File > Open... popup. ImGui wants OpenPopup() called at the ID-stack level where
// the popup is drawn, not inside the menu, so the menu only sets open_requested.
struct OpenDialogState {
  bool open_requested = false;
  FileBrowserState browser;
  FileKind kind = FileKind::Image;  // what the typed path will be opened as
  std::string path_input;
};

// File > Export: a path (the format from its extension) or, for statistics, a folder.
struct ExportDialogState {
  bool open_requested = false;
  bool stats = false;
  bool workspace = false;  // File > Save workspace: the same popup, a .attnlab file
  std::string path_input;
};

struct StatusBarState {
  std::string runtime;  // torch device / threads line from a worker job ("" = not known)
  uint64_t runtime_job = 0;
  std::string notice;  // the last thing worth telling the user (e.g. a file we ignored)
  bool notice_is_error = false;
};

// A file to open, from the command line, the Open popup or a drop.
struct OpenRequest {
  FileKind kind = FileKind::Image;
  std::string path;
  int64_t merge = -1;  // a model: token merging's r (--merge on the command line); -1: none
};

// What the menus, the dialogs, the sidebar and the status bar ask of the frame loop,
// which acts on it at the start of the next frame (controller.cpp, gui.cpp): panels
// that ask for work edit this, not the workspace.
struct FrameRequests {
  std::vector<OpenRequest> open;           // turned into worker jobs at the next frame start
  std::vector<std::string> dropped_paths;  // filled by the GLFW drop callback
  // Models are named by ModelSlot::id (0: none), as a close may move them before the
  // requests are acted on.
  std::pair<uint64_t, std::string> retry_model{0, ""};  // (model, preset) picked in the sidebar
  // (model, options): a model to load again with another input size or names file (the
  // sidebar's Apply, the script's img-size / class-names)
  std::vector<std::pair<uint64_t, ModelOptions>> model_options;
  bool copy_command = false;    // File > Copy settings as command
  std::string copy_command_to;  // and write it to this file too (script copy-command)
  bool cancel_jobs = false;     // the status bar's Cancel
  bool reanalyse = false;       // the status bar's Analyse again: the image's failed analyses
  std::string device;           // the device picker: run every model there ("" = no change)
  std::string dtype;            // the precision picker: run every model at it ("" = no change)
  bool load_series = false;     // analyse the current model's training series (sidebar, script)
  bool sweep_sizes = false;     // analyse the current image at the sweep's sizes (sidebar, script)
  bool count_complexity = false;  // count the open models' MACs (the Cost tab, when stale)
  bool run_bench = false;         // measure their mechanisms (the Cost tab's button, script)
  int show_checkpoint = -1;       // put this checkpoint of the series in its model's place
  bool quit = false;              // File > Quit
  // By slot id (the lists' ×, scripts); acted on at the next frame's start (close_slots.h).
  std::vector<uint64_t> close_models, close_images;
};

// The File menu's dialogs.
struct DialogsState {
  OpenDialogState open;
  NativeDialog native;  // the desktop's file chooser while it is open
  ExportDialogState export_panel;
};

// A model of the workspace: loading on the worker, then ready (or failed, with why).
struct ModelSlot {
  // Names the slot for the whole session (Workspace::next_slot_id): a worker's answer finds
  // its slot by this, as closing a model moves the ones after it down the list.
  uint64_t id = 0;
  std::string arg;  // path or preset, as given
  // What it is loaded with: the architecture picked for it when it did not say (the
  // sidebar's "load as"), its input size and class-names file (model_panel.h).
  ModelOptions options;
  LoadStatus status = LoadStatus::Loading;
  std::string error;
  ModelInfo info;
  std::shared_ptr<LoadedModel> model;  // used by worker jobs only
  bool reloading = false;              // new options are being applied on the worker
  std::string option_error;  // why the last options were refused (the model stayed as it was)
  int loads = 0;             // loads and refused changes so far (the sidebar's fields follow)
};

// The sidebar's fields for the current model's options while they are typed
// (model_panel.h); only Apply (or a script) sends them, so typing changes nothing. They
// are filled from the model when another is shown or it was loaded again.
struct ModelOptionsEdit {
  int model = -1, loads = -1;          // the model (and its load) they were filled from
  int height = 0, width = 0;           // the input size
  std::array<char, 512> names_path{};  // the class-names file
  int merge = 0;                       // token merging's r
  std::array<char, 2048> prompts{};    // a CLIP's text prompts, one per line
};

// An image of the workspace (its thumbnail is decoded by the LoadWorker).
struct ImageSlot {
  uint64_t id = 0;  // as ModelSlot::id
  std::string path;
  LoadStatus status = LoadStatus::Loading;
  std::string error;
  GlTexture thumb;
  uint64_t job = 0;
  // What-if edits of this image (edit_view.h), applied in order to the picture every
  // model sees; empty: the image as it is. Each stroke of the mouse (or script `paint`)
  // starts at strokes[k] in `edits`: Undo removes the last stroke.
  std::vector<image::EditOp> edits;
  std::vector<size_t> strokes;
  // Counts the changes of `edits`: an analysis job of an older edit skips its work (a
  // drag of the brush analyses only the picture it ends on).
  std::shared_ptr<std::atomic<uint64_t>> edits_version = std::make_shared<std::atomic<uint64_t>>(0);
};

// The error of an image analysis stopped by Cancel (it is not run again by itself).
inline constexpr const char* kAnalysisCancelled =
    "analysis cancelled: Analyse again (status bar) runs it again";

// The error of a model whose first load Cancel dropped from the queue.
inline constexpr const char* kLoadCancelled =
    "loading cancelled: close the model (x) and open it again";

// One model on one image: the analysis, then the maps of the current query.
struct ResultSlot {
  LoadStatus status = LoadStatus::Loading;
  std::string edits_key;  // image::edits_text() of the edits of the picture it is of
  std::string error;
  std::shared_ptr<const ImageAnalysis> analysis;
  std::shared_ptr<const QueryMaps> maps;
  std::string maps_key;                         // the query the maps answer
  std::string pending_key;                      // the query being computed ("" = none)
  std::shared_ptr<const QueryRollout> rollout;  // computed only while a view shows it
  std::string rollout_key, rollout_pending;
  // The class-specific explanation shown (Grad-CAM or gradient rollout of one class):
  // a forward and backward pass on the models lane, computed only while a view shows it.
  std::shared_ptr<const ClassExplanation> explanation;
  std::string explanation_key, explanation_pending;
  // The newest maps / rollout request: a job that is no longer the newest when it starts
  // skips its work (a burst of clicks on a large image computes only the last one).
  std::shared_ptr<std::atomic<uint64_t>> maps_ticket = std::make_shared<std::atomic<uint64_t>>(0);
  std::shared_ptr<std::atomic<uint64_t>> rollout_ticket =
      std::make_shared<std::atomic<uint64_t>>(0);
  // While the image has what-if edits, this slot is of the edited picture and `original`
  // of the image as it is (the "edited − original" view; kept from before the first edit,
  // so Undo back to no edits costs nothing). Null while the image has no edits.
  std::shared_ptr<ResultSlot> original;
};

enum class MapKind { Query, Cls, Rollout, GradCam, GradRollout, Similarity };
inline bool is_explanation(MapKind k) {
  return k == MapKind::GradCam || k == MapKind::GradRollout;
}
inline ExplainMethod explain_method(MapKind k) {
  return k == MapKind::GradCam ? ExplainMethod::GradCam : ExplainMethod::GradRollout;
}

// What-if editing (edit_view.h): while `on`, a press on the Maps tab's picture paints
// with `tool` instead of picking the query. The cells pressed wait in `pending` until the
// next frame's start turns them into the image's edits (apply_edit_requests).
struct EditToolState {
  bool on = false;
  image::EditOp::Kind tool = image::EditOp::Kind::Occlude;
  int brush = 1;                                // the square's side, in tokens
  std::array<uint8_t, 3> color{128, 128, 128};  // occlude and paint
  int paste_image = -1;                         // paste: the open image the tokens come from
  int paste_dy = 0, paste_dx = 0;               // paste: from (row + dy, col + dx) there
  bool difference = false;                      // the Maps tab shows edited − original
  struct Cell {
    int row = 0, col = 0;     // on the current model's first-layer grid
    bool new_stroke = false;  // a press (true) or the drag that follows it
  };
  std::vector<Cell> pending;
  bool undo = false, clear = false;  // asked for; acted on with `pending`
  int last_row = -1, last_col = -1;  // the drag's last cell (a drag paints each cell once)
};

// What the views show; every control edits this and nothing else.
struct ViewState {
  int model = 0, image = 0;
  int layer = -1;  // traced layer index; -1: the last
  int head = -1;   // -1: the head fusion below
  analysis::HeadFusion fusion = analysis::HeadFusion::Mean;
  bool heads_grid = false;
  MapKind kind = MapKind::Query;
  MapQuery query;          // grid cell of the first layer, or a prefix token
  int explain_class = -1;  // the class Grad-CAM / gradient rollout explain; -1: each model's top-1
  std::string gradcam_target;   // Grad-CAM's module (state-dict path); "": each model's default
  bool gradcam_signed = false;  // Grad-CAM without the ReLU
  std::array<char, 160> gradcam_target_edit{};  // the target being typed in the sidebar
  std::string tab = "maps";    // the tab shown: an id of tab_table.h (maps, spectra, ...)
  bool tab_requested = false;  // set with tab by scripts: select it and its group next frame
  // The tab last shown in each tab group (group id -> tab id): a click on a group returns
  // to it. Ours rather than ImGui's, so the rows (tab_rows.h) and scripts agree.
  std::map<std::string, std::string> group_tabs;
  // Every analysis's declared settings (analysis_options.h): the rollout map's switches, the
  // Settings section's values for the image analyses (option_controls.h).
  session::OptionValues options;
  // Compare: each model on its own colour scale unless shared_scale; the difference
  // panel shows model difference_a minus model difference_b (workspace indices).
  bool compare = false, shared_scale = false, difference = false;
  int difference_a = 0, difference_b = 1;
  viz::OverlayStyle style;
  viz::MapNormalisation norm = viz::MapNormalisation::MinMax;
  float zoom = 1.0f, pan_x = 0.0f, pan_y = 0.0f;
  // Where the Maps tab's figure (compare view) was last drawn, in window pixels, and the
  // DPI it was rendered at: a script compares it with the export at that DPI.
  struct ShownFigure {
    int x = 0, y = 0, w = 0, h = 0;
    double dpi = 0;  // 0: no figure shown
  } shown_figure;
  int hover_row = -1, hover_col = -1;
  bool show_help = false;
  bool sidebar_scroll_end = false;  // scroll the sidebar to its end at the next frame (scripts)
  // The Maps tab shows the picture the model saw (its preprocessing's output) without the
  // map, captioned with the preprocessing.
  bool show_input = false;
  // The size sweep's list as typed (size_sweep_view.h), filled with a default for the
  // model when another model is shown or the model is loaded (again).
  std::array<char, 128> sweep_sizes{};
  int sweep_sizes_model = -1, sweep_sizes_loads = -1;  // the model (and its load) filled for
  ModelOptionsEdit model_edit;
  EditToolState edit;
};

// A model's training series (series_view.h): its checkpoints analysed on one image.
struct SeriesState {
  int model = -1, image = -1;
  std::vector<std::string> files;
  uint64_t run = 0;            // this series (Workspace::next_slot_id): its jobs' answers match it
  std::vector<int64_t> steps;  // -1 until analysed
  std::vector<std::shared_ptr<const ImageAnalysis>> analyses;
  // Tables that compare the checkpoints, per checkpoint, computed once all are analysed
  // (cka_final: CKA of each layer with the final checkpoint's); empty until then.
  std::vector<std::vector<analysis::Table>> across;
  int shown = -1;  // the checkpoint standing in for the model in every view (-1: none)
  bool loading = false;
};

// A resolution sweep of the current model on one image (size_sweep_view.h): the model at
// each input size of the list, the over_sizes statistics against the size.
struct SizeSweepState {
  int model = -1, image = -1, loads = -1;  // what it was run on (loads: the model's load)
  uint64_t run = 0;                        // as SeriesState::run
  std::vector<int64_t> sizes;              // of the run
  std::vector<std::shared_ptr<const ImageAnalysis>> analyses;  // per size; null until done
  bool running = false;
  std::string error;  // why the last sweep stopped or a size failed
};

// The Cost tab (cost_view.h): the open models' MACs against input size and a measured
// bench of one layer of each model's mechanism, both computed on the worker.
struct CostState {
  enum class Shown { Macs, Latency, Memory };
  Shown shown = Shown::Macs;
  std::string counted;  // the models the sweep counted (cost_view.cpp: models_key); "": none
  std::shared_ptr<const session::ComplexitySweep> sweep;
  bool counting = false;
  std::shared_ptr<const analysis::Table> bench;
  session::AttentionBenchSettings bench_settings;  // of `bench`
  bool benching = false;
  std::string error;  // why the last count or bench failed
};

// Recent files for File > Recent (settings_store.h keeps them between runs).
struct RecentFiles {
  std::vector<std::string> images, models;
};

// The device picker: where the models run (every open one, and those opened next), and
// the devices LibTorch sees here (runtime::available_devices), listed at start.
struct DeviceState {
  std::string current = "cpu";                                 // as --device names it
  std::vector<std::pair<std::string, std::string>> available;  // (spec, description)
  std::string dtype = "fp32";                                  // as --dtype names it
};

// What is open: the models, the images and what each model made of each image. Opening,
// closing and the compute the view asks for change it (workspace/); views read it.
struct Workspace {
  uint64_t next_slot_id = 1;  // ModelSlot::id, ImageSlot::id, SeriesState::run, ...
  std::vector<ModelSlot> models;
  std::vector<ImageSlot> images;
  std::map<std::pair<int, int>, ResultSlot> results;  // (model, image)
};

// The whole state, one struct per concern. Only the frame loop, the worker results'
// dispatcher (controller.h), the script commands and the top panels take all of it; every
// other function takes the concerns it reads or edits.
struct GuiState {
  Workspace workspace;
  RecentFiles recent;
  DeviceState device;
  CheckpointPanelState checkpoint;
  ViewState view;
  FrameView frame;  // what the map view shows this frame (map_source.h: compute_frame_view)
  SeriesState series;
  SizeSweepState sweep;
  CostState cost;
  ProjectorState projector;  // the Projector tab (projector_view.h)
  TextureCache cache;
  DialogsState dialogs;
  StatusBarState status;
  FrameRequests requests;
};

}  // namespace attnlab::gui
