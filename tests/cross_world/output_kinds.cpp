// The outputs that are not continuous, by table and column or by array name (output_kinds.h).
#include "tests/cross_world/output_kinds.h"

#include <map>
#include <set>
#include <utility>

namespace attnlab::testing::cross_world {
namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// "rank_mean" → "rank": the statistic a mean column averages over the images.
std::string base_column(const std::string& column) {
  for (const char* tail : {"_mean", "_std"})
    if (ends_with(column, tail)) return column.substr(0, column.size() - std::string(tail).size());
  return column;
}

struct Rule {
  std::set<std::string> columns;
  const char* why;
};

// Discrete columns of each table (base names), with what decides them.
const std::map<std::string, std::vector<Rule>>& discrete_columns() {
  static const std::map<std::string, std::vector<Rule>> rules = {
      {"anchors_heads",
       {{{"coherence", "coherence_chance", "anchors_used"},
         "shares and counts of the hard anchor labels, each an argmax"}}},
      {"entropy_heads", {{{"signed_rows"}, "whether a row holds a negative weight: a sign test"}}},
      {"erf",
       {{{"pixels", "area_share", "side_px", "radius_px"},
         "the fewest pixels, the smallest radius reaching a share of the map"}}},
      {"erf_images",
       {{{"pixels", "area_share", "side_px", "radius_px"},
         "the fewest pixels, the smallest radius reaching a share of the map"}}},
      {"faithfulness_curves", {{{"fraction"}, "the share of cells changed at a step: a count"}}},
      {"feature_pca",
       {{{"height", "width", "channels", "foreground_tokens", "foreground_share", "threshold",
          "masked", "flipped", "images_fitted"},
         "sizes, the tokens above the foreground threshold, the border sign rule"}}},
      {"head_importance", {{{"top1_kept"}, "whether the argmax class survives"}}},
      {"lens", {{{"agrees", "label_rank", "label_top1"}, "argmax and rank of the classes"}}},
      {"lens_images",
       {{{"top1", "label", "label_rank", "agrees", "label_top1"},
         "argmax and rank of the classes"}}},
      {"map_rank_heads",
       {{{"tokens", "keys", "bound"}, "sizes"},
        {{"precision_rank"}, "singular values above 2·√max(m, n)·ε32·σ_max: a count"}}},
      {"map_rank_layers",
       {{{"full", "bound"}, "sizes"},
        {{"precision_rank"}, "singular values above 2·√max(m, n)·ε32·σ_max: a count"}}},
      {"merges_layers",
       {{{"tokens_in", "tokens_out", "largest_group", "mean_group", "merged_share"},
         "ToMe's merges: each token's best match and the r best matches, argmax and sort"}}},
      {"agents_layers", {{{"agents"}, "a size"}}},
      {"routing_layers",
       {{{"regions", "topk", "region_h", "region_w"}, "sizes"},
        {{"self_routed", "distance", "coverage"}, "BiFormer's routed regions: a top-k"}}},
      {"sampling_layers",
       {{{"groups", "samples"}, "sizes"},
        {{"border_share"}, "samples at or beyond the grid's border: a threshold"}}},
      {"mask_heads",
       {{{"threshold", "fraction", "count", "entries"}, "entries above the threshold: a count"}}},
      {"outliers_layers",
       {{{"tokens", "factor", "outliers", "outlier_share", "grid_outliers", "registers"},
         "tokens above the factor times the median norm: a count"}}},
      {"rank_heads",
       {{{"rows", "cols"}, "sizes"},
        {{"precision_rank", "precision_ambiguous"},
         "singular values above (or within 4x of) 2·√max(m, n)·ε32·σ_max: a count"}}},
      {"rank_layers",
       {{{"full"}, "sizes"},
        {{"precision_rank", "precision_ambiguous"},
         "singular values above (or within 4x of) 2·√max(m, n)·ε32·σ_max: a count"}}},
      {"segmentation", {{{"kept"}, "the fewest tokens holding the mass τ: a count"}}},
      {"similarity", {{{"alike"}, "tokens with a cosine above 0.5: a count"}}},
      {"spectra_layers", {{{"channels"}, "a size"}}},
  };
  return rules;
}

// Counts under the dtype's ε, and the column flagging their ambiguity ("table.column",
// "@layer": any row of that table with the same layer).
const std::map<std::pair<std::string, std::string>, std::string>& dtype_counts() {
  static const std::map<std::pair<std::string, std::string>, std::string> counts = {
      {{"rank_heads", "rank"}, "rank_heads.rank_ambiguous_mean"},
      {{"rank_heads", "rank_ambiguous"}, "rank_heads.rank_ambiguous_mean"},
      {{"rank_layers", "rank"}, "rank_layers.rank_ambiguous_mean"},
      {{"rank_layers", "rank_ambiguous"}, "rank_layers.rank_ambiguous_mean"},
      {{"map_rank_heads", "rank"}, "map_rank_heads.rank_ambiguous_mean"},
      {{"map_rank_heads", "rank_ambiguous"}, "map_rank_heads.rank_ambiguous_mean"},
      // The lifted map A + W_c writes no flag of its own: A's is the one written for the
      // head, and the test says when it is the reason a lifted rank may differ.
      {{"map_rank_heads", "lifted_rank"}, "map_rank_heads.rank_ambiguous_mean"},
      {{"map_rank_heads", "lifted_rank_min"}, "map_rank_heads.rank_ambiguous_mean"},
      {{"map_rank_heads", "lifted_rank_max"}, "map_rank_heads.rank_ambiguous_mean"},
      {{"map_rank_layers", "rank"}, "map_rank_heads.rank_ambiguous_mean@layer"},
      {{"map_rank_layers", "lifted_rank"}, "map_rank_heads.rank_ambiguous_mean@layer"},
  };
  return counts;
}

const std::set<std::pair<std::string, std::string>>& dtype_tolerances() {
  static const std::set<std::pair<std::string, std::string>> t = {
      {"rank_heads", "tolerance"}, {"rank_layers", "tolerance_rel"}, {"map_rank_heads", "tolerance"}};
  return t;
}

// Continuous columns fixed by a discrete one of the same row.
const std::map<std::pair<std::string, std::string>, std::string>& decided_columns() {
  static const std::map<std::pair<std::string, std::string>, std::string> d = {
      {{"segmentation", "mass"}, "segmentation.kept_mean"},
      {{"segmentation", "jaccard"}, "segmentation.kept_mean"},
      {{"outliers_layers", "outlier_mass"}, "outliers_layers.outliers_mean"},
      {{"feature_pca", "explained_pc1"}, "feature_pca.foreground_tokens_mean"},
      {{"feature_pca", "explained_pc2"}, "feature_pca.foreground_tokens_mean"},
      {{"feature_pca", "explained_pc3"}, "feature_pca.foreground_tokens_mean"},
  };
  return d;
}

OutputKind array_kind(const std::string& file) {
  OutputKind k;
  if (ends_with(file, "__hard.npy")) {
    k.kind = Kind::Discrete;
    k.why = "each token's anchor: an argmax";
  } else if (ends_with(file, "__masks.npy") || ends_with(file, "__foreground.npy")) {
    k.kind = Kind::Discrete;
    k.why = "tokens in or out of a mask: a threshold";
  } else if (ends_with(file, "__group.npy")) {
    k.kind = Kind::Discrete;
    k.why = "each patch's merged token: ToMe's argmax matches";
  } else if (ends_with(file, "__route.npy") || ends_with(file, "__region.npy")) {
    k.kind = Kind::Discrete;
    k.why = "BiFormer's routed regions (a top-k) and its region tiling";
  } else if (ends_with(file, "__jaccard.npy")) {
    k.decided_by = file.substr(0, file.size() - std::string("__jaccard.npy").size()) + "__masks.npy";
  } else if (ends_with(file, "__rgb.npy")) {
    k.decided_by =
        file.substr(0, file.size() - std::string("__rgb.npy").size()) + "__foreground.npy";
  }
  return k;
}

}  // namespace

OutputKind output_kind(const ValueGroup& g) {
  if (g.table.empty()) return array_kind(g.column);
  OutputKind k;
  const std::string column = base_column(g.column);
  if (ends_with(g.column, "_std")) return k;  // one image: 0 by definition, compared as 0
  if (column == "images") {
    k.kind = Kind::Discrete;
    k.why = "the number of images";
    return k;
  }
  const auto rules = discrete_columns().find(g.table);
  if (rules != discrete_columns().end())
    for (const Rule& r : rules->second)
      if (r.columns.count(column)) {
        k.kind = Kind::Discrete;
        k.why = r.why;
        return k;
      }
  const auto count = dtype_counts().find({g.table, column});
  if (count != dtype_counts().end()) {
    k.kind = Kind::DtypeDiscrete;
    k.why = "singular values above max(m, n)·ε·σ_max, ε the dtype's";
    k.ambiguity_flag = count->second;
    return k;
  }
  if (dtype_tolerances().count({g.table, column})) {
    k.kind = Kind::DtypeContinuous;
    k.why = "max(m, n)·ε·σ_max (or its factor), ε the dtype's";
    return k;
  }
  const auto decided = decided_columns().find({g.table, column});
  if (decided != decided_columns().end()) k.decided_by = decided->second;
  return k;
}

}  // namespace attnlab::testing::cross_world
