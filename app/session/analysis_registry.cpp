// The analysis registry: one entry per analysis in ATTNLAB_ANALYSES (analyses/
// analysis_list.h), each `AnalysisInfo <name>_analysis()` from app/session/analyses/<name>.cpp
// with its figures attached (analysis_figures.cpp) — except in a GPU-check-only build
// (ATTNLAB_SESSION_COMPUTE_ONLY: no cairo, so no figures; bench/gpu_check), whose analyses
// have their compute steps only. The order is the order of --help, the report's index and
// the GUI's tabs.
#include "app/session/analysis_registry.h"
#include "app/session/analyses/analysis_list.h"
#include "app/session/analysis_figures.h"
#include "core/io/text.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace attnlab::session {

#define ATTNLAB_DECLARE(name) AnalysisInfo name##_analysis();
ATTNLAB_ANALYSES(ATTNLAB_DECLARE)
#undef ATTNLAB_DECLARE

namespace {

std::vector<AnalysisInfo>& registry() {
#define ATTNLAB_ENTRY(name) name##_analysis(),
  static std::vector<AnalysisInfo> all = [] {
    std::vector<AnalysisInfo> list{ATTNLAB_ANALYSES(ATTNLAB_ENTRY)};
#ifndef ATTNLAB_SESSION_COMPUTE_ONLY
    attach_analysis_figures(list);
#endif
    for (const auto& a : list)
      if (a.key_shape) analysis::register_result_key_shape(a.name, *a.key_shape);
    return list;
  }();
#undef ATTNLAB_ENTRY
  return all;
}

}  // namespace

const std::vector<AnalysisInfo>& analyses() {
  return registry();
}

std::vector<std::string> analysis_names() {
  std::vector<std::string> names;
  for (const auto& a : analyses()) names.push_back(a.name);
  return names;
}

const AnalysisInfo* find_analysis(const std::string& name) {
  for (const auto& a : analyses())
    if (a.name == name) return &a;
  return nullptr;
}

void register_analysis(AnalysisInfo info) {
  if (info.name.empty() || info.name == "all")
    throw std::invalid_argument("an analysis needs a name other than '" + info.name + "'");
  if (find_analysis(info.name))
    throw std::invalid_argument("an analysis named '" + info.name + "' is already registered");
  if (!info.add && !info.explain)
    throw std::invalid_argument("analysis '" + info.name + "' has no compute step");
  if (info.key_shape) analysis::register_result_key_shape(info.name, *info.key_shape);
  registry().push_back(std::move(info));
}

std::set<std::string> parse_analyses(const std::string& list) {
  const std::vector<std::string> known = analysis_names();
  std::set<std::string> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    if (item.empty()) continue;
    if (item == "all") {
      for (const auto& a : analyses())
        if (!a.opt_in) out.insert(a.name);
      continue;
    }
    if (std::find(known.begin(), known.end(), item) == known.end()) {
      throw std::invalid_argument("unknown analysis '" + item + "' (known: " + text::join(known) +
                                  ", all)");
    }
    out.insert(item);
  }
  if (out.empty()) throw std::invalid_argument("no analysis named in '" + list + "'");
  return out;
}

}  // namespace attnlab::session
