// agents: Agent attention's agents (Han et al., ECCV 2024; core/attention/agent.cpp) in every
// layer that offers "agent tokens": where each of the A = p² agents looks (its softmax over
// the keys, carried onto the layer's grid) and every grid query's weights over the agents,
// both the mean over heads. The agents are the queries average-pooled to p×p, so agent a
// sits on pooled cell (a / p, a % p). Per layer a table row (agents, the entropy of their
// maps and of the queries' weights, how far an agent's attention centre lies from its own
// cell). Figure: the clicked query's weights over the agents and where its strongest agents
// look; the GUI's Agents tab follows the query clicked in the Maps tab.
// Its figures (report, GUI tab): agents_figures.cpp.
#include <ATen/ATen.h>

#include <cmath>

#include "app/session/analyses/step_helpers.h"
#include "core/attention/capabilities.h"

namespace attnlab::session {
namespace {

// Mean row entropy (nats) of rows (n, K) that each sum to 1.
double agents_mean_entropy(const at::Tensor& rows) {
  return (-(rows * rows.clamp_min(1e-30).log()).sum(-1)).mean().item<double>();
}

void add_agents(ImageStep& s) {
  analysis::Table layers = make_table(
      "agents_layers",
      "Agent attention per layer (mean over heads): the agents A = p x p, the mean entropy "
      "(nats) of an agent's map over the grid and of a query's weights over the agents (ln A: "
      "uniform), and the mean distance in grid cells from an agent's pooled cell centre to the "
      "centre of mass of its map",
      {"layer", "path", "agents", "agent_entropy", "query_entropy", "agent_offset"}, 3);
  for (const auto& l : s.layers) {
    const auto& lay = l.trace->layout;
    const attention::HeadGroup& g = l.trace->group_of(0);
    const at::Tensor agent_attn =
        l.trace->internal("agent.agent_attn")[s.b].to(at::kCPU, at::kDouble).mean(0);  // (A, M)
    const at::Tensor q_attn =
        l.trace->internal("agent.q_attn")[s.b].to(at::kCPU, at::kDouble).mean(0);  // (N, A)
    const int64_t agents = agent_attn.size(0), p = lay.num_prefix();
    const auto side = static_cast<int64_t>(std::llround(std::sqrt(double(agents))));
    // Each agent's map on the layer's tokens (pooled keys spread over their cells), grid part.
    const at::Tensor on_grid = attention::rows_on_tokens(agent_attn, g.keys, lay)
                                   .slice(1, p)
                                   .reshape({agents, lay.height, lay.width});
    const at::Tensor query_weights = q_attn.slice(0, p);  // (H·W, A)
    // Centre of mass of each agent's map against its own pooled cell's centre.
    const at::Tensor ys = at::arange(lay.height, at::kDouble).view({1, -1, 1});
    const at::Tensor xs = at::arange(lay.width, at::kDouble).view({1, 1, -1});
    const at::Tensor mass = on_grid.sum({1, 2}).clamp_min(1e-30);
    const at::Tensor cy = (on_grid * ys).sum({1, 2}) / mass, cx = (on_grid * xs).sum({1, 2}) / mass;
    const at::Tensor a = at::arange(agents, at::kDouble);
    const at::Tensor own_y =
        ((a / double(side)).floor() + 0.5) * double(lay.height) / double(side) - 0.5;
    const at::Tensor own_x =
        (at::fmod(a, double(side)) + 0.5) * double(lay.width) / double(side) - 0.5;
    const double offset = ((cy - own_y).pow(2) + (cx - own_x).pow(2)).sqrt().mean().item<double>();
    layers.add_row({l.index, l.path, agents, agents_mean_entropy(on_grid.reshape({agents, -1})),
                    agents_mean_entropy(query_weights), offset});
    analysis::ResultKey key{"agents", s.image, l.index, "", "", "maps"};
    s.session.emit(to_array(on_grid, analysis::format_result_key(key), {"agent", "y", "x"},
                            "where each agent of " + l.path +
                                " looks: its softmax over the keys on the layer's grid, mean "
                                "over heads (agent a = pooled cell (a / p, a % p))"));
    key.part = "weights";
    s.session.emit(
        to_array(query_weights.reshape({lay.height, lay.width, agents}),
                 analysis::format_result_key(key), {"y", "x", "agent"},
                 "every grid query's weights over the agents of " + l.path + ", mean over heads"));
  }
  s.session.accumulate(layers);
}

}  // namespace

AnalysisInfo agents_analysis() {
  AnalysisInfo info;
  info.name = "agents";
  info.summary =
      "Agent attention: where each agent looks and every query's weights over the agents";
  info.needs = {attention::capability::kAgentTokens};
  info.tables = {"agents_layers"};
  info.arrays = {"agents__<image>__L<ll>__maps|weights"};
  info.key_shape = analysis::ResultKeyShape{true, true, false, false, true};
  info.in_image_analysis = true;
  info.add = add_agents;
  return info;
}

}  // namespace attnlab::session
