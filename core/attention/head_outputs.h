// Where each head's output enters the layer's output projection, so that one head can be
// switched off exactly (head importance, issue 26): zeroing input channels [first,
// first + count) of the projection's weight is the same as zeroing that head's merged
// output before the projection (the bias stays). Mechanisms implement this mix-in next to
// AttentionMechanism; the head-ablation code finds it with dynamic_cast, so a mechanism
// without it is reported as one whose heads cannot be switched off one at a time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnlab::attention {

// The input channels of one head in a projection weight (Linear (out, in) or 1×1 conv
// (out, in, 1, 1): dimension 1), the parameter named relative to the mechanism module.
struct HeadColumns {
  std::string parameter;  // e.g. "proj.weight"
  int64_t first = 0, count = 0;
};

class HeadOutputSource {
 public:
  virtual ~HeadOutputSource() = default;
  // One entry per head, in the trace's head order. What else the layer adds to the same
  // channels before the projection (FLatten's dwc, RALA's LePE, Castling's dconv) is part
  // of the head's output and switched off with it.
  virtual std::vector<HeadColumns> head_columns() const = 0;
};

// Heads merged head-major ((B, h, N, d) -> (B, N, h·d)) into `parameter`'s input channels.
inline std::vector<HeadColumns> head_major_columns(const std::string& parameter, int64_t heads,
                                                   int64_t head_dim) {
  std::vector<HeadColumns> out;
  for (int64_t h = 0; h < heads; ++h) out.push_back({parameter, h * head_dim, head_dim});
  return out;
}

}  // namespace attnlab::attention
