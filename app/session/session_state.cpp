// What a shard of a sharded analysis run saves of its session and how a merge adds it to
// another (AnalysisSession::save_state / absorb_state, issue 50). The mean/std tables are
// their accumulators' states (counts, means, squared deviations per row), combined shard by
// shard in the images' order: the single run's rows in its order, its means and stds up to
// rounding. The image-averaged sums are compensated sums (core/analysis/compensated_sum.h),
// saved with their compensation as float64 .npy: their means do not depend on how the
// images were split.
#include <ATen/ATen.h>

#include <filesystem>
#include <stdexcept>

#include "app/session/analysis_session.h"
#include "core/analysis/exact_table_json.h"

namespace attnlab::session {
namespace {

analysis::ResultKey key_of(const nlohmann::json& j) {
  analysis::ResultKey k;
  k.analysis = j.at("analysis").get<std::string>();
  k.image = j.at("image").get<std::string>();
  k.layer = j.at("layer").get<int64_t>();
  k.query = j.at("query").get<std::string>();
  k.branch = j.at("branch").get<std::string>();
  k.part = j.at("part").get<std::string>();
  return k;
}

void add_once(std::vector<std::string>& list, const std::string& item) {
  if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
}

}  // namespace

std::vector<std::string> AnalysisSession::unshardable(const std::set<std::string>& analyses) {
  std::vector<std::string> out;
  for (const AnalysisInfo& a : session::analyses())
    if (a.finish && !(a.save_shard && a.absorb_shard) && analyses.count(a.name))
      out.push_back(a.name);
  return out;
}

nlohmann::json AnalysisSession::save_state(const std::string& dir) {
  std::filesystem::create_directories(dir);
  nlohmann::json tables = nlohmann::json::array();
  for (const auto& name : table_order_)
    tables.push_back(analysis::accumulator_json(tables_.at(name)));
  nlohmann::json sums = nlohmann::json::array();
  for (size_t i = 0; i < sum_order_.size(); ++i) {
    const Sum& s = sums_.at(sum_order_[i]);
    const std::string stem = "sum" + std::to_string(i);
    sums.push_back({{"name", sum_order_[i]},
                    {"caption", s.caption},
                    {"axes", s.axes},
                    {"count", s.count},
                    {"files", analysis::save_compensated_sum(s.total, dir, stem)}});
  }
  nlohmann::json spectra = nlohmann::json::array();
  for (size_t i = 0; i < spectra_order_.size(); ++i) {
    const analysis::ResultKey& k = spectra_order_[i];
    const auto& acc = spectra_.at(analysis::format_result_key(k));
    const std::string stem = "spectrum" + std::to_string(i);
    spectra.push_back({{"key",
                        {{"analysis", k.analysis},
                         {"image", k.image},
                         {"layer", k.layer},
                         {"query", k.query},
                         {"branch", k.branch},
                         {"part", k.part}}},
                       {"images", acc.images()},
                       {"log", analysis::save_compensated_sum(acc.log_sum(), dir, stem + "_log")},
                       {"hf", analysis::save_compensated_sum(acc.hf_sum(), dir, stem + "_hf")}});
  }
  // What the analyses fitted on every image keep for their finish, each in its folder.
  nlohmann::json kept = nlohmann::json::object();
  for (const AnalysisInfo& a : session::analyses())
    if (a.finish && a.save_shard && settings_.analyses.count(a.name))
      kept[a.name] = a.save_shard(*this, dir + "/" + a.name);
  return {{"images", images_},
          {"layers", layers_json_},
          {"warnings", warnings_},
          {"skipped", skipped_},
          {"tables", std::move(tables)},
          {"sums", std::move(sums)},
          {"spectrum_sums", std::move(spectra)},
          {"fitted", std::move(kept)}};
}

void AnalysisSession::absorb_state(const nlohmann::json& state, const std::string& dir) {
  try {
    for (const auto& j : state.at("tables")) {
      const analysis::TableAccumulator part = analysis::accumulator_from_json(j);
      const std::string& name = part.shape().name;
      auto it = tables_.find(name);
      if (it == tables_.end()) {
        table_order_.push_back(name);
        it = tables_.emplace(name, analysis::TableAccumulator{}).first;
      }
      it->second.absorb(part);
    }
    for (const auto& j : state.at("sums")) {
      const std::string name = j.at("name").get<std::string>();
      const analysis::CompensatedSum part = analysis::load_compensated_sum(j.at("files"), dir);
      auto it = sums_.find(name);
      if (it == sums_.end()) {
        sum_order_.push_back(name);
        it = sums_
                 .emplace(name, Sum{j.at("caption").get<std::string>(),
                                    j.at("axes").get<std::vector<std::string>>(),
                                    {},
                                    0})
                 .first;
      } else if (!it->second.total.sum().sizes().equals(part.sum().sizes())) {
        throw std::runtime_error(name + " has another shape in this shard");
      }
      it->second.total.absorb(part);
      it->second.count += j.at("count").get<int64_t>();
    }
    for (const auto& j : state.at("spectrum_sums")) {
      const analysis::ResultKey key = key_of(j.at("key"));
      const std::string name = analysis::format_result_key(key);
      if (!spectra_.count(name)) spectra_order_.push_back(key);
      spectra_[name].absorb(analysis::load_compensated_sum(j.at("log"), dir),
                            analysis::load_compensated_sum(j.at("hf"), dir),
                            j.at("images").get<int64_t>());
    }
    for (const auto& [name, kept] : state.at("fitted").items()) {
      const AnalysisInfo* a = find_analysis(name);
      if (!a || !a->absorb_shard || !settings_.analyses.count(name))
        throw std::runtime_error("a shard state of the analysis '" + name +
                                 "', which this merge does not run");
      a->absorb_shard(*this, kept, dir + "/" + name);
    }
    images_ += state.at("images").get<int64_t>();
    if (layers_json_.is_null() && !state.at("layers").is_null()) layers_json_ = state.at("layers");
    for (const auto& w : state.at("warnings")) add_once(warnings_, w.get<std::string>());
    for (const auto& w : state.at("skipped")) add_once(skipped_, w.get<std::string>());
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(dir + ": a malformed shard state (" + std::string(e.what()) + ")");
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(dir + ": " + e.what());
  }
}

}  // namespace attnlab::session
