// Counting the multiply-accumulates (MACs) and parameters of what a forward really runs,
// by observing its ATen operations (at::RecordFunction), so every mechanism and backbone
// is counted with no per-mechanism formula to keep in sync.
//
// Convention (fvcore's, the counter the LITv2/HiLo and Swin papers report with): one
// multiply-add = one MAC for linear layers, matrix products (mm, bmm, matmul, einsum) and
// convolutions; a normalisation counts one MAC per element (its scale and shift);
// element-wise operations, activations, softmax, pooling and interpolation count nothing.
// Only the outermost counted operation is counted (aten::linear, not also the addmm it
// calls).
//
// Attribution: a MacLayerScope (opened by every AttentionMechanism::forward) makes the
// operations inside it one attention layer; everything else is the rest of the model.
// A MacGroupScope labels the products a mechanism computes ("scores"); unlabelled products
// of two activations are "aggregation". Groups: projections (linear layers), scores,
// aggregation, convs, norms.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attnlab::runtime {

struct MacLayer {
  std::string name;                     // "" for the rest of the model
  int64_t params = 0;                   // parameters of the module that opened the layer scope
  std::map<std::string, int64_t> macs;  // by group
  int64_t total() const;
};

// Counts on the calling thread while alive (one at a time per thread).
class MacCounter {
 public:
  MacCounter();
  ~MacCounter();
  MacCounter(const MacCounter&) = delete;
  MacCounter& operator=(const MacCounter&) = delete;

  // One entry per layer scope opened (in the order they ran), then the rest of the model
  // (name "", when anything was counted outside a layer scope).
  std::vector<MacLayer> layers() const;
};

// True while a MacCounter is active on this thread (scopes are free otherwise).
bool counting_macs();

// The operations inside are attention layer `name`, whose module has `params` parameters
// (pass 0 when not counting: see counting_macs). Nested layer scopes count as the outer.
class MacLayerScope {
 public:
  MacLayerScope(const std::string& name, int64_t params);
  ~MacLayerScope();
  MacLayerScope(const MacLayerScope&) = delete;
  MacLayerScope& operator=(const MacLayerScope&) = delete;

 private:
  bool active_ = false;
};

// Products of two activations inside are labelled `group` ("scores", "aggregation").
class MacGroupScope {
 public:
  explicit MacGroupScope(const char* group);
  ~MacGroupScope();
  MacGroupScope(const MacGroupScope&) = delete;
  MacGroupScope& operator=(const MacGroupScope&) = delete;

 private:
  const char* previous_;
};

}  // namespace attnlab::runtime
