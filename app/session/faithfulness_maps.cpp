// See faithfulness_maps.h.
#include "app/session/faithfulness_maps.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <stdexcept>

#include "app/session/query.h"
#include "core/analysis/faithfulness.h"
#include "core/analysis/rollout.h"
#include "core/io/text.h"
#include "models/grad_rollout_run.h"
#include "models/gradcam_run.h"

namespace attnlab::session {
namespace {

// With traces (and each block's input when asked, for the randomisation cascade).
models::ForwardResult traced_forward(models::Backbone& model, const at::Tensor& image,
                                     bool record_blocks = false) {
  const at::NoGradGuard no_grad;
  models::ForwardOptions o;
  o.trace_attention = true;
  o.record_block_inputs = record_blocks;
  models::ForwardResult r = model.run(image, o);
  if (r.traces.empty())
    throw std::invalid_argument("faithfulness: " + model.arch() + " has no attention layer");
  return r;
}

std::vector<const attention::AttentionTrace*> chain_of(const models::ForwardResult& r) {
  std::vector<const attention::AttentionTrace*> chain;
  for (const auto& t : r.traces) chain.push_back(t.trace.get());
  return chain;
}

// A trace's per-grid-cell weights (the grid part of `weights` over its tokens) as (H, W).
at::Tensor grid_part(const attention::TokenLayout& layout, const at::Tensor& weights) {
  return weights.to(at::kCPU, at::kFloat)
      .slice(0, layout.num_prefix())
      .reshape({layout.height, layout.width});
}

int64_t cls_token(const attention::TokenLayout& layout) {
  const auto it = std::find(layout.prefix.begin(), layout.prefix.end(), "cls");
  return it == layout.prefix.end() ? -1 : int64_t(it - layout.prefix.begin());
}

}  // namespace

const std::vector<std::string>& faithfulness_map_kinds() {
  static const std::vector<std::string> kinds = {"cls",    "rollout", "gradcam",
                                                 "gradrollout", "random", "centre"};
  return kinds;
}

std::vector<std::string> parse_faithfulness_maps(const std::string& list) {
  std::vector<std::string> out;
  const auto& known = faithfulness_map_kinds();
  for (const auto& k : text::split(list)) {
    if (std::find(known.begin(), known.end(), k) == known.end())
      throw std::invalid_argument("unknown map kind '" + k + "' (known: " + text::join(known) +
                                  ")");
    if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
  }
  if (out.empty()) throw std::invalid_argument("no map kind named in '" + list + "'");
  return out;
}

PreparedImage prepare_image(models::Backbone& model, const at::Tensor& image) {
  PreparedImage p;
  p.forward = traced_forward(model, image, true);
  p.predicted = p.forward.logits.argmax(-1)[0].item<int64_t>();
  const attention::TokenLayout& first = p.forward.traces.front().trace->layout;
  p.grid = attention::grid_layout(first.height, first.width);
  for (const auto& in : p.forward.block_inputs) p.blocks.push_back(in.block);
  return p;
}

std::vector<ScoredMap> score_maps(
    models::Backbone& model, const at::Tensor& image, const PreparedImage& prepared,
    const std::vector<std::string>& kinds, int64_t reference, const at::Tensor& baseline,
    const models::PerturbationRequest& request, uint64_t seed,
    const std::function<void(const std::string& kind, const std::string& why)>& skipped,
    const std::function<bool()>& cancelled,
    const std::function<void(int64_t done, int64_t total)>& on_kind) {
  std::vector<ScoredMap> out;
  int64_t done = 0;
  for (const auto& kind : kinds) {
    if (on_kind) on_kind(done++, int64_t(kinds.size()));
    ScoredMap s;
    s.kind = kind;
    try {
      s.map = faithfulness_map(model, image, kind, prepared.predicted, prepared.grid, seed,
                               &prepared.forward);
    } catch (const std::invalid_argument& e) {  // a kind the model cannot make
      if (skipped) skipped(kind, e.what());
      continue;
    }
    s.curves = models::perturbation_curves(model, image, baseline, s.map, prepared.predicted,
                                           reference, request, cancelled);
    out.push_back(std::move(s));
  }
  if (on_kind) on_kind(done, int64_t(kinds.size()));
  return out;
}

at::Tensor faithfulness_map(models::Backbone& model, const at::Tensor& image,
                            const std::string& kind, int64_t cls,
                            const attention::TokenLayout& grid, uint64_t seed,
                            const models::ForwardResult* traced) {
  const int64_t h = grid.height, w = grid.width;
  if (kind == "random") return analysis::random_map(h, w, seed);
  if (kind == "centre") return analysis::centre_prior_map(h, w);
  at::Tensor map;
  if (kind == "cls" || kind == "rollout") {
    const models::ForwardResult own = traced ? models::ForwardResult() : traced_forward(model, image);
    const models::ForwardResult& r = traced ? *traced : own;
    const attention::AttentionTrace& last = *r.traces.back().trace;
    const int64_t token = cls_token(last.layout);
    if (kind == "cls") {
      if (token < 0)
        throw std::invalid_argument(
            "the cls map needs a class token in the last attention layer; " + model.arch() +
            " has none (" + last.layout.describe() + "): use rollout, gradcam or gradrollout");
      map = layer_query_maps(last, 0, token).fused[0];  // the mean over heads
    } else {
      at::Tensor readout = at::zeros({last.layout.tokens()}, at::kDouble);
      if (token >= 0)
        readout[token] = 1.0;
      else
        readout.slice(0, last.layout.num_prefix()).fill_(1.0 / double(last.layout.grid_tokens()));
      const analysis::RolloutResult rr = analysis::rollout_of_readout(chain_of(r), 0, readout);
      map = grid_part(rr.layout, rr.weights);
    }
  } else if (kind == "gradcam") {
    models::GradCamRequest q;
    q.cls = cls;
    map = models::run_grad_cam(model, image, q).map;
  } else if (kind == "gradrollout") {
    models::GradRolloutRequest q;
    q.cls = cls;
    map = models::run_grad_rollout(model, image, q).map;
  } else {
    throw std::invalid_argument("unknown map kind '" + kind + "'");
  }
  return analysis::resample_map(map.detach(), h, w);
}

std::vector<int64_t> cascade_levels(int64_t blocks) {
  std::vector<int64_t> k = {1, std::max<int64_t>(1, blocks / 2), blocks};
  k.erase(std::unique(k.begin(), k.end()), k.end());
  return k;
}

std::vector<RandomisedCopy> randomisation_cascade(models::Backbone& model,
                                                  const std::vector<std::string>& blocks,
                                                  uint64_t seed) {
  std::vector<RandomisedCopy> out;
  for (const int64_t k : cascade_levels(int64_t(blocks.size())))
    out.push_back({k, models::partly_reinitialised(model, {blocks.end() - k, blocks.end()},
                                                   seed + 7919u * uint64_t(k))});
  return out;
}

std::vector<RandomisationScore> randomisation_scores(const std::vector<RandomisedCopy>& cascade,
                                                     const std::vector<ScoredMap>& scored,
                                                     const at::Tensor& image,
                                                     const PreparedImage& prepared, uint64_t seed) {
  std::vector<RandomisationScore> out;
  const int64_t all = cascade.empty() ? 0 : cascade.back().blocks;
  for (const ScoredMap& m : scored)
    for (const RandomisedCopy& c : cascade)
      out.push_back(
          {m.kind, c.blocks, c.blocks == all,
           analysis::spearman(m.map, faithfulness_map(*c.model, image, m.kind, prepared.predicted,
                                                      prepared.grid, seed))});
  return out;
}

}  // namespace attnlab::session
