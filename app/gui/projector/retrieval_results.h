// What the Projector's patch retrieval (issue 70 goal 4) hands back from the compute worker
// to the main thread (worker_results.h holds them in its variant): the k patches most
// similar to the query patch, then, one by one, each match's crop — its image as the model
// saw it, cut around the matched patch with the patch outlined. Each names the request it
// answers, so that an answer to an older request is dropped. Plain data: no GL.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnlab::gui {

// One match: a token of the folder's index (embeddings.npy's image row and grid cell).
struct RetrievalMatch {
  int64_t row = 0;                   // the image: a row of embeddings.npy / images.csv
  int64_t patch_y = 0, patch_x = 0;  // its grid cell (from the top left)
  float score = 0;                   // cosine similarity with the query
};

struct ProjectorRetrieved {
  uint64_t request = 0;                 // ProjectorRetrieval::request
  std::vector<RetrievalMatch> matches;  // best first (retrieval::ranks_before's order)
  std::string query_source;             // "stored" (the folder's own vector) or "computed"
  int64_t candidates = 0;               // the patches searched
  double seconds = 0;                   // of the search
  std::string error;                    // why there are none
};

// The crop of match `place` (0 = the best): width × height RGB, rows top first.
struct ProjectorCropCut {
  uint64_t request = 0;
  int place = 0;
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;
  std::string error;  // why there is none (the image moved, cannot be decoded)
};

}  // namespace attnlab::gui
