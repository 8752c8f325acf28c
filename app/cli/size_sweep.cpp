// See size_sweep.h.
#include "app/cli/size_sweep.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "app/cli/model_options.h"
#include "app/session/analysis_registry.h"
#include "app/session/checkpoint_series.h"
#include "core/io/text.h"

namespace attnlab::cli {

std::vector<int64_t> parse_img_sizes(const std::string& text) {
  std::vector<int64_t> sizes;
  for (const auto& item : text::split(text)) {
    const std::vector<int64_t> hw = parse_img_size(item);
    if (hw[0] != hw[1]) throw UsageError("--img-sizes takes square sizes (got '" + item + "')");
    sizes.push_back(hw[0]);
  }
  if (sizes.size() < 2) throw UsageError("--img-sizes wants two or more sizes, e.g. 224,288,384");
  return sizes;
}

std::string size_sweep_analyses() {
  std::string names;
  for (const auto& a : session::analyses())
    if (a.series && a.over_sizes) names += (names.empty() ? "" : ",") + a.name;
  return names;
}

namespace {

analysis::Table sweep_costs() {
  analysis::Table costs;
  costs.name = "sizes";
  costs.caption =
      "each input size of the sweep: tokens of the first and last traced layer, "
      "images analysed, and the seconds per image of the forward with the "
      "analyses";
  costs.columns = {"size_index",        "img_size", "first_layer_tokens",
                   "last_layer_tokens", "images",   "seconds_per_image"};
  costs.key_columns = 2;
  return costs;
}

// Adds one size's finished session to a sweep: its tables, its row of `costs`, its layers,
// time and warnings.
void add_sweep_size(SizeSweep& out, session::SizeSweepTables& sweep, int64_t index, int64_t size,
                    const session::AnalysisSession& session, double seconds) {
  sweep.add(index, size, session.tables());
  const nlohmann::json layers = session.layers_json();
  const auto tokens = [](const nlohmann::json& l) { return l.value("tokens", int64_t{0}); };
  out.costs.add_row({index, size, layers.empty() ? int64_t{0} : tokens(layers.front()),
                     layers.empty() ? int64_t{0} : tokens(layers.back()), session.images(),
                     seconds / double(session.images())});
  out.per_size.push_back({{"img_size", size},
                          {"layers", layers},
                          {"seconds", seconds},
                          {"images_analysed", session.images()}});
  for (const auto& w : session.warnings())
    if (std::find(out.warnings.begin(), out.warnings.end(), w) == out.warnings.end())
      out.warnings.push_back(w);
}

}  // namespace

SizeSweep merge_sweep(const session::AnalysisSettings& settings, const std::vector<int64_t>& sizes,
                      const std::string& tag, const std::vector<SweepShard>& shards) {
  SizeSweep out;
  out.costs = sweep_costs();
  session::SizeSweepTables sweep;
  for (size_t i = 0; i < sizes.size(); ++i) {
    session::AnalysisSession session(settings, nullptr);
    double seconds = 0;
    for (const SweepShard& shard : shards) {
      const nlohmann::json& st = shard.states.at(i);
      session.absorb_state(st.at("session"), shard.root + "/" + st.at("dir").get<std::string>());
      seconds += st.at("seconds").get<double>();
    }
    session.finish();
    add_sweep_size(out, sweep, int64_t(i), sizes[i], session, seconds);
  }
  out.results = sweep.results(tag);
  return out;
}

SizeSweep analyse_sizes(const session::ModelRequest& request, const std::string& tag,
                        const std::vector<int64_t>& sizes, const std::vector<ImageInput>& images,
                        const session::AnalysisSettings& settings,
                        const runtime::ComputeTarget& target, const std::string& state_dir) {
  SizeSweep out;
  out.costs = sweep_costs();
  session::SizeSweepTables sweep;
  for (size_t i = 0; i < sizes.size(); ++i) {
    session::ModelRequest r = request;
    r.img_size = {sizes[i], sizes[i]};
    r.hash_checkpoint = i == 0;  // the same file at every size
    const ModelChoice choice = choose_request(r);
    std::fprintf(stderr, "%s: %lld x %lld (%zu/%zu)\n", tag.c_str(), (long long)sizes[i],
                 (long long)sizes[i], i + 1, sizes.size());
    ReadyModel model = load_ready_model(choice, target);
    session::AnalysisSession session(settings, nullptr);  // statistics only
    if (!state_dir.empty()) session.for_shard();
    Progress progress("  images", static_cast<int64_t>(images.size()));
    const auto t_size = std::chrono::steady_clock::now();
    const auto failed =
        analyse_images(session, *model.model, target, choice.preprocessing, images, progress);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t_size).count();
    out.any_failed = out.any_failed || !failed.empty();
    if (session.images() == 0)
      throw std::runtime_error("no image could be analysed at " + std::to_string(sizes[i]) + " px");
    add_sweep_size(out, sweep, int64_t(i), sizes[i], session, seconds);
    if (!state_dir.empty()) {
      const std::string dir = "size" + std::to_string(i);
      out.states.push_back({{"dir", dir},
                            {"seconds", seconds},
                            {"session", session.save_state(state_dir + "/" + dir)}});
    }
  }
  out.results = sweep.results(tag);
  return out;
}

}  // namespace attnlab::cli
