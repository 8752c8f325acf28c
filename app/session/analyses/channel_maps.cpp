// channel_maps: the d×d channel-to-channel maps of every layer whose traces offer them
// (capability "channel map": XCA's A = softmax(q̂ᵀk̂·τ), whose token-to-token rows are
// the identity, so the token maps say nothing and this is the attention to look at). Per
// image, each layer's maps as an array (head, out_channel, in_channel); per layer and head
// statistics of the maps' rows, folded over the images. Figure: a layers × heads grid of
// heat maps; the GUI's Channel maps tab.
// Its figures (report, series, GUI tab): channel_maps_figures.cpp.
#include <ATen/ATen.h>

#include <cmath>

#include "app/session/analyses/step_helpers.h"
#include "core/attention/capabilities.h"
#include "core/attention/mechanism.h"

namespace attnlab::session {
namespace {

constexpr const char* kName = "channel_maps";

// The (heads, d, d) maps of image b, which a trace offering "channel map" holds among its
// rank matrices under the name "channel_map" (core/attention/capabilities.h).
at::Tensor channel_maps_of(const attention::AttentionTrace& trace, int64_t b) {
  for (const auto& m : trace.rank_matrices(b))
    if (m.name == "channel_map") return m.matrices;
  throw attention::TraceQueryError("the " + trace.mechanism +
                                   " trace offers a channel map but holds no \"channel_map\" "
                                   "matrices");
}

void add_channel_maps(ImageStep& s) {
  analysis::Table t = make_table(
      "channel_maps_heads",
      "channel-to-channel map A (d×d, rows sum to 1) per layer and head: diagonal = mean A_cc "
      "(the weight a channel gives itself; uniform 1/d), entropy = mean row entropy in nats "
      "(uniform: log d), max_weight = the largest entry",
      {"layer", "path", "head", "dim", "diagonal", "entropy", "max_weight"}, 4);
  for (const auto& l : s.layers) {
    const at::Tensor a = channel_maps_of(*l.trace, s.b).detach().to(at::kCPU, at::kDouble);
    analysis::ResultKey key{kName, s.image, l.index, "", "", "map"};
    s.session.emit(to_array(a, analysis::format_result_key(key),
                            {"head", "out_channel", "in_channel"},
                            "channel-to-channel map of every head of " + l.path +
                                " (row c: the weights output channel c gives to the value's "
                                "channels)"));
    const int64_t d = a.size(-1);
    const at::Tensor diagonal = a.diagonal(0, -2, -1).mean(-1);
    // 0·log 0 = 0: a weight of exactly zero adds nothing to a row's entropy.
    const at::Tensor entropy = (-(a * a.clamp_min(1e-300).log()).sum(-1)).mean(-1);
    const at::Tensor top = a.flatten(1).amax(1);
    for (int64_t h = 0; h < a.size(0); ++h)
      t.add_row({l.index, l.path, std::to_string(h), d, diagonal[h].item<double>(),
                 entropy[h].item<double>(), top[h].item<double>()});
  }
  s.session.accumulate(t);
}

}  // namespace

AnalysisInfo channel_maps_analysis() {
  AnalysisInfo info;
  info.name = kName;
  info.summary = "channel-to-channel attention maps (XCA's d×d softmax) per layer and head";
  info.needs = {attention::capability::kChannelMap};
  info.tables = {"channel_maps_heads"};
  info.arrays = {"channel_maps__<image>__L<ll>__map"};
  analysis::ResultKeyShape shape;
  shape.image = shape.layer = shape.part = true;
  info.key_shape = shape;
  info.in_image_analysis = true;
  info.add = add_channel_maps;
  return info;
}

}  // namespace attnlab::session
