// The Projector tab's state (issue 70): the embed folder open, the projection shown and how
// it was asked for, the colouring, the plot's pan and zoom, the hovered point and its
// thumbnail, and the box selection. Plain data owned by GuiState; the view
// (views/projector_view.h) edits it and records requests that the frame loop turns into
// jobs (projector/projector_jobs.h).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "app/gui/projector/embed_folder.h"
#include "app/gui/projector/projector_results.h"
#include "app/gui/views/gl_texture.h"

namespace attnlab::gui {

enum class ProjectorColour { Label, Prediction, Correct, Confidence };

struct ProjectorState {
  // The folder: typed, asked for, being read, read.
  std::array<char, 1024> dir_edit{};
  std::string dir;            // the folder asked for last
  bool load_wanted = false;   // read `dir` at the next frame's start
  uint64_t load_request = 0;  // the newest read asked for (its answer is the one kept)
  bool loading = false;
  std::string error;  // why the last read or projection failed
  std::shared_ptr<const EmbedFolder> data;

  // The projection: asked for, being computed, shown.
  ProjectionMethod method = ProjectionMethod::Pca;
  float perplexity = 30.0f;  // t-SNE
  int n_neighbors = 15;      // UMAP
  int seed = 0;              // t-SNE (random init) and UMAP
  bool project_wanted = false;
  uint64_t project_request = 0;
  bool computing = false;
  std::vector<float> xy;  // n × 2 for `data`; empty: none yet
  ProjectionMethod shown = ProjectionMethod::Pca;
  std::string note;  // of the projection shown
  double seconds = 0.0;

  ProjectorColour colour = ProjectorColour::Label;

  // The plot: zoom about the data's centre and a pan, in plot pixels.
  float zoom = 1.0f, pan_x = 0.0f, pan_y = 0.0f;
  int hovered = -1;                // the point under the mouse this frame (or the script's)
  int script_hover = -1;           // a script's projector-hover: shown as hovered until cleared
  bool dragging = false;           // a box selection being dragged (Shift + left drag)
  float drag_x0 = 0, drag_y0 = 0;  // its start, in projection coordinates

  // The box selection, in projection coordinates, and the points in it.
  bool has_selection = false;
  float sel_x0 = 0, sel_y0 = 0, sel_x1 = 0, sel_y1 = 0;
  std::vector<int> selected;

  // Thumbnails for the tooltip, by point: uploaded from the dataset's pixels, or decoded
  // from the image file by the load worker (thumb_jobs: job id -> point).
  std::map<int, GlTexture> thumbs;
  std::map<uint64_t, int> thumb_jobs;
  std::map<int, std::string> thumb_errors;
  int thumb_wanted = -1;  // a file thumbnail to decode (the frame loop submits it)

  int clicked = -1;         // the point last opened in the workspace
  std::string opened_path;  // the file it was opened as
};

}  // namespace attnlab::gui
