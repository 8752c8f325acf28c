// The session check's comparison of one analysis's outputs; the tolerances and why are in
// session_compare.h. The rules below say, per output, which kind it is and its κ.
#include "bench/gpu_check/session_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <optional>

#include "core/analysis/result_key.h"
#include "tests/support/bf16_bounds.h"

namespace attnlab::gpucheck {
namespace {

// The reduction length the bounds assume: above every model's longest (fc2 of a ViT-B:
// 3072 inputs; the keys of every layer at the check's sizes).
constexpr int64_t kReduction = 4096;

enum class Kind {
  Continuous,  // |d| <= kappa·eps·scale
  Discrete,    // counted as flips, never failed
  Unjudged,    // reported, not judged (why says why)
  Exact,       // must be equal (keys, shapes, counts of images)
};

struct Rule {
  Kind kind = Kind::Continuous;
  double kappa = 1;
  std::string why;
  std::string scale_column;  // a difference of two values: scale of this column instead
  bool share = false;        // a share of a total, in [0, 1]: scale 1 (an absolute bound)
};

bool has(const std::string& s, const char* part) {
  return s.find(part) != std::string::npos;
}
bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Analyses of the predicted class (heads' ablations, faithfulness's target): when the two
// sides predict different classes they explain different things.
bool of_the_predicted_class(const std::string& analysis) {
  return analysis == "heads" || analysis == "faithfulness";
}

// A table's value column: tests/analysis/bf16_analyses_test.cpp's rule_for, plus erf, heads
// and faithfulness.
Rule column_rule(const std::string& table, const std::string& column, const Bounds& b) {
  const Rule discrete{Kind::Discrete, 0, "", ""};
  if (column == "images") return {Kind::Exact, 0, "", ""};
  // The effective rank is exp of the singular values' entropy, continuous (κ as the
  // support's below), but it weighs in all the small ones, which bf16's rounding lifts to
  // about u of the largest (bf16_analyses_test).
  if (has(column, "effective_rank"))
    return b.bf16 ? Rule{Kind::Unjudged, 0,
                         "weighs in the small singular values, which bf16's rounding lifts", ""}
                  : Rule{Kind::Continuous, 6, "", ""};
  if (has(column, "ambiguous") || column == "full_mean" ||
      ((ends_with(column, "rank_mean") || ends_with(column, "rank_max_mean") ||
        ends_with(column, "rank_min_mean")) &&
       !has(column, "stable_rank")) ||
      ((ends_with(column, "rank_std") || ends_with(column, "rank_max_std") ||
        ends_with(column, "rank_min_std")) &&
       !has(column, "stable_rank")))
    return discrete;  // numerical ranks: counts over a tolerance near the rounding
  if (table == "anchors_heads" && column != "mean_entropy_mean" && column != "max_usage_mean" &&
      column != "mean_entropy_std" && column != "max_usage_std")
    return discrete;                              // argmax assignments
  if (table == "anchors_usage") return discrete;  // tokens per anchor: argmax counts
  // Σ|F|² beyond half Nyquist over Σ|F|²: each sum within ε of the total energy (a norm of
  // the values), so the share moves by at most 2ε of 1, not of itself (random weights make
  // channels whose share is near 0). But one channel's errors are ε of the layer's scale,
  // not of the channel's: in a channel far below the layer's scale at bf16, rounding is most
  // of its variation and its share is undefined, so bf16_analyses_test leaves the channels
  // out and compares the layers' mean share; so does this at bf16.
  if (b.bf16 && table == "spectra_channels")
    return {Kind::Unjudged, 0,
            "a channel far below its layer's scale is mostly bf16 rounding (bf16_analyses_test)",
            ""};
  if (has(column, "high_frequency_ratio")) return {Kind::Continuous, 2, "", "", true};
  if (table == "mask_heads" && (has(column, "count") || has(column, "fraction"))) return discrete;
  if (table == "outliers_layers" &&
      (has(column, "outliers_") || has(column, "outlier_share") || has(column, "outlier_mass")))
    return discrete;  // tokens over a factor of the median norm
  if (table == "segmentation" && column != "tau_mean" && column != "tau_std") return discrete;
  if ((table == "lens" || table == "lens_images") &&
      (has(column, "agrees") || has(column, "top1") || has(column, "label_rank") ||
       has(column, "label_top1")) &&
      !has(column, "top1_probability"))
    return discrete;
  if (table == "feature_pca")
    return {Kind::Unjudged, 0, "fitted on the tokens over a threshold (bf16_analyses_test)", ""};
  if (table == "similarity" && has(column, "alike")) return discrete;
  if (table == "head_importance" && has(column, "top1_kept")) return discrete;
  if (table == "head_importance" && has(column, "probability_drop"))
    return {Kind::Continuous, 2, "",
            ends_with(column, "_std") ? "probability_std" : "probability_mean"};
  if (table.rfind("erf", 0) == 0 && (has(column, "area") || has(column, "radius")))
    return discrete;  // pixels counted until a share of the mass: a threshold
  if (table.rfind("faithfulness", 0) == 0)
    return {Kind::Unjudged, 0,
            "perturbation order sorts a map's values (near-ties reorder it) and top-1 hits are "
            "argmaxes",
            ""};
  if (table == "explanations") return {Kind::Continuous, 1, "", ""};  // the logit
  if (table == "rollout_summary") return {Kind::Continuous, double(b.blocks), "", ""};
  if (has(column, "hsic")) return {Kind::Continuous, 4, "", ""};  // two Gram matrices
  if (has(column, "cka")) return {Kind::Continuous, 8, "", ""};   // HSIC / sqrt(HSIC·HSIC)
  if (has(column, "stable_rank")) return {Kind::Continuous, 4, "", ""};
  if (has(column, "support")) return {Kind::Continuous, 6, "", ""};  // exp(H): ε·ln N, N < 400
  if (has(column, "ratio") || has(column, "normalised") || has(column, "over_median") ||
      has(column, "chance") || has(column, "probability") || has(column, "kl"))
    return {Kind::Continuous, 2, "", ""};  // a ratio (a softmax, a KL) of two values within ε
  return {Kind::Continuous, 1, "", ""};
}

// An array family (analysis and key part).
Rule array_rule(const analysis::ResultKey& key, const Bounds& b) {
  const std::string& a = key.analysis;
  const std::string& part = key.part;
  if ((a == "anchors" && part == "hard") || a == "segmentation") return {Kind::Discrete, 0, "", ""};
  if (a == "feature_pca")
    return {Kind::Unjudged, 0, "fitted on the tokens over a threshold; a component's sign is free",
            ""};
  if (a == "rollout") return {Kind::Continuous, double(b.blocks), "", ""};
  // Gradients: the backward pass rounds about as often as the forward (√2 more ε), and
  // Grad-CAM multiplies activations by gradients (degree 2): 2·√2 < 4; gradient rollout is
  // that per layer, multiplied over the layers.
  if (a == "gradcam") return {Kind::Continuous, 4, "", ""};
  if (a == "gradrollout") return {Kind::Continuous, 4.0 * b.blocks, "", ""};
  if (a == "erf") return {Kind::Continuous, 2, "", ""};
  if (a == "cka") return {Kind::Continuous, 4, "", ""};  // HSICs: two Gram matrices
  if (a == "spectra" && part == "radial")
    return {Kind::Unjudged, 0,
            "ring means of log|F|: a coefficient far below the largest has a relative error "
            "beyond eps, so its log has no bound (log_amplitude compares |F| itself)",
            ""};
  // log amplitudes are compared as amplitudes (exp), a norm-like linear map of the values.
  return {Kind::Continuous, 1, "", ""};
}

struct Diff {
  double max_rel = 0;  // max |d| / scale
  // Entries that differ, and that differ by more than `flip_bound` of the scale (a
  // discrete output's flips: more than rounding alone explains), of `total`.
  int64_t changed = 0, flipped = 0, total = 0, nan_mismatch = 0;
};

Diff diff_values(const std::vector<double>& ref, const std::vector<double>& dev, double flip_bound,
                 const std::vector<double>* scale_from = nullptr) {
  Diff d;
  double scale = 0, worst = 0;
  for (double v : scale_from ? *scale_from : ref)
    if (std::isfinite(v)) scale = std::max(scale, std::abs(v));
  const double unit = scale > 0 ? scale : 1.0;
  for (size_t i = 0; i < ref.size(); ++i) {
    ++d.total;
    const bool na = std::isnan(ref[i]), nb = std::isnan(dev[i]);
    if (na || nb || std::isinf(ref[i]) || std::isinf(dev[i])) {
      const bool same = (na && nb) || ref[i] == dev[i];
      d.nan_mismatch += !same;
      d.changed += !same;
      d.flipped += !same;
      continue;
    }
    if (ref[i] != dev[i]) ++d.changed;
    const double delta = std::abs(ref[i] - dev[i]);
    if (delta > flip_bound * unit) ++d.flipped;
    worst = std::max(worst, delta);
  }
  d.max_rel = worst / unit;
  return d;
}

__attribute__((format(printf, 1, 2))) std::string fmt(const char* f, ...) {
  char buf[200];
  va_list args;
  va_start(args, f);
  std::vsnprintf(buf, sizeof buf, f, args);
  va_end(args);
  return buf;
}

Verdict judge(const std::string& output, const Rule& rule, const Diff& d, const Bounds& b) {
  Verdict v{output, "", false, false};
  switch (rule.kind) {
    case Kind::Exact:
      v.failed = d.changed > 0;
      v.text = d.changed
                   ? fmt("%g of %g differ (must be equal) FAIL", double(d.changed), double(d.total))
                   : "equal PASS";
      break;
    case Kind::Discrete:
      // A flip: a change beyond eps of the scale, which rounding alone cannot make.
      v.flips = d.flipped > 0;
      v.text = fmt("flips: %g of %g (discrete; beyond %.1e; max|d|/scale %.1e)", double(d.flipped),
                   double(d.total), b.eps, d.max_rel);
      break;
    case Kind::Unjudged:
      v.text = fmt("max|d|/scale %.1e (%s eps %.1e), not judged: ", d.max_rel,
                   d.max_rel <= b.eps ? "within" : "beyond", b.eps) +
               rule.why;
      break;
    case Kind::Continuous: {
      const double bound = rule.kappa * b.eps;
      v.failed = d.nan_mismatch > 0 || !(d.max_rel <= bound);
      v.text = fmt("max|d|/scale %.1e <= %.1e (k=%g) ", d.max_rel, bound, rule.kappa) +
               (d.nan_mismatch ? fmt("%g NaN/inf mismatches ", double(d.nan_mismatch)) : "") +
               (v.failed ? "FAIL" : "PASS");
      break;
    }
  }
  return v;
}

std::vector<double> column_values(const analysis::Table& t, size_t c) {
  std::vector<double> out;
  for (const auto& row : t.rows) out.push_back(row[c].numeric() ? row[c].number() : std::nan(""));
  return out;
}

void compare_table(const analysis::Table& ref, const analysis::Table* dev, const Bounds& b,
                   bool class_differs, const std::string& analysis, std::vector<Verdict>& out) {
  const std::string name = "table " + ref.name;
  if (!dev) {
    out.push_back({name, "missing on the device FAIL", true, false});
    return;
  }
  if (dev->columns != ref.columns || dev->rows.size() != ref.rows.size()) {
    out.push_back({name,
                   fmt("shape differs: %g rows on the CPU, %g on the device FAIL",
                       double(ref.rows.size()), double(dev->rows.size())),
                   true, false});
    return;
  }
  // Keys and text cells: equal, or the rows are not the same rows.
  int64_t key_diffs = 0;
  for (size_t r = 0; r < ref.rows.size(); ++r)
    for (size_t c = 0; c < ref.columns.size(); ++c) {
      const auto &x = ref.rows[r][c], &y = dev->rows[r][c];
      if ((c < ref.key_columns || !x.numeric() || !y.numeric()) && x.str() != y.str()) ++key_diffs;
    }
  if (key_diffs)
    out.push_back(
        {name + " keys", fmt("%g key or text cells differ FAIL", double(key_diffs)), true, false});
  for (size_t c = ref.key_columns; c < ref.columns.size(); ++c) {
    const std::string col = ref.columns[c];
    if (!ref.rows.empty() && !ref.rows[0][c].numeric()) continue;  // text: checked above
    Rule rule = column_rule(ref.name, col, b);
    if (class_differs && of_the_predicted_class(analysis) && rule.kind != Kind::Exact)
      rule = {Kind::Unjudged, 0, "the two sides predict different classes", ""};
    const std::vector<double> x = column_values(ref, c), y = column_values(*dev, c);
    std::optional<std::vector<double>> scale;
    if (!rule.scale_column.empty())
      for (size_t s = 0; s < ref.columns.size(); ++s)
        if (ref.columns[s] == rule.scale_column) scale = column_values(ref, s);
    if (rule.share) scale = std::vector<double>{1.0};
    const Diff d = diff_values(x, y, b.eps, scale ? &*scale : nullptr);
    // With one image every *_std column is 0 on both sides: compared, printed when not.
    if (ends_with(col, "_std") && d.changed == 0) continue;
    out.push_back(judge(name + "." + col, rule, d, b));
  }
}

}  // namespace

Bounds bounds_for(bool bf16, int blocks) {
  Bounds b;
  b.bf16 = bf16;
  b.blocks = blocks;
  const double n = double(testing::bf16_roundings(blocks));
  const double eps32 =
      testing::kBf16Lambda * std::sqrt(n * double(kReduction)) * testing::kFp32UnitRoundoff;
  b.eps = bf16 ? testing::bf16_forward_error(blocks, kReduction) + eps32 : 2 * eps32;
  return b;
}

std::vector<Verdict> compare_results(const std::string& analysis, const SideResults& cpu,
                                     const SideResults& device, const Bounds& bounds) {
  std::vector<Verdict> out;
  const bool class_differs = cpu.top1 != device.top1;
  for (const auto& t : cpu.tables) {
    const analysis::Table* other = nullptr;
    for (const auto& u : device.tables)
      if (u.name == t.name) other = &u;
    compare_table(t, other, bounds, class_differs, analysis, out);
  }
  for (const auto& u : device.tables)
    if (std::none_of(cpu.tables.begin(), cpu.tables.end(),
                     [&](const analysis::Table& t) { return t.name == u.name; }))
      out.push_back({"table " + u.name, "only on the device FAIL", true, false});
  // Arrays by family (analysis, branch, part: every layer and image together).
  struct Family {
    Rule rule;
    Diff diff;
    int64_t arrays = 0;
    std::string problem;
  };
  std::map<std::string, Family> families;
  std::map<std::string, const analysis::Array*> on_device;
  for (const auto& a : device.arrays) on_device[a.name] = &a;
  for (const auto& a : cpu.arrays) {
    const auto key = analysis::parse_result_key(a.name);
    const std::string family =
        key ? key->analysis + "[" + (key->branch.empty() ? "" : key->branch + "/") + key->part + "]"
            : a.name;
    Family& f = families[family];
    f.rule = key ? array_rule(*key, bounds) : Rule{};
    if (class_differs && of_the_predicted_class(analysis))
      f.rule = {Kind::Unjudged, 0, "the two sides predict different classes", ""};
    ++f.arrays;
    const auto it = on_device.find(a.name);
    if (it == on_device.end()) {
      f.problem = a.name + " missing on the device";
      continue;
    }
    const analysis::Array& b = *it->second;
    on_device.erase(it);
    if (b.shape != a.shape) {
      f.problem = a.name + " has another shape on the device";
      continue;
    }
    const bool log_amplitude = key && key->part == "log_amplitude";
    std::vector<double> x(a.data.begin(), a.data.end()), y(b.data.begin(), b.data.end());
    if (log_amplitude)
      for (size_t i = 0; i < x.size(); ++i) x[i] = std::exp(x[i]), y[i] = std::exp(y[i]);
    const Diff d = diff_values(x, y, bounds.eps);
    f.diff.max_rel = std::max(f.diff.max_rel, d.max_rel);
    f.diff.changed += d.changed;
    f.diff.flipped += d.flipped;
    f.diff.total += d.total;
    f.diff.nan_mismatch += d.nan_mismatch;
  }
  for (const auto& [name, a] : on_device)
    out.push_back({"array " + name, "only on the device FAIL", true, false});
  for (const auto& [name, f] : families) {
    if (!f.problem.empty()) {
      out.push_back({"array " + name, f.problem + " FAIL", true, false});
      continue;
    }
    Verdict v = judge("array " + name, f.rule, f.diff, bounds);
    v.text += fmt(" (%g arrays)", double(f.arrays));
    out.push_back(v);
  }
  return out;
}

}  // namespace attnlab::gpucheck
