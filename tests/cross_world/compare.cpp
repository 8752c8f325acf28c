// Four runs of one case compared group by group (compare.h).
#include "tests/cross_world/compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "tests/cross_world/output_kinds.h"
#include "tests/cross_world/tolerance.h"

namespace attnlab::testing::cross_world {
namespace {

std::string where(const ValueGroup& g, size_t i) {
  return g.name() + (g.table.empty() ? "[" + std::to_string(i) + "]" : " row " + g.rows[i]);
}

std::string number(double v) {
  std::ostringstream s;
  s.precision(6);
  s << v;
  return s.str();
}

// Whether element i of `name` differs between the worlds at one precision (false when the
// group is missing: its own comparison reports that).
bool differs(const Values& ref, const Values& cur, const std::string& name, size_t i) {
  const auto r = ref.find(name), c = cur.find(name);
  if (r == ref.end() || c == cur.end() || i >= r->second.values.size() ||
      i >= c->second.values.size())
    return false;
  const double a = r->second.values[i], b = c->second.values[i];
  return !(a == b || (std::isnan(a) && std::isnan(b)));
}

bool any_differs(const Values& ref, const Values& cur, const std::string& name) {
  const auto r = ref.find(name);
  if (r == ref.end()) return false;
  for (size_t i = 0; i < r->second.values.size(); ++i)
    if (differs(ref, cur, name, i)) return true;
  return false;
}

// The ambiguity flag of a dtype-defined count's row, in either world, at one precision.
bool flagged(const Values& ref, const Values& cur, const std::string& flag, const ValueGroup& g,
             size_t i) {
  const bool by_layer = flag.size() > 6 && flag.compare(flag.size() - 6, 6, "@layer") == 0;
  const std::string name = by_layer ? flag.substr(0, flag.size() - 6) : flag;
  for (const Values* v : {&ref, &cur}) {
    const auto f = v->find(name);
    if (f == v->end()) continue;
    const ValueGroup& fg = f->second;
    if (!by_layer) {
      if (i < fg.values.size() && fg.values[i] > 0) return true;
      continue;
    }
    const std::string layer = g.rows[i].substr(0, g.rows[i].find('/'));
    for (size_t j = 0; j < fg.rows.size(); ++j)
      if (fg.rows[j].substr(0, fg.rows[j].find('/')) == layer && fg.values[j] > 0) return true;
  }
  return false;
}

class GroupCheck {
 public:
  GroupCheck(const Runs& runs, const std::string& analysis, Comparison& out)
      : runs_(runs), analysis_(analysis), out_(out) {}

  void run(const std::string& name) {
    const ValueGroup& r32 = runs_.ref32.at(name);
    const ValueGroup* sides[] = {&runs_.ref64.at(name), &runs_.cur32.at(name),
                                 &runs_.cur64.at(name)};
    for (const ValueGroup* s : sides)
      if (s->rows != r32.rows || s->shape != r32.shape || s->values.size() != r32.values.size() ||
          s->texts.size() != r32.texts.size())
        return fail(name + ": the runs' rows or shapes differ (" + r32.shape + " / " + s->shape +
                    ", " + std::to_string(r32.rows.size()) + " / " +
                    std::to_string(s->rows.size()) + " rows)");
    if (!r32.texts.empty()) {
      for (const ValueGroup* s : sides)
        if (s->texts != r32.texts) return fail(name + ": a text column differs");
      return;
    }
    const ValueGroup& g = r32;
    const OutputKind kind = output_kind(g);
    switch (kind.kind) {
      case Kind::Discrete:
      case Kind::DtypeDiscrete:
        return discrete(g, kind);
      case Kind::Continuous:
      case Kind::DtypeContinuous:
        return continuous(g, kind);
    }
  }

 private:
  void fail(const std::string& line) { out_.failures.push_back(line); }

  void discrete(const ValueGroup& g, const OutputKind& kind) {
    const std::string& name = g.name();
    for (size_t i = 0; i < g.values.size(); ++i) {
      // A float32 rounding moved this decision in a world: it lies at its boundary.
      const bool marginal = kind.kind == Kind::Discrete &&
                            (differs(runs_.ref32, runs_.ref64, name, i) ||
                             differs(runs_.cur32, runs_.cur64, name, i));
      const bool agree64 = !differs(runs_.ref64, runs_.cur64, name, i);
      ++out_.discrete_compared[analysis_];
      for (const bool f64 : {true, false}) {
        const Values& ref = f64 ? runs_.ref64 : runs_.ref32;
        const Values& cur = f64 ? runs_.cur64 : runs_.cur32;
        if (!differs(ref, cur, name, i)) continue;
        const double a = ref.at(name).values[i], b = cur.at(name).values[i];
        const std::string what = std::string(f64 ? "float64 " : "float32 ") + where(g, i) +
                                 ": " + number(a) + " (reference) vs " + number(b);
        if (kind.kind == Kind::DtypeDiscrete && !kind.ambiguity_flag.empty() &&
            flagged(ref, cur, kind.ambiguity_flag, g, i)) {
          out_.allowed.push_back(what + ": " + kind.ambiguity_flag + " flags the row");
        } else if (kind.kind == Kind::Discrete && !f64 && marginal && agree64) {
          out_.allowed.push_back(what + ": float32 and float64 disagree on it in a world");
        } else {
          fail(what + " (" + kind.why + (f64 ? ")" : "; no sign that it lies at its boundary)"));
        }
      }
    }
  }

  void continuous(const ValueGroup& g, const OutputKind& kind) {
    const std::string& name = g.name();
    const Values &r32 = runs_.ref32, &r64 = runs_.ref64, &c32 = runs_.cur32, &c64 = runs_.cur64;
    const bool rounded = g.table.empty();  // arrays leave the float64 runs as float32
    const bool by_row = !kind.decided_by.empty() && !g.table.empty();
    // Whether element i's deciding discrete value differs: between the worlds at one
    // precision (not compared), or inside a world (not measured: a jump, not rounding).
    const auto decided_apart = [&](const Values& a, const Values& b, size_t i) {
      if (kind.decided_by.empty()) return false;
      return by_row ? differs(a, b, kind.decided_by, i) : any_differs(a, b, kind.decided_by);
    };
    const std::vector<double>& a32 = r32.at(name).values;
    const std::vector<double>& a64 = r64.at(name).values;
    const std::vector<double>& b32 = c32.at(name).values;
    const std::vector<double>& b64 = c64.at(name).values;
    double m_ref = 0.0, m_cur = 0.0, scale64 = 0.0, scale32 = 0.0;
    for (size_t i = 0; i < a32.size(); ++i) {
      if (std::isfinite(a64[i])) scale64 = std::max(scale64, std::abs(a64[i]));
      if (std::isfinite(b64[i])) scale64 = std::max(scale64, std::abs(b64[i]));
      if (std::isfinite(a32[i])) scale32 = std::max(scale32, std::abs(a32[i]));
      if (std::isfinite(a32[i]) && std::isfinite(a64[i]) && !decided_apart(r32, r64, i))
        m_ref = std::max(m_ref, std::abs(a32[i] - a64[i]));
      if (std::isfinite(b32[i]) && std::isfinite(b64[i]) && !decided_apart(c32, c64, i))
        m_cur = std::max(m_cur, std::abs(b32[i] - b64[i]));
    }
    if (kind.kind == Kind::DtypeContinuous) {
      // σ_max times an exact constant: κ = 1, the a-priori budget at each precision.
      m_ref = m_cur = 0.0;
    }
    const double m_both = std::max(m_ref, m_cur);
    for (size_t i = 0; i < a32.size(); ++i) {
      for (const bool f64 : {true, false}) {
        const double a = f64 ? a64[i] : a32[i], b = f64 ? b64[i] : b32[i];
        if (std::isfinite(a) != std::isfinite(b)) {
          fail(std::string(f64 ? "float64 " : "float32 ") + where(g, i) + ": " + number(a) +
               " (reference) vs " + number(b));
          continue;
        }
        if (!std::isfinite(a)) continue;
        if (f64 ? decided_apart(r64, c64, i) : decided_apart(r32, c32, i)) {
          out_.allowed.push_back(std::string(f64 ? "float64 " : "float32 ") + where(g, i) +
                                 ": not compared, " + kind.decided_by + " differs");
          continue;
        }
        double bound64;
        if (kind.kind == Kind::DtypeContinuous)
          bound64 = float64_bound(apriori_float32(scale64, runs_.roundings), scale64, a64[i],
                                  b64[i], rounded);
        else if (runs_.float32_constants)
          bound64 = float32_bound(m_ref, scale64, runs_.roundings, 0.0);
        else
          bound64 = float64_bound(m_both, scale64, a64[i], b64[i], rounded);
        const double bound = !f64 ? (kind.kind == Kind::DtypeContinuous
                                         ? float32_bound(0.0, scale32, runs_.roundings, 0.0)
                                         : float32_bound(m_ref, scale64, runs_.roundings, bound64))
                                  : bound64;
        const double diff = std::abs(a - b);
        Worst& w = (f64 ? out_.float64 : out_.float32)[analysis_];
        ++w.compared;
        const double ratio =
            diff == 0.0 ? 0.0 : bound > 0.0 ? diff / bound : std::numeric_limits<double>::infinity();
        if (ratio >= w.ratio && (ratio > 0.0 || w.where.empty()))
          w = {ratio, diff, bound, where(g, i), w.compared};
        if (diff > bound)
          fail(std::string(f64 ? "float64 " : "float32 ") + where(g, i) + ": " + number(a) +
               " (reference) vs " + number(b) + ", |d| " + number(diff) + " > bound " +
               number(bound) + " (group's float32 error: reference " + number(m_ref) +
               ", here " + number(m_cur) + "; scale " + number(scale64) + ")");
      }
    }
  }

  const Runs& runs_;
  std::string analysis_;
  Comparison& out_;
};

}  // namespace

Comparison compare_runs(const Runs& runs, const std::map<std::string, std::string>& analysis_of) {
  Comparison out;
  for (const auto* side : {&runs.ref64, &runs.cur32, &runs.cur64})
    for (const auto& [name, g] : *side)
      if (!runs.ref32.count(name))
        out.failures.push_back(name + ": not in every run (the reference lacks it: regenerate "
                               "it with scripts/make_cross_world_reference.sh?)");
  for (const auto& [name, g] : runs.ref32) {
    if (!runs.ref64.count(name) || !runs.cur32.count(name) || !runs.cur64.count(name)) {
      out.failures.push_back(name + ": not in every run (written by the reference only)");
      continue;
    }
    const auto a = analysis_of.find(name);
    GroupCheck(runs, a == analysis_of.end() ? "?" : a->second, out).run(name);
  }
  return out;
}

}  // namespace attnlab::testing::cross_world
