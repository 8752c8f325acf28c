// The analyses of AnalysisSession, one function each: they turn one image's traces into
// per-image tables (folded into mean/std), arrays for the sink, and image-averaged sums.
// Every table's caption says what a row is; every array's name says model-independent
// facts (layer index, query, what the axes are) so a file name alone identifies it.
#include <ATen/ATen.h>

#include <array>

#include "core/analysis/anchors.h"
#include "core/analysis/locality.h"
#include "core/attention/castling.h"
#include "models/analysis_session.h"

namespace attnlab::models {
namespace {

using analysis::Cell;
using analysis::Table;

std::string grid_text(const attention::TokenLayout& l) {
  return std::to_string(l.height) + "x" + std::to_string(l.width);
}

Table make_table(std::string name, std::string caption, std::vector<std::string> columns,
                 size_t keys) {
  Table t;
  t.name = std::move(name);
  t.caption = std::move(caption);
  t.columns = std::move(columns);
  t.key_columns = keys;
  return t;
}

// The query of the maps and the rollout: a prefix token by name, or a cell of the first
// layer's grid (mapped to other grids by area).
struct Query {
  std::string prefix;  // non-empty: the prefix token of this name
  analysis::GridQuery grid;
  std::string tag;  // "cls", "q7-3"
  // This query's token in `layout`, or -1 when the layout has no such prefix token.
  int64_t token_in(const attention::TokenLayout& layout) const {
    if (prefix.empty()) return analysis::token_for(grid, layout);
    for (int64_t i = 0; i < layout.num_prefix(); ++i)
      if (layout.prefix[size_t(i)] == prefix) return i;
    return -1;
  }
};

Query resolve_query(const AnalysisSettings& s, const attention::TokenLayout& first) {
  Query q;
  q.grid.ref_h = first.height;
  q.grid.ref_w = first.width;
  if (s.query_token >= 0) {
    if (s.query_token >= first.tokens())
      throw std::invalid_argument(
          "query token " + std::to_string(s.query_token) + " does not exist: the first layer has " +
          std::to_string(first.tokens()) + " tokens (" + first.describe() + ")");
    if (first.is_prefix(s.query_token)) {
      q.prefix = first.prefix[size_t(s.query_token)];
      q.tag = q.prefix;
      return q;
    }
    const int64_t g = s.query_token - first.num_prefix();
    q.grid.y = g / first.width;
    q.grid.x = g % first.width;
  } else {
    q.grid.y = s.query_y < 0 ? first.height / 2 : s.query_y;
    q.grid.x = s.query_y < 0 ? first.width / 2 : s.query_x;
  }
  if (q.grid.y >= q.grid.ref_h || q.grid.x < 0 || q.grid.x >= q.grid.ref_w)
    throw std::invalid_argument("query (" + std::to_string(q.grid.y) + ", " +
                                std::to_string(q.grid.x) + ") lies outside the first layer's " +
                                grid_text(first) + " grid");
  q.tag = grid_query_tag(q.grid.y, q.grid.x);
  return q;
}

}  // namespace

void AnalysisSession::add_maps(const std::string& tag, const std::vector<Layer>& layers) {
  const Query q = resolve_query(settings_, layers.front().trace->layout);
  const std::string& qtag = q.tag;
  Table prefix = make_table(
      "maps_prefix",
      "weight that the query token puts on each prefix token, per layer and head (query " + qtag +
          ", a cell of the first layer's grid is mapped to each layer by area)",
      {"layer", "path", "head", "prefix", "weight"}, 4);
  for (const auto& l : layers) {
    const auto& lay = l.trace->layout;
    if (lay.tokens() > settings_.map_max_tokens) {
      warn("maps: layer " + std::to_string(l.index) + " has " + std::to_string(lay.tokens()) +
           " tokens, above the map limit");
      continue;
    }
    const int64_t token = q.token_in(lay);
    if (token < 0) {
      warn("maps: layer " + std::to_string(l.index) + " has no " + q.prefix + " token");
      continue;
    }
    const analysis::QueryMap m = analysis::query_map(*l.trace, 0, token);
    const std::string stem = map_array_stem(tag, l.index, qtag);
    sink_(to_array(m.grid, stem + "__heads", {"head", "y", "x"},
                   "attention of the query over the " + grid_text(lay) + " grid of " + l.path +
                       ", one map per head"));
    const at::Tensor fused = at::stack({analysis::fuse_heads(m.grid, analysis::HeadFusion::Mean),
                                        analysis::fuse_heads(m.grid, analysis::HeadFusion::Max),
                                        analysis::fuse_heads(m.grid, analysis::HeadFusion::Min)});
    sink_(to_array(fused, stem + "__fused", {"fusion", "y", "x"},
                   "head fusion of the query's maps in " + l.path + ": mean, max, min"));
    for (int64_t h = 0; h < m.prefix.size(0); ++h)
      for (int64_t p = 0; p < m.prefix.size(1); ++p)
        prefix.add_row({l.index, l.path, h, lay.prefix[size_t(p)], m.prefix[h][p].item<double>()});
  }
  accumulate(prefix);
  // The prefix tokens' own rows (CLS attention) in the last selected layer.
  const auto& last = *layers.back().trace;
  for (const auto& name : last.layout.prefix) {
    if (name == q.prefix) continue;  // already written as the query's own maps
    const analysis::QueryMap m = analysis::prefix_token_map(last, 0, name);
    sink_(to_array(m.grid, map_array_stem(tag, layers.back().index, name) + "__heads",
                   {"head", "y", "x"},
                   "attention of the " + name + " token over the " + grid_text(last.layout) +
                       " grid of " + layers.back().path + ", per head"));
  }
}

void AnalysisSession::add_rollout(const std::string& tag, const std::vector<Layer>& layers) {
  std::vector<const attention::AttentionTrace*> chain;
  for (const auto& l : layers) chain.push_back(l.trace);
  const auto& first = chain.front()->layout;
  const auto& last = chain.back()->layout;
  // The cls row unless the user asked for a query (then that query, in the last layer).
  const bool asked = settings_.query_token >= 0 || settings_.query_y >= 0;
  Query q;
  if (!asked && !last.prefix.empty() && last.prefix.front() == "cls") {
    q.prefix = q.tag = "cls";
  } else {
    q = resolve_query(settings_, first);
  }
  const int64_t query = q.token_in(last);
  if (query < 0) throw attention::TraceQueryError("the last layer has no " + q.prefix + " token");
  const std::string& qtag = q.tag;
  const analysis::RolloutResult r = analysis::rollout_query(chain, 0, query, settings_.rollout);
  const int64_t p = r.layout.num_prefix();
  sink_(to_array(r.weights.slice(0, p).reshape({r.layout.height, r.layout.width}),
                 "rollout__" + tag + "__" + qtag, {"y", "x"},
                 "rollout of the " + qtag + " row of the last layer over the first layer's " +
                     grid_text(r.layout) + " grid (" +
                     analysis::head_fusion_name(r.options.fusion) + " fusion, residual " +
                     std::to_string(r.options.residual) + ", discard " +
                     std::to_string(r.options.discard_ratio) + ")"));
  Table t = make_table(
      "rollout_summary",
      "rollout of the " + qtag + " row: mass on the first layer's prefix tokens and on its grid",
      {"token", "weight"}, 1);
  for (int64_t i = 0; i < p; ++i)
    t.add_row({r.layout.prefix[size_t(i)], r.weights[i].item<double>()});
  t.add_row({"grid", r.weights.slice(0, p).sum().item<double>()});
  accumulate(t);
}

void AnalysisSession::add_rank(const std::vector<Layer>& layers) {
  // Every definition in both tables (analysis/rank.h); the sidecar states their rules.
  const std::string rules =
      "rank: float32 rule as torch.linalg.matrix_rank, tolerance " + settings_.rank.describe() +
      "; precision_rank: float64 singular values above "
      "2*sqrt(max(m,n))*eps(float32)*sigma_max; *_ambiguous: a singular "
      "value within " +
      std::to_string(static_cast<int>(analysis::kRankAmbiguityFactor)) + "x of the tolerance";
  Table heads =
      make_table("rank_heads", "rank statistics per layer, matrix kind and head; " + rules,
                 {"layer", "path", "mechanism", "matrix", "head", "rows", "cols", "rank",
                  "tolerance", "rank_ambiguous", "precision_rank", "precision_tolerance",
                  "precision_ambiguous", "effective_rank", "stable_rank", "sigma_max"},
                 5);
  Table summary = make_table(
      "rank_layers",
      "rank statistics per layer and matrix kind, averaged over heads; full = min(rows, cols); "
      "*_ambiguous = share of heads flagged; *_tolerance_rel = tolerance / sigma_max; " +
          rules,
      {"layer", "path", "mechanism", "matrix", "full", "rank", "precision_rank", "effective_rank",
       "stable_rank", "rank_ambiguous", "precision_ambiguous", "tolerance_rel",
       "precision_tolerance_rel"},
      4);
  for (const auto& l : layers) {
    for (const auto& subject : analysis::rank_subjects(*l.trace, 0)) {
      const auto stats = analysis::rank_statistics(subject.matrices, settings_.rank);
      const int64_t rows = subject.matrices.size(-2), cols = subject.matrices.size(-1);
      // Sums over heads of: rank, precision rank, effective, stable, the two flags, and the
      // two tolerances relative to each head's σ_max.
      std::array<double, 8> sum{};
      std::vector<at::Tensor> sigmas;
      for (size_t h = 0; h < stats.size(); ++h) {
        const auto& s = stats[h];
        const double sigma_max = s.sigma.numel() ? s.sigma[0].item<double>() : 0.0;
        const double native_max = s.sigma_native.numel() ? s.sigma_native[0].item<double>() : 0.0;
        heads.add_row({l.index, l.path, l.trace->mechanism, subject.name, int64_t(h), rows, cols,
                       s.rank, s.tolerance, int64_t(s.rank_ambiguous), s.precision_rank,
                       s.precision_tolerance, int64_t(s.precision_ambiguous), s.effective_rank,
                       s.stable_rank, sigma_max});
        const std::array<double, 8> v{double(s.rank),
                                      double(s.precision_rank),
                                      s.effective_rank,
                                      s.stable_rank,
                                      double(s.rank_ambiguous),
                                      double(s.precision_ambiguous),
                                      native_max > 0 ? s.tolerance / native_max : 0.0,
                                      sigma_max > 0 ? s.precision_tolerance / sigma_max : 0.0};
        for (size_t i = 0; i < v.size(); ++i) sum[i] += v[i];
        sigmas.push_back(s.sigma);
      }
      const double n = double(std::max<size_t>(1, stats.size()));
      summary.add_row({l.index, l.path, l.trace->mechanism, subject.name, std::min(rows, cols),
                       sum[0] / n, sum[1] / n, sum[2] / n, sum[3] / n, sum[4] / n, sum[5] / n,
                       sum[6] / n, sum[7] / n});
      add_sum("rank_sigma__" + layer_tag(l.index) + "__" + subject.name,
              "singular values (float64 SVD, descending) of each head's " + subject.name +
                  " matrix in " + l.path,
              {"head", "index"}, at::stack(sigmas));
    }
  }
  accumulate(heads);
  accumulate(summary);
}

void AnalysisSession::add_spectra(const std::vector<Layer>& layers, const ForwardResult& result) {
  Table summary = make_table(
      "spectra_layers",
      "high-frequency energy ratio (energy beyond half the Nyquist radius / total), mean over "
      "channels, per layer and branch",
      {"layer", "path", "branch", "channels", "high_frequency_ratio"}, 3);
  Table channels =
      make_table("spectra_channels", "high-frequency energy ratio per layer, branch and channel",
                 {"layer", "path", "branch", "channel", "high_frequency_ratio"}, 4);
  for (const auto& l : layers) {
    const auto& lay = l.trace->layout;
    std::vector<std::pair<std::string, at::Tensor>> features;  // branch -> (1, H, W, C)
    if (l.trace->has_internal("hilo.hifi_out"))
      features.emplace_back("hifi", l.trace->internal("hilo.hifi_out"));
    if (l.trace->has_internal("hilo.lofi_out"))
      features.emplace_back("lofi", l.trace->internal("hilo.lofi_out"));
    if (features.empty()) {
      auto it = result.outputs.find("out." + l.path);
      if (it == result.outputs.end()) {
        warn("spectra: no recorded output for " + l.path);
        continue;
      }
      at::Tensor t = it->second;
      if (t.dim() == 4 && t.size(2) == lay.height && t.size(3) == lay.width)
        t = t.permute({0, 2, 3, 1});  // NCHW (RAVLT) -> NHWC
      else
        t = t.slice(1, lay.num_prefix()).reshape({t.size(0), lay.height, lay.width, t.size(-1)});
      features.emplace_back("output", t);
    }
    for (const auto& [branch, f] : features) {
      const std::string key = "spectra__" + layer_tag(l.index) + "__" + branch;
      if (!spectra_.count(key)) spectra_order_.push_back(key);
      spectra_[key].add(f);
      const at::Tensor hf =
          analysis::high_frequency_ratio(f)[0].to(at::kCPU, at::kDouble).contiguous();
      summary.add_row({l.index, l.path, branch, hf.size(0), hf.mean().item<double>()});
      const double* ratio = hf.data_ptr<double>();  // (C,): one row per channel, no per-item op
      for (int64_t c = 0; c < hf.size(0); ++c)
        channels.add_row({l.index, l.path, branch, c, ratio[c]});
    }
  }
  accumulate(summary);
  accumulate(channels);
}

void AnalysisSession::add_anchors(const std::string& tag, const std::vector<Layer>& layers) {
  Table heads = make_table(
      "anchors_heads",
      "anchor assignment per layer and head (\"fused\" = head-mean of A): spatial coherence = "
      "share of 4-neighbour grid pairs with the same hard anchor (coherence_chance: the same "
      "labels at random positions); entropy in nats",
      {"layer", "path", "head", "coherence", "coherence_chance", "mean_entropy", "anchors_used",
       "max_usage"},
      3);
  Table usage = make_table("anchors_usage", "anchor usage Δ_m / N per layer, head and anchor",
                           {"layer", "path", "head", "anchor", "usage"}, 4);
  for (const auto& l : layers) {
    if (!l.trace->has_internal("anchor.A")) continue;
    const auto a = analysis::anchor_assignment(*l.trace, 0);
    const auto& lay = l.trace->layout;
    const int64_t p = lay.num_prefix(), heads_n = a.hard.size(0);
    const at::Tensor grid_hard = at::cat({a.hard, a.fused_hard.unsqueeze(0)})
                                     .slice(1, p)
                                     .reshape({heads_n + 1, lay.height, lay.width});
    const std::string stem = anchor_array_stem(tag, l.index);
    sink_(to_array(grid_hard, stem + "__hard", {"head", "y", "x"},
                   "hard anchor (argmax of A) of every grid token of " + l.path +
                       "; the last head slot is the head-mean of A"));
    sink_(to_array(a.soft, stem + "__soft", {"head", "token", "anchor"},
                   "soft assignment A of every token (prefix tokens first) of " + l.path));
    auto used = [](const at::Tensor& hard, int64_t m) {
      return at::bincount(hard, {}, m).gt(0).sum().item<int64_t>();
    };
    const int64_t m = a.usage.size(1);
    for (int64_t h = 0; h < heads_n; ++h) {
      heads.add_row({l.index, l.path, std::to_string(h), a.coherence[h].item<double>(),
                     a.coherence_chance[h].item<double>(), a.entropy[h].mean().item<double>(),
                     used(a.hard[h], m), a.usage[h].max().item<double>()});
      for (int64_t k = 0; k < m; ++k)
        usage.add_row({l.index, l.path, std::to_string(h), k, a.usage[h][k].item<double>()});
    }
    heads.add_row({l.index, l.path, "fused", a.fused_coherence, a.fused_coherence_chance,
                   a.entropy.mean().item<double>(), used(a.fused_hard, m),
                   a.fused_usage.max().item<double>()});
  }
  accumulate(heads);
  accumulate(usage);
}

void AnalysisSession::add_mask(const std::vector<Layer>& layers) {
  Table t = make_table(
      "mask_heads",
      "Castling auxiliary mask: share and count of softmax(q·kᵀ/√d) entries above the threshold, "
      "per layer and head (\"all\" = every head)",
      {"layer", "path", "head", "threshold", "fraction", "count", "entries"}, 3);
  for (const auto& l : layers) {
    if (l.trace->mechanism != "castling") continue;
    const double thr = settings_.mask_threshold < 0 ? attention::castling_threshold(*l.trace)
                                                    : settings_.mask_threshold;
    const auto s = attention::castling_mask_statistics(*l.trace, thr);
    for (size_t h = 0; h < s.above_per_head.size(); ++h)
      t.add_row({l.index, l.path, std::to_string(h), thr, s.fraction(int64_t(h)),
                 s.above_per_head[h], s.entries_per_head});
    t.add_row({l.index, l.path, "all", thr, s.overall_fraction(), s.above_total,
               s.entries_per_head * int64_t(s.above_per_head.size())});
  }
  accumulate(t);
}

void AnalysisSession::add_locality(const std::vector<Layer>& layers) {
  Table heads = make_table("locality_heads",
                           "mean attention distance (in patches of the layer's grid) per head",
                           {"layer", "path", "mechanism", "grid", "head", "mean_distance"}, 5);
  Table summary =
      make_table("locality_layers", "mean attention distance (patches) per layer, mean over heads",
                 {"layer", "path", "mechanism", "grid", "mean_distance"}, 4);
  for (const auto& l : layers) {
    const at::Tensor d = analysis::mean_attention_distance(*l.trace, 0);
    const std::string grid = grid_text(l.trace->layout);
    for (int64_t h = 0; h < d.size(0); ++h)
      heads.add_row({l.index, l.path, l.trace->mechanism, grid, h, d[h].item<double>()});
    summary.add_row({l.index, l.path, l.trace->mechanism, grid, d.mean().item<double>()});
  }
  accumulate(heads);
  accumulate(summary);
}

}  // namespace attnlab::models
