// What one attention call leaves behind for the analyses: per head group the Q, K, V the
// mechanism really mixed with (after its feature map / normalisation), the mechanism's
// own internals by name, and — on demand — its implicit attention rows.
//
// Rows are computed from the stored tensors in O(N·d) per query (O(N·M) for anchors);
// nothing N×N exists unless matrix() is asked for. Everything stays on the device the
// forward ran on, detached from autograd (except in the explicit form: keeps_history).
#pragma once

#include <ATen/core/Tensor.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/attention/token_layout.h"

namespace attnlab::attention {

// The keys one head attends over. Keys are ordered: prefix tokens first, then a
// key_h × key_w grid, row-major. Each grid key covers a cell × cell block of the (possibly
// padded) token grid: cell 1 for ordinary tokens, s for HiLo's Lo-Fi pooled keys. Grid
// keys that lie wholly beyond the layer's token grid are padding (HiLo on odd grids).
struct KeySpace {
  int64_t prefix = 0;
  int64_t key_h = 0;
  int64_t key_w = 0;
  int64_t cell = 1;
  int64_t size() const { return prefix + key_h * key_w; }
};

// Heads that share one key space and one set of projections (HiLo has two groups).
// q: (B, heads, Nq, d) over the group's query positions; k, v: (B, heads, K, d).
// For HiLo on a padded grid the query positions are the padded grid, so query_index()
// maps a layout token to its row in q.
struct HeadGroup {
  std::string name;        // "all", or "hifi" / "lofi"
  int64_t first_head = 0;  // global index of the group's first head
  int64_t num_heads = 0;
  KeySpace keys;
  int64_t query_grid_w = 0;  // width of the grid the queries live on (>= layout width)
  at::Tensor q, k, v;

  bool contains(int64_t head) const { return head >= first_head && head < first_head + num_heads; }
};

// One query's implicit attention for one head, in that head's key space.
struct AttentionRow {
  int64_t head = 0;
  int64_t query = 0;
  KeySpace keys;
  at::Tensor weights;  // (K,)
};

// Thrown for a bad query (head or token out of range, matrix too large, ...).
struct TraceQueryError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class AttentionTrace {
 public:
  virtual ~AttentionTrace() = default;

  std::string mechanism;  // registry name
  TokenLayout layout;
  int64_t batch = 0;
  int64_t heads = 0;
  int64_t head_dim = 0;
  // Side of the square windows that bound the layer's local attention, tiled on its grid
  // from the top-left corner (HiLo: the Hi-Fi heads attend within them, the Lo-Fi keys
  // pool them); 0 when the layer has none. Viewers outline them. With window_w set, the
  // windows are rectangles and this is their height (rows).
  int64_t window = 0;
  // The windows' width (columns) when they are not square (Swin's Wh×Ww windows: window =
  // Wh, window_w = Ww); 0: square, window × window. Read it through window_cols().
  int64_t window_w = 0;
  int64_t window_cols() const { return window_w > 0 ? window_w : window; }
  // Where the window tiling starts on both axes, in tokens: 0 tiles from the top-left;
  // Swin's shifted windows (SW-MSA, rolled back to image positions) start at (s, s), so
  // window edges lie at s + k·window (rows) and s + k·window_cols() (columns), and the
  // pieces cut off at the right/bottom border wrap to the left/top ones only in the
  // reference's roll — its mask keeps them apart, so the image border is an edge too.
  int64_t window_shift = 0;
  std::vector<HeadGroup> groups;
  // Mechanism internals, documented in each mechanism's file (e.g. "rala.w",
  // "hilo.hifi_out", "anchor.A"). Shapes lead with (B, ...).
  std::map<std::string, at::Tensor> internals;
  // Whether the trace's tensors keep their autograd history: only for the explicit form
  // (TraceOptions::explicit_attention), so that rows built from them carry gradients back
  // into the layer. Otherwise they are detached, as analyses need nothing more.
  bool keeps_history = false;
  // What the trace keeps of a tensor the mechanism computed (same device either way).
  at::Tensor keep(const at::Tensor& t) const { return keeps_history ? t : t.detach(); }
  // Only after a forward with TraceOptions::explicit_attention: per head, the (B, N, K)
  // matrix of its rows the layer's output was computed from, with autograd history (and
  // the other tensors of the trace keep theirs). Empty otherwise.
  std::vector<at::Tensor> explicit_rows;
  // The layer's attention output per head before the heads are merged, (B, heads, N, d) on
  // the layer's tokens, when the mechanism computed it that way anyway (softmax); then
  // head_output reads it instead of recomputing rows · v. Undefined otherwise.
  at::Tensor head_outputs;
  // What the trace offers beyond rows (core/attention/capabilities.h), as its mechanism's
  // MechanismInfo declares; set by init_trace.
  std::vector<std::string> capabilities;
  bool offers(const std::string& capability) const {
    return std::find(capabilities.begin(), capabilities.end(), capability) != capabilities.end();
  }

  using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;
  // Branch outputs on the layer's grid, (B, H, W, C) each, by branch name (HiLo: "hifi",
  // "lofi"); empty for mechanisms without branches (capability::kBranchOutputs).
  virtual NamedTensors branch_outputs() const { return {}; }
  // The tensors the reference implementation's fixtures record for this layer, by kind
  // ("attn": plain softmax's (B, heads, N, N) probabilities; HiLo's branch outputs), which
  // the backbone's recorder names after the block. Empty for most mechanisms.
  virtual NamedTensors reference_outputs() const { return {}; }

  const HeadGroup& group_of(int64_t head) const;
  // Row of q (within head's group) that holds layout token `token`.
  int64_t query_index(const HeadGroup& group, int64_t token) const;
  // The internal tensor `name`, or a TraceQueryError naming what is there.
  const at::Tensor& internal(const std::string& name) const;
  bool has_internal(const std::string& name) const { return internals.count(name) > 0; }

  // Implicit attention of layout tokens `queries` (int64, any device) for one head of one
  // image: (len(queries), K) in the head's key space.
  at::Tensor rows(int64_t b, int64_t head, const at::Tensor& queries) const;
  AttentionRow row(int64_t b, int64_t query, int64_t head) const;
  std::vector<AttentionRow> rows_all_heads(int64_t b, int64_t query) const;
  // The whole (N, K) matrix of one head; refuses when N·K > max_elements.
  at::Tensor matrix(int64_t b, int64_t head, int64_t max_elements = kDefaultMaxMatrix) const;

  static constexpr int64_t kDefaultMaxMatrix = int64_t{1} << 26;  // 64 Mi entries

  // Products with one head's implicit attention A on the layer's tokens (N × N, keys spread
  // onto tokens as row_on_tokens does): apply(x) = A·x, apply_transposed(y) = Aᵀ·y, with
  // x, y of shape (N, c) (or (N,)). Linear mechanisms do this in O(N·d·c) without any row;
  // the others go through rows a chunk at a time (memory O(chunk·K), never N×K at once).
  // These are what single-query rollout and row sums are made of.
  at::Tensor apply(int64_t b, int64_t head, const at::Tensor& x) const;
  at::Tensor apply_transposed(int64_t b, int64_t head, const at::Tensor& y) const;
  // The head's attention output before heads are merged: rows · v over the head's own key
  // space, (N, d) for the layer's tokens — the "output features" of the rank analysis.
  at::Tensor head_output(int64_t b, int64_t head) const;

  // Per-head matrices of image b that the mechanism offers for rank analysis besides the
  // attention output every mechanism has (head_output): its KV buffer and the like, each
  // (heads, m, k), named by kind ("kv", ...). after_output: reported after the output
  // (RALA's gated output). The mechanism declares them, so analyses never ask its name.
  struct RankMatrices {
    std::string name;
    at::Tensor matrices;
    bool after_output = false;
  };
  virtual std::vector<RankMatrices> rank_matrices(int64_t b) const {
    (void)b;
    return {};
  }

  static constexpr int64_t kApplyChunkRows = 256;

 protected:
  // Fast paths for apply/apply_transposed on mechanisms whose keys are the layer's tokens
  // (cell 1, no padding): return A·x (transposed: Aᵀ·x) for group head h, x on the group's
  // device, or an undefined tensor to fall back to chunked rows.
  virtual at::Tensor compute_apply(int64_t b, const HeadGroup& group, int64_t head_in_group,
                                   const at::Tensor& x, bool transposed) const {
    (void)b, (void)group, (void)head_in_group, (void)x, (void)transposed;
    return {};
  }

  // Mechanism-specific: rows for in-range `q_rows` (indices into group.q's token axis).
  virtual at::Tensor compute_rows(int64_t b, const HeadGroup& group, int64_t head_in_group,
                                  const at::Tensor& q_rows) const = 0;

 private:
  void check_batch_head(int64_t b, int64_t head) const;
  // x (N,) or (N, c) checked against the layer's tokens, as (N, c) on the group's device.
  at::Tensor operand(const char* who, const HeadGroup& g, const at::Tensor& x) const;
  // rows · on_keys for every token, a chunk of rows at a time: (N, c) from (K, c).
  at::Tensor rows_times(int64_t b, int64_t head, const at::Tensor& on_keys) const;
};

// A row spread over the layer's tokens (length layout.tokens()): prefix keys stay, a key
// cell's weight is shared equally by the cell² token positions it pooled (padding
// positions keep their share out of the grid, so a row over padded keys may sum to < 1).
at::Tensor row_on_tokens(const AttentionRow& row, const TokenLayout& layout);
// The same for many rows at once: (n, K) in `keys` -> (n, layout.tokens()).
at::Tensor rows_on_tokens(const at::Tensor& rows, const KeySpace& keys, const TokenLayout& layout);
// The key-space image of a token-space vector for products: x (N, c) -> (K, c) with each
// grid key cell holding the sum of x over the tokens it covers divided by cell² (so that
// rows_key · tokens_to_keys(x) = rows_on_tokens(rows_key) · x).
at::Tensor tokens_to_keys(const at::Tensor& x, const KeySpace& keys, const TokenLayout& layout);

}  // namespace attnlab::attention
