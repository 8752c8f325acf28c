// The Projector's patch retrieval (issue 70 goal 4) as the tab holds it: the query asked
// for (an image of the workspace and a grid cell of the folder's grid), k and whether the
// query's own image is left out, the matches the compute worker found in the folder's
// token index and their crops as textures for the gallery (views/retrieval_gallery.h).
// Plain data owned by ProjectorState; projector/patch_retrieval.h asks, submits and applies.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "app/gui/projector/retrieval_results.h"
#include "app/gui/views/gl_texture.h"

namespace attnlab::gui {

struct RetrievalAsk;  // what the worker is given (projector/retrieval_search.h)

struct ProjectorRetrieval {
  static constexpr int kDefaultK = 16;
  int k = kDefaultK;
  bool exclude_self = true;  // leave out every patch of the query's own image (a row only)

  bool wanted = false;  // submit `ask` at the next frame's start
  std::shared_ptr<const RetrievalAsk> ask;
  uint64_t request = 0;  // the newest asked for: an answer to another is dropped
  bool computing = false;
  int crops_pending = 0;  // crops still being cut for the matches shown

  // The query shown with the matches (of the newest request).
  std::string query_image;  // the workspace image's path
  int64_t query_row = -1;   // its row in the folder, or -1 (its vector computed by the model)
  int64_t patch_y = -1, patch_x = -1;
  int64_t grid_h = 0, grid_w = 0;  // the folder's grid the cells are on
  int asked_k = 0;
  bool asked_exclude = false;
  std::string query_source;  // "stored" or "computed" once answered
  int64_t candidates = 0;
  double seconds = 0;

  std::vector<RetrievalMatch> matches;
  std::map<int, GlTexture> crops;  // by place (0 = best)
  std::map<int, std::string> crop_errors;
  std::string error;  // why the last request was refused or failed
};

}  // namespace attnlab::gui
