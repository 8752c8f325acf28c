// Counting a model or a mechanism for the complexity report (see complexity.h).
#include "app/session/complexity.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/attention/registry.h"
#include "models/backbone.h"
#include "models/presets.h"

namespace attnlab::session {

const std::vector<std::string>& mac_groups() {
  static const std::vector<std::string> groups = {"projections", "scores", "aggregation", "convs",
                                                  "norms"};
  return groups;
}

int64_t ComplexityRun::total_macs() const {
  int64_t sum = 0;
  for (const auto& l : layers) sum += l.total();
  return sum;
}

int64_t ComplexityRun::group_macs(const std::string& group) const {
  int64_t sum = 0;
  for (const auto& l : layers)
    if (l.macs.count(group)) sum += l.macs.at(group);
  return sum;
}

ComplexityRun count_model(ModelRequest request, int64_t height, int64_t width) {
  // Counting needs shapes, not trained weights: a preset or config alone is built with
  // random weights (a checkpoint, when given, is loaded as usual).
  const bool has_weights = !request.checkpoint.empty() ||
                           (!request.model.empty() && !models::preset_named(request.model));
  request.random_init = !has_weights;
  if (height > 0) request.img_size = {height, width};
  const ModelChoice choice = choose_model(request);
  if (height <= 0) {  // the size the model's preprocessing crops to
    height = choice.preprocessing.crop;
    width = choice.preprocessing.crop_width > 0 ? choice.preprocessing.crop_width : height;
  }
  const ReadyModel ready =
      load_chosen_model(choice, runtime::ComputeTarget{});  // counts at fp32 on the CPU, by design
  ComplexityRun run;
  run.subject = choice.tag;
  run.height = height, run.width = width;
  for (const auto& p : ready.model->parameters()) run.params += p.numel();
  at::NoGradGuard no_grad;
  const at::Tensor image = at::zeros({1, 3, height, width});
  {
    runtime::MacCounter counter;
    ready.model->run(image, models::ForwardOptions{});
    run.layers = counter.layers();
  }
  return run;
}

ComplexityRun count_mechanism(const std::string& mechanism, int64_t dim, int64_t heads,
                              const std::map<std::string, double>& options, int64_t height,
                              int64_t width, int64_t prefix) {
  attention::MechanismConfig config;
  config.dim = dim;
  config.heads = heads;
  config.options = options;
  auto layer = attention::make_mechanism(mechanism, config);
  layer->eval();
  attention::TokenLayout layout = attention::grid_layout(height, width);
  for (int64_t i = 0; i < prefix; ++i) layout.prefix.push_back(i == 0 ? "cls" : "prefix");
  ComplexityRun run;
  run.subject = mechanism;
  run.height = height, run.width = width;
  run.tokens = layout.tokens();
  run.params = layer->parameter_count();
  at::manual_seed(0);
  const at::Tensor tokens = at::randn({1, layout.tokens(), dim});
  at::NoGradGuard no_grad;
  {
    runtime::MacCounter counter;
    layer->forward(tokens, layout);
    run.layers = counter.layers();
  }
  return run;
}

namespace {

std::vector<std::string> table_columns(const char* what) {
  std::vector<std::string> cols = {"subject", "height", "width", what, "params"};
  for (const auto& g : mac_groups()) cols.push_back("macs_" + g);
  cols.push_back("macs_total");
  return cols;
}

std::vector<analysis::Cell> row_of(const ComplexityRun& run, analysis::Cell what, int64_t params,
                                   const std::map<std::string, int64_t>& macs, int64_t total) {
  std::vector<analysis::Cell> row = {run.subject, run.height, run.width, std::move(what), params};
  for (const auto& g : mac_groups()) row.emplace_back(macs.count(g) ? macs.at(g) : int64_t{0});
  row.emplace_back(total);
  return row;
}

}  // namespace

analysis::Table complexity_layers_table(const std::vector<ComplexityRun>& runs) {
  analysis::Table t;
  t.name = "complexity_layers";
  t.caption =
      "Parameters and multiply-accumulates (MACs; one multiply-add = one MAC, as fvcore) of "
      "each attention layer, and of the rest of the model (embeddings, MLPs, norms, head), "
      "per op group";
  t.columns = table_columns("layer");
  t.key_columns = 4;
  for (const auto& run : runs) {
    int64_t attention_params = 0, index = 0;
    for (const auto& l : run.layers) {
      if (!l.name.empty()) {
        attention_params += l.params;
        t.add_row(row_of(run, std::to_string(index++) + " " + l.name, l.params, l.macs, l.total()));
      } else {
        t.add_row(row_of(run, "rest", run.params - attention_params, l.macs, l.total()));
      }
    }
  }
  return t;
}

analysis::Table complexity_totals_table(const std::vector<ComplexityRun>& runs) {
  analysis::Table t;
  t.name = "complexity_totals";
  t.caption =
      "Parameters and multiply-accumulates (MACs, as fvcore) of the whole forward at "
      "each size, per op group";
  t.columns = table_columns("tokens");
  t.key_columns = 4;
  for (const auto& run : runs) {
    std::map<std::string, int64_t> macs;
    for (const auto& g : mac_groups()) macs[g] = run.group_macs(g);
    t.add_row(row_of(run, run.tokens, run.params, macs, run.total_macs()));
  }
  return t;
}

std::pair<int64_t, int64_t> parse_token_grid(const std::string& text) {
  // A whole positive number, or -1 (so "196,28x28" is refused, not read as 196×28).
  const auto whole = [](const std::string& t) -> int64_t {
    if (t.empty() || t.size() > 9 || t.find_first_not_of("0123456789") != std::string::npos)
      return -1;
    const int64_t v = std::stoll(t);
    return v > 0 ? v : -1;
  };
  const auto x = text.find('x');
  if (x != std::string::npos) {
    const int64_t h = whole(text.substr(0, x)), w = whole(text.substr(x + 1));
    if (h > 0 && w > 0) return {h, w};
  } else if (const int64_t n = whole(text); n > 0) {
    const auto side = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(n))));
    return side * side == n ? std::make_pair(side, side) : std::make_pair(int64_t{1}, n);
  }
  throw std::invalid_argument("--tokens wants HxW or N (e.g. 14x14 or 196), got '" + text + "'");
}

std::map<std::string, double> mechanism_options(const std::string& mechanism,
                                                const std::vector<std::string>& given) {
  const attention::MechanismInfo& info = attention::mechanism_info(mechanism);
  std::map<std::string, double> out;
  for (const auto& kv : given) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      throw std::invalid_argument("--option wants NAME=VALUE, got '" + kv + "'");
    std::string name = kv.substr(0, eq);
    const auto dot = name.find('.');
    if (dot != std::string::npos) {
      if (name.substr(0, dot) != info.name) continue;
      name = name.substr(dot + 1);
    }
    bool known = false;
    for (const auto& o : info.options) known = known || o.name == name;
    if (!known) {
      if (dot != std::string::npos)
        throw std::invalid_argument(info.name + " has no option '" + name + "'");
      continue;
    }
    out[name] = attention::option_from_text(info, name, kv.substr(eq + 1));
  }
  return out;
}

bool complexity_has_sizes(const std::vector<ComplexityRun>& runs) {
  std::map<std::string, int> sizes_per_subject;
  for (const auto& run : runs) ++sizes_per_subject[run.subject];
  return std::any_of(sizes_per_subject.begin(), sizes_per_subject.end(),
                     [](const auto& s) { return s.second > 1; });
}

}  // namespace attnlab::session
