// What a shard of a sharded faithfulness run saves and how a merge adds the shards together
// (FaithfulnessRun::save_state / absorb_states, issue 50). Per model, the rows of every
// scored image in the shard's order, exactly (core/analysis/exact_table_json.h); the merge
// goes model by model through the shards in order, so each table and each running mean
// sees the single run's rows in the single run's order.
#include <algorithm>
#include <stdexcept>

#include "app/session/faithfulness_run.h"
#include "core/analysis/exact_table_json.h"

namespace attnlab::session {
namespace {

// Rows as an exact table of their own (the cells keep their kinds and bits).
nlohmann::json rows_json(const std::vector<std::vector<analysis::Cell>>& rows) {
  analysis::Table t;
  t.name = "rows";
  if (!rows.empty()) t.columns.assign(rows.front().size(), "");
  for (const auto& r : rows) t.add_row(r);
  return analysis::exact_table_json(t).at("rows");
}

std::vector<std::vector<analysis::Cell>> rows_from_json(const nlohmann::json& rows) {
  const size_t width = rows.empty() ? 0 : rows.front().size();
  const analysis::Table t = analysis::table_from_exact_json(
      {{"name", "rows"}, {"columns", std::vector<std::string>(width, "")}, {"rows", rows}});
  return t.rows;
}

}  // namespace

nlohmann::json FaithfulnessRun::image_rows_json(const ImageRows& rows) {
  return {{"images", rows_json(rows.images)},
          {"curves", rows_json(rows.curves)},
          {"random", rows_json(rows.random)},
          {"randomised", rows.randomised}};
}

FaithfulnessRun::ImageRows FaithfulnessRun::image_rows_from_json(const nlohmann::json& j) {
  ImageRows r;
  r.images = rows_from_json(j.at("images"));
  r.curves = rows_from_json(j.at("curves"));
  r.random = rows_from_json(j.at("random"));
  r.randomised = j.at("randomised").get<bool>();
  return r;
}

nlohmann::json FaithfulnessRun::save_state() const {
  if (!keep_log_) throw std::logic_error("FaithfulnessRun::save_state without keep_log()");
  nlohmann::json state = {{"models", log_}, {"any_error", any_error_}};
  if (!s_.per_image) {  // the running means instead of every image's rows
    state["summary"] = analysis::accumulator_json(summary_);
    state["random_summary"] = analysis::accumulator_json(random_summary_);
    state["curve_means"] = analysis::accumulator_json(curve_means_);
  }
  return state;
}

void FaithfulnessRun::absorb_states(const std::vector<nlohmann::json>& states) {
  if (states.empty()) return;
  try {
    const size_t models = states.front().at("models").size();
    for (const auto& st : states)
      if (st.at("models").size() != models)
        throw std::runtime_error("the shards scored different models (" +
                                 std::to_string(st.at("models").size()) + " and " +
                                 std::to_string(models) + "): a model failed to load in one");
    for (size_t m = 0; m < models; ++m) {
      nlohmann::json summary;
      double seconds = 0;
      std::vector<std::string> maps;
      for (const auto& st : states) {
        const nlohmann::json& entry = st.at("models").at(m);
        const std::string tag = entry.at("model").get<std::string>();
        if (tag != states.front().at("models").at(m).at("model").get<std::string>())
          throw std::runtime_error("the shards' models differ at place " + std::to_string(m));
        for (const auto& im : entry.at("images")) add_rows(image_rows_from_json(im));
        for (const auto& n : entry.at("notes")) {
          const std::string note = n.get<std::string>();
          if (std::find(notes_.begin(), notes_.end(), note) == notes_.end()) notes_.push_back(note);
        }
        if (!entry.at("full_cascade").is_null())
          full_cascade_[tag] = entry.at("full_cascade").get<int64_t>();
        const nlohmann::json& s = entry.at("summary");
        if (summary.is_null()) summary = s;
        seconds += s.value("seconds", 0.0);
        for (const auto& k : s.at("maps"))
          if (std::find(maps.begin(), maps.end(), k.get<std::string>()) == maps.end())
            maps.push_back(k.get<std::string>());
        if (summary.at("blocks").empty()) summary["blocks"] = s.at("blocks");
      }
      summary["maps"] = maps;
      summary["seconds"] = seconds;
      per_model_.push_back(std::move(summary));
    }
    for (const auto& st : states) {
      any_error_ = any_error_ || st.at("any_error").get<bool>();
      if (!st.contains("summary")) continue;
      summary_.absorb(analysis::accumulator_from_json(st.at("summary")));
      random_summary_.absorb(analysis::accumulator_from_json(st.at("random_summary")));
      curve_means_.absorb(analysis::accumulator_from_json(st.at("curve_means")));
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error("a malformed faithfulness shard state (" + std::string(e.what()) +
                             ")");
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(std::string("a faithfulness shard state: ") + e.what());
  }
}

}  // namespace attnlab::session
