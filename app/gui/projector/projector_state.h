// The Projector tab's state (issue 70): the embed folder open and, optionally, a second
// one of the same images through another model (the comparison), each with its projection
// and its plot's pan and zoom; how the projection was asked for, the colouring, the hovered
// point and its thumbnail, the selection — a set of rows shared by both plots — and its
// mean attention maps against the rest's; the patch retrieval's query and matches. Plain
// data owned by GuiState; the view (views/projector_view.h) edits it and records requests
// that the frame loop turns into jobs (projector/projector.h, projector/projector_groups.h,
// projector/patch_retrieval.h).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "app/gui/projector/embed_folder.h"
#include "app/gui/projector/projector_results.h"
#include "app/gui/projector/retrieval_state.h"
#include "app/gui/views/gl_texture.h"
#include "app/session/embedding_projection.h"

namespace attnlab::gui {

// HeadEntropy: a folder's head_entropy[i, head_layer, head] (`attnlab embed --heads`);
// HeadRank: its head_output_rank (the head's effective output rank) likewise.
enum class ProjectorColour { Label, Prediction, Correct, Confidence, HeadEntropy, HeadRank };
inline bool projector_head_colour(ProjectorColour c) {
  return c == ProjectorColour::HeadEntropy || c == ProjectorColour::HeadRank;
}

// One embed folder and its projection: the main plot's or the comparison's.
struct ProjectorSide {
  std::string dir;            // the folder asked for last ("" : none)
  bool load_wanted = false;   // read `dir` at the next frame's start
  uint64_t load_request = 0;  // the newest read asked for (its answer is the one kept)
  bool loading = false;
  std::shared_ptr<const EmbedFolder> data;

  bool project_wanted = false;  // project `data` at the next frame's start
  uint64_t project_request = 0;
  session::ProjectionRequest asked;  // the newest projection asked for (the comparison's copies
                                     // the main one's: the same method and options)
  bool computing = false;
  std::vector<float> xy;  // n × 2 for `data`; empty: none yet
  std::string shown;      // the method of `xy` ("pca", "tsne", "umap")
  std::string note;       // of the projection shown
  double seconds = 0.0;

  // The plot: zoom about the data's centre and a pan, in plot pixels.
  float zoom = 1.0f, pan_x = 0.0f, pan_y = 0.0f;
  int drawn_selected = -1;  // the selected points the last frame drew highlighted (-1: no plot)
};

// The selection's mean attention maps against the rest's (projector_groups.h): asked for,
// being computed on the compute worker, shown.
struct ProjectorGroupMaps {
  static constexpr int kCap = 64;  // images per side, at most (evenly spaced over the side)
  bool wanted = false;             // submit `files` at the next frame's start
  uint64_t request = 0;
  bool computing = false;
  std::shared_ptr<LoadedModel> model;  // the workspace's model they are computed with
  std::string model_name;
  std::vector<std::string> group_files, rest_files;  // the capped sides' image files
  int group_total = 0, rest_total = 0;               // the sides' sizes before the cap
  MeanAttentionMap group, rest;                      // shown (empty maps: none yet)
  std::string error;
};

struct ProjectorState {
  std::array<char, 1024> dir_edit{};
  std::array<char, 1024> compare_edit{};
  ProjectorSide main;
  ProjectorSide compare;      // the same images through another model, drawn beside `main`
  std::string error;          // why the last read or projection failed
  std::string compare_error;  // why the comparison was refused (other images, a failed read)

  // The projection asked for, of both folders alike.
  std::string method = "pca";  // session::parse_projection_method's names
  float perplexity = 30.0f;    // t-SNE
  int n_neighbors = 15;        // UMAP
  int seed = 0;                // t-SNE (random init) and UMAP

  ProjectorColour colour = ProjectorColour::Label;
  // The head picked (head statistics): what HeadEntropy and HeadRank colour by and the
  // extremes listed.
  int head_layer = 0, head_index = 0;

  int hovered = -1;       // the row under the mouse in either plot this frame (or the script's)
  int script_hover = -1;  // a script's projector-hover: shown as hovered until cleared
  bool dragging = false;  // a box selection being dragged (Shift + left drag)
  ProjectorPlot drag_plot = ProjectorPlot::Main;
  float drag_x0 = 0, drag_y0 = 0;  // its start, in that plot's projection coordinates

  // The selection: rows (shared by both plots), made by a box in one plot's coordinates.
  bool has_selection = false;
  ProjectorPlot sel_plot = ProjectorPlot::Main;
  float sel_x0 = 0, sel_y0 = 0, sel_x1 = 0, sel_y1 = 0;
  std::vector<int> selected;

  // Thumbnails for the tooltip, by row: uploaded from the dataset's pixels, or decoded
  // from the image file by the load worker (thumb_jobs: job id -> row).
  std::map<int, GlTexture> thumbs;
  std::map<uint64_t, int> thumb_jobs;
  std::map<int, std::string> thumb_errors;
  int thumb_wanted = -1;  // a file thumbnail to decode (the frame loop submits it)

  int clicked = -1;         // the row last opened in the workspace
  std::string opened_path;  // the file it was opened as

  ProjectorGroupMaps group_maps;
  ProjectorRetrieval retrieval;  // patch retrieval in a tokens folder (patch_retrieval.h)

  ProjectorSide& side(ProjectorPlot k) { return k == ProjectorPlot::Main ? main : compare; }
  const ProjectorSide& side(ProjectorPlot k) const {
    return k == ProjectorPlot::Main ? main : compare;
  }
};

}  // namespace attnlab::gui
