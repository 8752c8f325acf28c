// The script command table; see script_commands.h.
#include "app/gui/script/script_commands.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>

#include "app/gui/projector/patch_retrieval.h"
#include "app/gui/projector/projector.h"
#include "app/gui/projector/projector_groups.h"
#include "app/gui/script/model_info.h"
#include "app/gui/script/script_runner_state.h"
#include "app/gui/views/edit_view.h"
#include "app/gui/views/figure_tabs.h"
#include "app/gui/views/menu.h"
#include "app/gui/views/series_view.h"
#include "app/gui/views/size_sweep_view.h"
#include "app/gui/workspace/model_options.h"
#include "app/gui/workspace/workspace.h"
#include "app/gui/workspace/workspace_io.h"
#include "app/session/dataset_heads.h"
#include "app/session/embedding_projection.h"
#include "app/session/figure_view_options.h"
#include "app/session/model_source.h"
#include "core/io/file_bytes.h"

namespace attnlab::gui {
namespace {

const std::vector<std::string> kOnOff = {"on", "off"};

bool is_index(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

// Ends the script with a message naming the command's line; the handler returns this.
bool fail_command(ScriptContext& x, const ScriptCommand& c, const std::string& message) {
  x.runner.failed = x.runner.done = true;
  x.runner.failure = "script line " + std::to_string(c.line) + " (" + c.name + "): " + message;
  return false;
}

// Sets the figure-view option `name` from the command's argument through the parser every
// front end shares (session/figure_view_options.h), starting from what the view shows;
// nothing on failure (the script then fails with the parser's words).
std::optional<session::FigureOptions> view_with(ScriptContext& x, const ScriptCommand& c,
                                                const char* name) {
  session::FigureOptions o;
  o.style.overlay = x.state.view.style;
  o.style.norm = x.state.view.norm;
  o.view.fusion = int(x.state.view.fusion);
  session::FigureViewParser parser(o);
  try {
    parser.set(name, c.args[0], c.name);
    return parser.finish();
  } catch (const std::invalid_argument& e) {
    fail_command(x, c, e.what());
    return std::nullopt;
  }
}

// A Choice argument listing the option's values as the options' table declares them.
ArgSpec view_choice(const char* name) {
  const session::FigureViewOption& o = session::figure_view_option(name);
  return {o.values, ArgKind::Choice, session::figure_view_choices(name)};
}

bool open_file(ScriptContext& x, FileKind kind, const std::string& path) {
  x.state.requests.open.push_back(OpenRequest{kind, path});
  x.state.status.notice.clear();
  x.state.status.notice_is_error = false;
  return true;
}

// The model or image an INDEX|NAME argument names, or -1 (the script then fails).
int find_slot(ScriptContext& x, const ScriptCommand& c, const std::string& a, bool model) {
  const GuiState& state = x.state;
  const int count = model ? int(state.workspace.models.size()) : int(state.workspace.images.size());
  int found = -1;
  if (is_index(a)) {
    found = std::stoi(a);
  } else {
    for (int i = 0; i < count; ++i) {
      const std::string name =
          model ? state.workspace.models[size_t(i)].info.name
                : std::filesystem::path(state.workspace.images[size_t(i)].path).stem().string();
      if (name == a ||
          (!model && std::filesystem::path(state.workspace.images[size_t(i)].path).filename() == a))
        found = i;
    }
  }
  if (found >= 0 && found < count) return found;
  fail_command(x, c,
               "no " + std::string(model ? "model" : "image") + " '" + a + "' (" +
                   std::to_string(count) + " open)");
  return -1;
}

bool select(ScriptContext& x, const ScriptCommand& c, bool model) {
  const int found = find_slot(x, c, c.args[0], model);
  if (found < 0) return false;
  (model ? x.state.view.model : x.state.view.image) = found;
  return true;
}

// Asks the frame to close the model or image (by id: it closes at the end of the frame).
bool close_slot(ScriptContext& x, const ScriptCommand& c, bool model) {
  const int found = find_slot(x, c, c.args[0], model);
  if (found < 0) return false;
  if (model)
    x.state.requests.close_models.push_back(x.state.workspace.models[size_t(found)].id);
  else
    x.state.requests.close_images.push_back(x.state.workspace.images[size_t(found)].id);
  return true;
}

// Loads model c.args[0] again with `change` applied to its options (img-size, class-names):
// as the sidebar's Apply; its error, if any, shows after the next wait-idle.
template <typename Change>
bool change_model(ScriptContext& x, const ScriptCommand& c, Change change) {
  const int m = find_slot(x, c, c.args[0], true);
  if (m < 0) return false;
  const ModelSlot& slot = x.state.workspace.models[size_t(m)];
  if (slot.status != LoadStatus::Ready || slot.reloading)
    return fail_command(x, c, "model " + c.args[0] + " is not loaded yet (wait-idle first)");
  ModelOptions options = slot.options;
  change(options);
  x.state.requests.model_options.emplace_back(slot.id, options);
  x.state.status.notice.clear();
  x.state.status.notice_is_error = false;
  return true;
}

bool export_view(ScriptContext& x, const ScriptCommand& c, bool panel) {
  std::string message;
  const bool ok = panel ? export_panel(x.state.workspace, x.state.view, x.state.series,
                                       x.state.cost, c.args[0], &message)
                        : export_stats(x.state.workspace, x.state.view, c.args[0], &message);
  std::fprintf(stderr, "attnlab: script: %s\n", message.c_str());
  return ok ? true : fail_command(x, c, message);
}

// "R,G,B" (0..255 each) as the brush's colour.
bool set_edit_color(ScriptContext& x, const ScriptCommand& c) {
  int r = -1, g = -1, b = -1;
  char end = 0;
  if (std::sscanf(c.args[0].c_str(), "%d,%d,%d%c", &r, &g, &b, &end) != 3 || r < 0 || r > 255 ||
      g < 0 || g > 255 || b < 0 || b > 255)
    return fail_command(x, c, "'" + c.args[0] + "' is not R,G,B with each in 0..255");
  x.state.view.edit.color = {uint8_t(r), uint8_t(g), uint8_t(b)};
  return true;
}

// The brush on cell (ROW, COL) of the current model's first-layer grid, as a press or drag.
bool paint_cell(ScriptContext& x, const ScriptCommand& c, bool new_stroke) {
  if (!x.state.view.edit.on) return fail_command(x, c, "editing is off (edit on first)");
  const ResultSlot* r = result_of(x.state.workspace, x.state.view.model, x.state.view.image);
  if (!r || !r->analysis)
    return fail_command(x, c, "no analysis to paint on yet (wait-idle first)");
  request_paint(x.state.workspace, x.state.view, std::stoi(c.args[0]), std::stoi(c.args[1]),
                new_stroke);
  return false;  // acted on at the next frame's start
}

// A real number argument (projection coordinates, a perplexity); nullopt: the script fails.
std::optional<float> real_arg(ScriptContext& x, const ScriptCommand& c, size_t k) {
  try {
    size_t used = 0;
    const float v = std::stof(c.args[k], &used);
    if (used == c.args[k].size() && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  fail_command(x, c, "'" + c.args[k] + "' is not a number");
  return std::nullopt;
}

// The Projector's point INDEX of a shown projection, or -1 (the script then fails).
int projector_point(ScriptContext& x, const ScriptCommand& c, const std::string& a) {
  const ProjectorState& p = x.state.projector;
  if (!p.main.data || p.main.xy.empty()) {
    fail_command(x, c, "the Projector shows no projection (projector DIR, then wait-idle)");
    return -1;
  }
  if (!is_index(a) || a.size() > 9 || std::stoll(a) >= p.main.data->n) {
    fail_command(x, c, "no point " + a + " (" + std::to_string(p.main.data->n) + " points)");
    return -1;
  }
  return std::stoi(a);
}

bool expect_error(ScriptContext& x, const ScriptCommand& c, bool want) {
  const StatusBarState& status = x.state.status;
  const bool error = status.notice_is_error && !status.notice.empty();
  if (error == want) return true;
  return fail_command(
      x, c,
      error ? "unexpected error: " + status.notice : "expected an error message, there is none");
}

// clang-format off
const std::vector<ScriptCommandSpec> kCommands = {
  {{"open-image", {{"PATH", ArgKind::Path}}, "open an image"},
   [](ScriptContext& x, const ScriptCommand& c) { return open_file(x, FileKind::Image, c.args[0]); }},
  {{"open-model", {{"PATH", ArgKind::Path}}, "open a model (checkpoint or config .json)"},
   [](ScriptContext& x, const ScriptCommand& c) { return open_file(x, FileKind::Model, c.args[0]); }},
  {{"open-dialog", {{"image|model", ArgKind::Choice, {"image", "model"}}},
    "File > Open: the desktop's chooser, or the in-app list"},
   [](ScriptContext& x, const ScriptCommand& c) {
     request_open_dialog(x.state.workspace, x.state.view, x.state.checkpoint, x.state.dialogs, c.args[0] == "image" ? FileKind::Image : FileKind::Model);
     return true;
   }},
  {{"close-model", {{"INDEX|NAME", ArgKind::IndexOrName}}, "close a model (as its × in the list), even while its jobs run"},
   [](ScriptContext& x, const ScriptCommand& c) { return close_slot(x, c, true); }},
  {{"close-image", {{"INDEX|NAME", ArgKind::IndexOrName}}, "close an image (as its × in the list), even while its jobs run"},
   [](ScriptContext& x, const ScriptCommand& c) { return close_slot(x, c, false); }},
  {{"select-image", {{"INDEX|NAME", ArgKind::IndexOrName}}, "show this image"},
   [](ScriptContext& x, const ScriptCommand& c) { return select(x, c, false); }},
  {{"select-model", {{"INDEX|NAME", ArgKind::IndexOrName}}, "show this model"},
   [](ScriptContext& x, const ScriptCommand& c) { return select(x, c, true); }},
  {{"layer", {{"N", ArgKind::Count}}, "show traced layer N"},
   [](ScriptContext& x, const ScriptCommand& c) { x.state.view.layer = std::stoi(c.args[0]); return true; }},
  {{"head", {{"N", ArgKind::Count}}, "show head N"},
   [](ScriptContext& x, const ScriptCommand& c) { x.state.view.head = std::stoi(c.args[0]); return true; }},
  {{"heads-grid", {{"on|off", ArgKind::Choice, kOnOff}}, "every head side by side"},
   [](ScriptContext& x, const ScriptCommand& c) { x.state.view.heads_grid = c.args[0] == "on"; return true; }},
  {{"fusion", {view_choice("fusion")}, "the head fusion shown"},
   [](ScriptContext& x, const ScriptCommand& c) {
     const auto o = view_with(x, c, "fusion");
     if (!o) return false;
     x.state.view.fusion = analysis::HeadFusion(o->view.fusion);  // mean, max, min: 0, 1, 2
     x.state.view.head = -1;  // a fusion of the heads, not one head
     return true;
   }},
  {{"rollout-options", {{"mean|max|min", ArgKind::Choice, {"mean", "max", "min"}},
                        {"RESIDUAL", ArgKind::Fraction},
                        {"DISCARD", ArgKind::Fraction},
                        {"on|off", ArgKind::Choice, kOnOff}},
    "the rollout's head fusion, residual, discard ratio (below 1) and row renormalisation"},
   [](ScriptContext& x, const ScriptCommand& c) {
     session::OptionValues& o = x.state.view.options;
     try {
       o.set("fusion", c.args[0]);
       o.set("residual", std::stod(c.args[1]));
       o.set("discard", std::stod(c.args[2]));
       o.set("no-renormalize", c.args[3] == "off");
     } catch (const std::invalid_argument& e) {
       return fail_command(x, c, e.what());
     }
     return true;
   }},
  {{"map", {{"query|cls|rollout|gradcam|gradrollout|similarity", ArgKind::Choice,
             {"query", "cls", "rollout", "gradcam", "gradrollout", "similarity"}}},
    "the map kind shown"},
   [](ScriptContext& x, const ScriptCommand& c) {
     const std::string& a = c.args[0];
     x.state.view.kind = a == "query"         ? MapKind::Query
                         : a == "cls"         ? MapKind::Cls
                         : a == "rollout"     ? MapKind::Rollout
                         : a == "gradcam"     ? MapKind::GradCam
                         : a == "gradrollout" ? MapKind::GradRollout
                                              : MapKind::Similarity;
     return true;
   }},
  {{"facet", {{"tokens|queries|keys|values", ArgKind::Choice,
               {"tokens", "queries", "keys", "values"}}},
    "what the similarity map compares (the option --similarity-facet)"},
   [](ScriptContext& x, const ScriptCommand& c) {
     x.state.view.options.set("similarity-facet", c.args[0]);
     return true;
   }},
  {{"class", {{"top1|INDEX", ArgKind::Name}}, "the class Grad-CAM and gradient rollout explain"},
   [](ScriptContext& x, const ScriptCommand& c) {
     const std::string& a = c.args[0];
     if (a != "top1" && a.find_first_not_of("0123456789") != std::string::npos)
       return fail_command(x, c, "class wants top1 or a class index, not '" + a + "'");
     x.state.view.explain_class = a == "top1" ? -1 : std::stoi(a);
     return true;
   }},
  {{"gradcam-target", {{"PATH|default", ArgKind::Name}}, "Grad-CAM's module (state-dict path)"},
   [](ScriptContext& x, const ScriptCommand& c) {
     ViewState& v = x.state.view;
     v.gradcam_target = c.args[0] == "default" ? "" : c.args[0];
     std::snprintf(v.gradcam_target_edit.data(), v.gradcam_target_edit.size(), "%s",
                   v.gradcam_target.c_str());
     return true;
   }},
  {{"click-token", {{"ROW", ArgKind::Count}, {"COL", ArgKind::Count}}, "click a grid token: the query"},
   [](ScriptContext& x, const ScriptCommand& c) {
     set_query_cell(x.state.workspace, x.state.view, std::stoi(c.args[0]), std::stoi(c.args[1]));
     return true;
   }},
  {{"click-prefix", {{"NAME", ArgKind::Name}}, "make a prefix token (cls) the query"},
   [](ScriptContext& x, const ScriptCommand& c) {
     x.state.view.query = MapQuery{};
     x.state.view.query.prefix = c.args[0];
     return true;
   }},
  {{"tab", {{"NAME", ArgKind::Tab}}, "select a tab (maps, an analysis's tab, predictions, ...)"},
   [](ScriptContext& x, const ScriptCommand& c) {
     x.state.view.tab = c.args[0];
     x.state.view.tab_requested = true;
     return true;
   }},
  {{"layout", {{"single|compare", ArgKind::Choice, {"single", "compare"}}}, "one model or all side by side"},
   [](ScriptContext& x, const ScriptCommand& c) { x.state.view.compare = c.args[0] == "compare"; return true; }},
  {{"shared-scale", {{"on|off", ArgKind::Choice, kOnOff}}, "one colour scale for the compared maps"},
   [](ScriptContext& x, const ScriptCommand& c) { x.state.view.shared_scale = c.args[0] == "on"; return true; }},
  {{"difference", {{"on|off", ArgKind::Choice, kOnOff}}, "the difference of two compared maps"},
   [](ScriptContext& x, const ScriptCommand& c) { x.state.view.difference = c.args[0] == "on"; return true; }},
  {{"difference-of", {{"A", ArgKind::Count}, {"B", ArgKind::Count}}, "the compared difference is model A minus model B"},
   [](ScriptContext& x, const ScriptCommand& c) {
     x.state.view.difference_a = std::stoi(c.args[0]);
     x.state.view.difference_b = std::stoi(c.args[1]);
     x.state.view.difference = true;
     return true;
   }},
  {{"edit", {{"on|off", ArgKind::Choice, kOnOff}}, "what-if editing: presses on the map paint (on) or pick the query (off)"},
   [](ScriptContext& x, const ScriptCommand& c) { x.state.view.edit.on = c.args[0] == "on"; return true; }},
  {{"edit-tool", {{"occlude|blur|paint|paste", ArgKind::Choice, {"occlude", "blur", "paint", "paste"}}}, "the brush's edit"},
   [](ScriptContext& x, const ScriptCommand& c) {
     using K = image::EditOp::Kind;
     x.state.view.edit.tool = c.args[0] == "blur" ? K::Blur : c.args[0] == "paint" ? K::Paint
                              : c.args[0] == "paste" ? K::Paste : K::Occlude;
     return true;
   }},
  {{"brush", {{"N", ArgKind::Positive}}, "the brush's side, in tokens"},
   [](ScriptContext& x, const ScriptCommand& c) { x.state.view.edit.brush = std::stoi(c.args[0]); return true; }},
  {{"edit-color", {{"R,G,B", ArgKind::Name}}, "the colour occlude and paint use (0..255 each)"},
   [](ScriptContext& x, const ScriptCommand& c) { return set_edit_color(x, c); }},
  {{"paste-from", {{"INDEX|NAME", ArgKind::IndexOrName}}, "the open image paste takes its tokens from"},
   [](ScriptContext& x, const ScriptCommand& c) {
     const int found = find_slot(x, c, c.args[0], false);
     if (found < 0) return false;
     x.state.view.edit.paste_image = found;
     return true;
   }},
  {{"paint", {{"ROW", ArgKind::Count}, {"COL", ArgKind::Count}}, "press the brush on a grid token (a new stroke; edit on)"},
   [](ScriptContext& x, const ScriptCommand& c) { return paint_cell(x, c, true); }},
  {{"paint-drag", {{"ROW", ArgKind::Count}, {"COL", ArgKind::Count}}, "drag the brush on to a grid token (the same stroke)"},
   [](ScriptContext& x, const ScriptCommand& c) { return paint_cell(x, c, false); }},
  {{"undo", {}, "undo the current image's last edit stroke"},
   [](ScriptContext& x, const ScriptCommand&) { x.state.view.edit.undo = true; return false; }},
  {{"clear-edits", {}, "remove every edit of the current image"},
   [](ScriptContext& x, const ScriptCommand&) { x.state.view.edit.clear = true; return false; }},
  {{"edit-difference", {{"on|off", ArgKind::Choice, kOnOff}}, "the Maps tab shows edited − original"},
   [](ScriptContext& x, const ScriptCommand& c) { x.state.view.edit.difference = c.args[0] == "on"; return true; }},
  {{"expect-edits", {{"TEXT|none", ArgKind::Name}}, "the current image's edits are these (as --edit writes them)"},
   [](ScriptContext& x, const ScriptCommand& c) {
     const std::string have = current_edits_text(x.state.workspace, x.state.view), want = c.args[0] == "none" ? "" : c.args[0];
     return have == want ? true : fail_command(x, c, "the image's edits are '" + have + "', not '" + want + "'");
   }},
  {{"save-workspace", {{"PATH", ArgKind::Path}}, "File > Save workspace: models, images and their edits"},
   [](ScriptContext& x, const ScriptCommand& c) {
     std::string message;
     const bool ok = save_workspace(x.state.workspace, x.state.view, c.args[0], &message);
     std::fprintf(stderr, "attnlab: script: %s\n", message.c_str());
     return ok ? true : fail_command(x, c, message);
   }},
  {{"open-workspace", {{"PATH", ArgKind::Path}}, "open a saved workspace (.attnlab)"},
   [](ScriptContext& x, const ScriptCommand& c) { return open_file(x, FileKind::Workspace, c.args[0]); }},
  {{"colormap", {{"NAME", ArgKind::Name}}, "the maps' colormap"},
   [](ScriptContext& x, const ScriptCommand& c) {
     const auto o = view_with(x, c, "colormap");
     if (o) x.state.view.style.cmap = o->style.overlay.cmap;
     return o.has_value();
   }},
  {{"alpha", {{"X", ArgKind::Fraction}}, "the overlay's opacity (0..1)"},
   [](ScriptContext& x, const ScriptCommand& c) {
     const auto o = view_with(x, c, "alpha");
     if (o) x.state.view.style.alpha = o->style.overlay.alpha;
     return o.has_value();
   }},
  {{"upsample", {view_choice("upsample")}, "how token maps are upsampled"},
   [](ScriptContext& x, const ScriptCommand& c) {
     const auto o = view_with(x, c, "upsample");
     if (o) x.state.view.style.upsample = o->style.overlay.upsample;
     return o.has_value();
   }},
  {{"norm", {view_choice("norm")}, "each map's [min, max] or [0, max]"},
   [](ScriptContext& x, const ScriptCommand& c) {
     const auto o = view_with(x, c, "norm");
     if (o) x.state.view.norm = o->style.norm;
     return o.has_value();
   }},
  {{"copy-command", {{"PATH", ArgKind::Path}},
    "File > Copy settings as command, and write the command to PATH"},
   [](ScriptContext& x, const ScriptCommand& c) {
     x.state.requests.copy_command = true;
     x.state.requests.copy_command_to = c.args[0];
     return false;  // copied at the start of the next frame
   }},
  {{"export-panel", {{"PATH", ArgKind::Path, {}, {".png", ".svg", ".pdf"}}},
    "write the tab's figure (.png, .svg or .pdf: the extension picks the format)"},
   [](ScriptContext& x, const ScriptCommand& c) { return export_view(x, c, true); }},
  {{"sidebar-end", {}, "scroll the sidebar to its end (its last sections in a screenshot)"},
   [](ScriptContext& x, const ScriptCommand&) {
     x.state.view.sidebar_scroll_end = true;
     return true;
   }},
  {{"mouse-away", {}, "move the mouse out of the window (no hover, no tooltip in screenshots)"},
   [](ScriptContext& x, const ScriptCommand&) {
     x.runner.mouse_away = true;  // the frame loop moves the pointer
     return true;
   }},
  {{"mouse", {{"X", ArgKind::Count}, {"Y", ArgKind::Count}},
    "move the mouse to window pixel (X, Y): hover there"},
   [](ScriptContext& x, const ScriptCommand& c) {
     x.runner.mouse_x = std::stoi(c.args[0]);
     x.runner.mouse_y = std::stoi(c.args[1]);
     return true;
   }},
  {{"screenshot-figure", {{"PATH", ArgKind::Path, {}, {".png"}}},
    "save the region of the view's figure (compare view) after this frame"},
   [](ScriptContext& x, const ScriptCommand& c) {
     x.runner.screenshot = c.args[0];
     x.runner.screenshot_figure = true;
     return false;  // taken after this frame is drawn
   }},
  {{"export-screen-size", {{"PATH", ArgKind::Path, {}, {".png"}}},
    "write the tab's figure as a PNG at the resolution the view draws it (to compare with screenshot-figure)"},
   [](ScriptContext& x, const ScriptCommand& c) {
     const double dpi = x.state.view.shown_figure.dpi;
     if (dpi <= 0) return fail_command(x, c, "the view shows no figure");
     std::string message;
     const bool ok = export_panel(x.state.workspace, x.state.view, x.state.series, x.state.cost, c.args[0], &message, dpi);
     std::fprintf(stderr, "attnlab: script: %s\n", message.c_str());
     return ok ? true : fail_command(x, c, message);
   }},
  {{"export-stats", {{"DIR", ArgKind::Path}}, "write the statistics (CSV, JSON, LaTeX) into DIR"},
   [](ScriptContext& x, const ScriptCommand& c) { return export_view(x, c, false); }},
  {{"load-series", {}, "analyse the current model's training series"},
   [](ScriptContext& x, const ScriptCommand& c) {
     if (series_files_of(x.state.workspace, x.state.view.model).empty())
       return fail_command(x, c, "the current model has no checkpoint series beside it");
     x.runner.series_requested = true;
     return true;
   }},
  {{"sweep-sizes", {{"S1,S2,...", ArgKind::Name}},
    "analyse the current image with the current model at these input sizes (the sidebar's sweep)"},
   [](ScriptContext& x, const ScriptCommand& c) {
     try {
       parse_sweep_sizes(c.args[0]);
     } catch (const std::exception& e) {
       return fail_command(x, c, e.what());
     }
     if (x.state.workspace.models.empty() || x.state.workspace.images.empty())
       return fail_command(x, c, "open a model and an image first");
     ViewState& v = x.state.view;
     v.sweep_sizes_model = v.model;  // the typed list stays for this model and load
     v.sweep_sizes_loads = x.state.workspace.models[size_t(v.model)].loads;
     v.sweep_sizes.fill('\0');
     c.args[0].copy(v.sweep_sizes.data(), v.sweep_sizes.size() - 1);
     x.state.requests.sweep_sizes = true;
     return true;
   }},
  {{"cost", {{"macs|latency|memory", ArgKind::Choice, {"macs", "latency", "memory"}}},
    "what the Cost tab shows"},
   [](ScriptContext& x, const ScriptCommand& c) {
     const std::string& part = c.args[0];
     x.state.cost.shown = part == "macs"      ? CostState::Shown::Macs
                          : part == "latency" ? CostState::Shown::Latency
                                              : CostState::Shown::Memory;
     return true;
   }},
  {{"bench", {}, "measure the open models' mechanisms against softmax (the Cost tab's Measure)"},
   [](ScriptContext& x, const ScriptCommand&) {
     x.state.requests.run_bench = true;
     return true;
   }},
  {{"load-as", {{"PRESET", ArgKind::Name}}, "load the current, failed model again as this preset"},
   [](ScriptContext& x, const ScriptCommand& c) {
     if (x.state.workspace.models.empty()) return fail_command(x, c, "no model is open");
     const int m = std::clamp(x.state.view.model, 0, int(x.state.workspace.models.size()) - 1);
     x.state.requests.retry_model = {x.state.workspace.models[size_t(m)].id, c.args[0]};
     x.state.status.notice.clear();
     x.state.status.notice_is_error = false;
     return true;
   }},
  {{"img-size", {{"MODEL", ArgKind::IndexOrName}, {"H", ArgKind::Positive}, {"W", ArgKind::Positive}},
    "run a model at input size H x W (as --img-size; an error leaves it as it was)"},
   [](ScriptContext& x, const ScriptCommand& c) {
     const std::vector<int64_t> hw = {std::stoll(c.args[1]), std::stoll(c.args[2])};
     return change_model(x, c, [&](ModelOptions& o) { o.img_size = hw; });
   }},
  {{"class-names", {{"MODEL", ArgKind::IndexOrName}, {"FILE|none", ArgKind::Path}},
    "a model's class names from FILE (as --class-names); none: its own"},
   [](ScriptContext& x, const ScriptCommand& c) {
     const std::string file = c.args[1] == "none" ? "" : c.args[1];
     return change_model(x, c, [&](ModelOptions& o) { o.class_names_path = file; });
   }},
  {{"prompts", {{"MODEL", ArgKind::IndexOrName}, {"TEXT|TEXT...|none", ArgKind::Path}},
    "a whole CLIP's text prompts, '|' between them (as --text): its classes, the Prompts tab; none: off"},
   [](ScriptContext& x, const ScriptCommand& c) {
     const std::vector<std::string> prompts =
         c.args[1] == "none" ? std::vector<std::string>{} : session::split_prompts(c.args[1], '|');
     return change_model(x, c, [&](ModelOptions& o) {
       o.prompts = prompts;
       if (!prompts.empty()) o.class_names_path.clear();
     });
   }},
  {{"merge", {{"MODEL", ArgKind::IndexOrName}, {"R|none", ArgKind::Name}},
    "token merging (ToMe) on a ViT-family model, R tokens merged away per block (as --merge); none: off"},
   [](ScriptContext& x, const ScriptCommand& c) {
     int64_t r = -1;
     if (c.args[1] != "none") {
       char* stop = nullptr;
       r = std::strtoll(c.args[1].c_str(), &stop, 10);
       if (*stop != '\0' || r < 0) return fail_command(x, c, "R is an integer >= 0 or none");
     }
     return change_model(x, c, [&](ModelOptions& o) { o.merge = r; });
   }},
  {{"show-input", {{"on|off", ArgKind::Choice, kOnOff}}, "the Maps tab shows the picture the model saw"},
   [](ScriptContext& x, const ScriptCommand& c) { x.state.view.show_input = c.args[0] == "on"; return true; }},
  {{"model-info", {{"PATH", ArgKind::Path, {}, {".json"}}},
    "write the current model's details and top-5 as JSON (recognition, input size, names)"},
   [](ScriptContext& x, const ScriptCommand& c) {
     if (x.state.workspace.models.empty()) return fail_command(x, c, "no model is open");
     io::write_file_atomic(c.args[0], model_info_json(x.state.workspace, x.state.view, x.state.sweep, x.state.view.model).dump(2) + "\n");
     return true;
   }},
  {{"checkpoint", {{"INDEX", ArgKind::Count}}, "put checkpoint INDEX of the series in its model's place"},
   [](ScriptContext& x, const ScriptCommand& c) {
     const int k = std::stoi(c.args[0]);
     const SeriesState& series = x.state.series;
     if (series.files.empty() || size_t(k) >= series.analyses.size() || !series.analyses[size_t(k)])
       return fail_command(x, c, "no analysed checkpoint " + c.args[0] + " (load-series, then wait-idle)");
     show_series_checkpoint(x.state.workspace, x.state.view, x.state.series, k);
     return true;
   }},
  {{"projector", {{"DIR", ArgKind::Path}}, "the Projector tab: open an `attnlab embed` folder (projected by the method picked, PCA at first)"},
   [](ScriptContext& x, const ScriptCommand& c) {
     open_projector_folder(x.state.projector, c.args[0]);
     x.state.view.tab = "projector";
     x.state.view.tab_requested = true;
     return false;  // read from the next frame on
   }},
  {{"projector-compare", {{"DIR|none", ArgKind::Path}},
    "open a second `attnlab embed` folder of the same images (another model) as the Projector's comparison plot; none: close it"},
   [](ScriptContext& x, const ScriptCommand& c) {
     open_projector_compare(x.state.projector, c.args[0] == "none" ? "" : c.args[0]);
     x.state.view.tab = "projector";
     x.state.view.tab_requested = true;
     return false;  // read (and checked against the first folder's images) from the next frame on
   }},
  {{"projector-method", {{"pca|tsne|umap", ArgKind::Choice, {"pca", "tsne", "umap"}}}, "project the Projector's embeddings (and the comparison's) by this method (on the worker)"},
   [](ScriptContext& x, const ScriptCommand& c) {
     ProjectorState& p = x.state.projector;
     if (p.main.dir.empty()) return fail_command(x, c, "no folder is open in the Projector (projector DIR first)");
     p.method = session::parse_projection_method(c.args[0]);
     request_projection(p);
     return false;
   }},
  {{"projector-options", {{"PERPLEXITY", ArgKind::Name}, {"NEIGHBOURS", ArgKind::Positive}, {"SEED", ArgKind::Count}},
    "the Projector's t-SNE perplexity, UMAP n_neighbors and seed (for the next projector-method)"},
   [](ScriptContext& x, const ScriptCommand& c) {
     const auto perplexity = real_arg(x, c, 0);
     if (!perplexity) return false;
     if (*perplexity < 1.0f) return fail_command(x, c, "PERPLEXITY must be at least 1");
     x.state.projector.perplexity = *perplexity;
     x.state.projector.n_neighbors = std::max(2, std::stoi(c.args[1]));
     x.state.projector.seed = std::stoi(c.args[2]);
     return true;
   }},
  {{"projector-color", {{"label|prediction|correct|confidence|head-entropy|head-rank", ArgKind::Choice, {"label", "prediction", "correct", "confidence", "head-entropy", "head-rank"}},
                        {"LAYER", ArgKind::Count, {}, {}, "0"}, {"HEAD", ArgKind::Count, {}, {}, "0"}},
    "what the Projector's points are coloured by; head-entropy, head-rank: head HEAD of layer LAYER's entropy or effective output rank (a folder of `attnlab embed --heads`)"},
   [](ScriptContext& x, const ScriptCommand& c) {
     const std::string& a = c.args[0];
     ProjectorState& p = x.state.projector;
     if (a == "head-entropy" || a == "head-rank") {
       const EmbedFolder* d = p.main.data.get();
       if (!d) return fail_command(x, c, "no folder is open in the Projector (projector DIR, then wait-idle)");
       if (!d->has_heads())
         return fail_command(x, c, d->dir + " has no head statistics (attnlab embed --heads)" +
                                       (d->heads_error.empty() ? "" : ": " + d->heads_error));
       const int layer = std::stoi(c.args[1]), head = std::stoi(c.args[2]);
       if (layer >= d->head_layers)
         return fail_command(x, c, "LAYER must be below " + std::to_string(d->head_layers));
       if (head >= d->head_info[size_t(layer)].heads)
         return fail_command(x, c, "HEAD must be below " + std::to_string(d->head_info[size_t(layer)].heads) +
                                       " (the heads of layer " + std::to_string(layer) + ")");
       if (a == "head-rank" && !d->has_head_rank())
         return fail_command(x, c, d->dir + " has no " + session::kHeadRankNpy + " (embedded before it was written: embed --heads again)");
       p.head_layer = layer;
       p.head_index = head;
       p.colour = a == "head-rank" ? ProjectorColour::HeadRank : ProjectorColour::HeadEntropy;
       return true;
     }
     p.colour = a == "label" ? ProjectorColour::Label : a == "prediction" ? ProjectorColour::Prediction
                : a == "correct" ? ProjectorColour::Correct : ProjectorColour::Confidence;
     return true;
   }},
  {{"projector-hover", {{"INDEX|none", ArgKind::Name}}, "hover the Projector's point INDEX (its tooltip and thumbnail); none: stop"},
   [](ScriptContext& x, const ScriptCommand& c) {
     if (c.args[0] == "none") { x.state.projector.script_hover = -1; return true; }
     const int i = projector_point(x, c, c.args[0]);
     if (i < 0) return false;
     x.state.projector.script_hover = i;
     return false;  // drawn (and its thumbnail asked for) from the next frame
   }},
  {{"projector-click", {{"INDEX", ArgKind::Count}}, "click the Projector's point INDEX: open its image in the workspace"},
   [](ScriptContext& x, const ScriptCommand& c) {
     const int i = projector_point(x, c, c.args[0]);
     if (i < 0) return false;
     if (!open_point(x.state.projector, i, x.state.requests, x.state.status))
       return fail_command(x, c, x.state.status.notice);
     return false;  // opened at the next frame's start
   }},
  {{"projector-select", {{"X0", ArgKind::Name}, {"Y0", ArgKind::Name}, {"X1", ArgKind::Name}, {"Y1", ArgKind::Name}},
    "select the Projector's points in this box (projection coordinates): the group against the rest"},
   [](ScriptContext& x, const ScriptCommand& c) {
     if (projector_point(x, c, "0") < 0) return false;
     float v[4];
     for (size_t k = 0; k < 4; ++k) {
       const auto r = real_arg(x, c, k);
       if (!r) return false;
       v[k] = *r;
     }
     select_box(x.state.projector, v[0], v[1], v[2], v[3]);
     return true;
   }},
  {{"projector-group-maps", {},
    "the mean attention maps of the Projector's selection and of the rest (each at most 64 images) with the workspace's model, on the worker"},
   [](ScriptContext& x, const ScriptCommand& c) {
     std::string error;
     if (!request_group_maps(x.state.projector, x.state.workspace, x.state.view, &error))
       return fail_command(x, c, error);
     return false;  // computed from the next frame on (wait-idle)
   }},
  {{"projector-retrieve", {{"Y", ArgKind::Count}, {"X", ArgKind::Count}, {"K", ArgKind::Positive, {}, {}, "16"}},
    "make cell (Y, X) of the current image the query and find the K patches of the Projector's tokens folder most similar to it (on the worker); a refusal is an error message"},
   [](ScriptContext& x, const ScriptCommand& c) {
     ProjectorState& p = x.state.projector;
     set_query_cell(x.state.workspace, x.state.view, std::stoi(c.args[0]), std::stoi(c.args[1]));
     p.retrieval.k = std::stoi(c.args[2]);
     std::string error;
     if (!request_patch_retrieval(p, x.state.workspace, x.state.view, &error)) {
       x.state.status.notice = "projector: " + error;  // said, as the button says it (expect-error)
       x.state.status.notice_is_error = true;
       return true;
     }
     x.state.status.notice.clear();
     x.state.status.notice_is_error = false;
     return false;  // searched from the next frame on (wait-idle)
   }},
  {{"projector-open-match", {{"PLACE", ArgKind::Positive}},
    "click match PLACE (1 = the best) of the Projector's patch retrieval: its image opens in the workspace, its patch the query"},
   [](ScriptContext& x, const ScriptCommand& c) {
     const int place = std::stoi(c.args[0]);
     if (place > int(x.state.projector.retrieval.matches.size()))
       return fail_command(x, c, "no match " + c.args[0] + " (" + std::to_string(x.state.projector.retrieval.matches.size()) +
                                     " shown: projector-retrieve, then wait-idle)");
     if (!open_retrieval_match(x.state.projector, place - 1, x.state.view, x.state.requests, x.state.status))
       return fail_command(x, c, x.state.status.notice);
     return false;  // opened at the next frame's start
   }},
  {{"projector-info", {{"PATH", ArgKind::Path, {}, {".json"}}},
    "write the Projector's state as JSON (points, projection, hovered, opened, selection, the comparison plot, the patch retrieval, the workspace's images)"},
   [](ScriptContext& x, const ScriptCommand& c) {
     io::write_file_atomic(c.args[0], projector_info(x.state.projector, x.state.workspace, x.state.view).dump(2) + "\n");
     return true;
   }},
  {{"screenshot", {{"PATH", ArgKind::Path, {}, {".png"}}}, "save the window after this frame"},
   [](ScriptContext& x, const ScriptCommand& c) {
     x.runner.screenshot = c.args[0];
     return false;  // taken after this frame is drawn
   }},
  {{"wait-idle", {{"SECONDS", ArgKind::Seconds, {}, {}, "60"}}, "wait until the workers are idle"},
   [](ScriptContext& x, const ScriptCommand& c) {
     x.runner.waiting_idle = true;
     x.runner.wait_started = x.now;
     x.runner.idle_deadline = x.now + x.runner.wait_scale * std::stod(c.args[0]);
     return false;
   }},
  {{"wait-job", {{"TEXT", ArgKind::Name}, {"SECONDS", ArgKind::Seconds, {}, {}, "60"}},
    "wait until a compute job whose label has TEXT runs (then cancel stops it mid-way)"},
   [](ScriptContext& x, const ScriptCommand& c) {
     x.runner.waiting_job = c.args[0];
     x.runner.wait_started = x.now;
     x.runner.job_deadline = x.now + x.runner.wait_scale * std::stod(c.args[1]);
     return false;
   }},
  {{"cancel", {}, "the status bar's Cancel: stop the running jobs and drop the queued ones"},
   [](ScriptContext& x, const ScriptCommand&) {
     x.state.requests.cancel_jobs = true;
     return false;  // acted on at the next frame's start
   }},
  {{"reanalyse", {}, "the status bar's Analyse again: the current image's failed or cancelled analyses run again"},
   [](ScriptContext& x, const ScriptCommand&) {
     x.state.requests.reanalyse = true;
     return false;
   }},
  {{"dtype", {{"T", ArgKind::Name}},
    "the precision picker: run every model's forward at T (fp32, bf16, fp16); a precision "
    "this LibTorch cannot run fails each model's load with the reason"},
   [](ScriptContext& x, const ScriptCommand& c) {
     if (c.args[0] != "fp32" && c.args[0] != "bf16" && c.args[0] != "fp16") {
       x.state.status.notice = "dtype " + c.args[0] + " is not one of fp32, bf16, fp16";
       x.state.status.notice_is_error = true;
       return true;
     }
     if (c.args[0] != x.state.device.dtype) x.state.requests.dtype = c.args[0];
     return false;  // acted on at the next frame's start
   }},
  {{"device", {{"SPEC", ArgKind::Name}},
    "the device picker: run every model on SPEC (cpu, cuda:N); one not here is an error message"},
   [](ScriptContext& x, const ScriptCommand& c) {
     const DeviceState& d = x.state.device;
     std::string listed;
     for (const auto& [spec, description] : d.available) {
       if (spec == c.args[0]) {
         if (spec != d.current) x.state.requests.device = spec;
         x.state.status.notice.clear();
         x.state.status.notice_is_error = false;
         return false;  // acted on at the next frame's start
       }
       listed += (listed.empty() ? "" : ", ") + spec;
     }
     x.state.status.notice = "device " + c.args[0] + " is not available here (devices: " + listed + ")";
     x.state.status.notice_is_error = true;
     return true;
   }},
  {{"frames", {{"N", ArgKind::Positive}}, "draw N frames"},
   [](ScriptContext& x, const ScriptCommand& c) {
     x.runner.frames_left = std::stoi(c.args[0]);
     return false;
   }},
  {{"expect-error", {}, "the last open produced an error message"},
   [](ScriptContext& x, const ScriptCommand& c) { return expect_error(x, c, true); }},
  {{"expect-no-error", {}, "no error message is shown"},
   [](ScriptContext& x, const ScriptCommand& c) { return expect_error(x, c, false); }},
  {{"expect-busy", {}, "a job is running now: what follows happens while it runs"},
   [](ScriptContext& x, const ScriptCommand& c) {
     return x.idle ? fail_command(x, c, "expected a job to be running, but everything is idle") : true;
   }},
  {{"expect-answered", {}, "the current model's maps answer the current query"},
   [](ScriptContext& x, const ScriptCommand& c) {
     const ViewState& v = x.state.view;
     const ResultSlot* res = result_of(x.state.workspace, v.model, v.image);
     const MapQuery q = wanted_query(x.state.workspace, x.state.view, v.model);
     if (!res || !res->maps || res->maps_key != maps_key(x.state.view, q))
       return fail_command(x, c, "the maps of query " + q.tag() + " have not arrived");
     return true;
   }},
  {{"quit", {}, "end the script and close the window"},
   [](ScriptContext& x, const ScriptCommand&) {
     x.runner.done = true;
     return false;
   }},
};
// clang-format on

}  // namespace

const std::vector<ScriptCommandSpec>& script_commands() {
  return kCommands;
}

const ScriptCommandSpec& script_command(const std::string& name) {
  for (const auto& c : kCommands)
    if (name == c.syntax.name) return c;
  throw std::invalid_argument("unknown script command " + name);
}

const std::vector<CommandSyntax>& script_syntax() {
  static const std::vector<CommandSyntax> syntax = [] {
    std::vector<CommandSyntax> out;
    for (const auto& c : kCommands) out.push_back(c.syntax);
    return out;
  }();
  return syntax;
}

}  // namespace attnlab::gui
