// The worker side of the Projector's patch retrieval (issue 70 goal 4): the query patch's
// token vector — the folder's own (retrieval::TokenIndex::vector of its row) or computed by
// the workspace's model at the block embed.json names (models::embed_batch, pool tokens) —
// the k most similar patches by retrieval::top_k_similar over the memory-mapped
// embeddings.npy (the code `attnlab retrieve` runs, so the GUI lists what the CLI writes),
// then each match's crop: its image as the model saw it (the folder's preprocessing: resize
// and crop, as `attnlab embed` read it) cut around the matched cell with some context, the
// cell outlined. Runs on the compute worker's Models lane (it may run the
// model): no GL, no ImGui.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "app/gui/jobs/compute_worker.h"
#include "app/gui/projector/embed_folder.h"
#include "core/image/image_edits.h"
#include "core/image/preprocess.h"
#include "core/io/image_io.h"

namespace attnlab::gui {

struct LoadedModel;

struct RetrievalAsk {
  uint64_t request = 0;
  std::shared_ptr<const EmbedFolder> folder;
  int64_t grid_h = 0, grid_w = 0;    // embed.json's grid
  int64_t row = -1;                  // the query image's row (its stored vector); -1: computed
  int64_t patch_y = 0, patch_x = 0;  // the query cell, on that grid
  int k = 16;
  bool exclude_self = true;  // with a row: every patch of it left out
  // A computed query: `image_file` (with its what-if edits) through `model` at embed.json's
  // block (`layer` among the forward's blocks, named `block`).
  std::shared_ptr<LoadedModel> model;
  std::string image_file;
  std::vector<image::EditOp> edits;
  int64_t layer = -1;
  std::string block;
  std::string features = "output";  // embed.json's: the block output, or its keys / queries
  // The crops' geometry: the preprocessing `attnlab embed` read the folder's image files
  // with (from embed.json); unknown: the file as it is. Dataset rows are their pixels.
  image::Preprocessing preprocessing;
  bool preprocessing_known = false;
};

// The job: posts a ProjectorRetrieved (the matches, or the error), then one
// ProjectorCropCut per match as it is cut; nothing once cancelled.
void run_patch_retrieval(JobContext& ctx, const RetrievalAsk& ask);

// Row `row`'s picture as the model saw it (dataset pixels as they are; a file read and
// brought through `pre` when known). Throws std::runtime_error naming a missing file.
io::RgbImage retrieval_row_picture(const EmbedFolder& d, int64_t row,
                                   const image::Preprocessing& pre, bool pre_known);
// The crop of `picture` around cell (py, px) of its grid_h × grid_w grid: the cell with one
// cell of context on each side (more for cells under 6 pixels; clamped at the edges), the context
// dimmed, the cell outlined in yellow, enlarged by whole pixels to about 96 pixels when smaller.
io::RgbImage outlined_patch_crop(const io::RgbImage& picture, int64_t grid_h, int64_t grid_w,
                                 int64_t py, int64_t px);

}  // namespace attnlab::gui
