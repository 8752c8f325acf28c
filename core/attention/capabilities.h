// What a mechanism's traces offer beyond implicit attention rows, by name. A mechanism
// declares its capabilities in its MechanismInfo; init_trace copies them onto every trace
// it builds, and analyses ask a trace (AttentionTrace::offers) instead of its mechanism's
// name. Names are plain strings so a new mechanism or analysis can add one without
// editing a central enum; these are the ones the shipped analyses use.
#pragma once

namespace attnlab::attention::capability {

// Rows may hold negative weights (Castling's linear-angular kernel): views use a
// diverging colour scale, statistics that assume a distribution say so.
inline constexpr const char* kSignedRows = "signed rows";
// Per-head matrices beyond the output for the rank analysis (AttentionTrace::rank_matrices):
// the KV buffer of linear mechanisms, RALA's gated output.
inline constexpr const char* kKvBuffer = "KV buffer";
// A soft token-to-anchor assignment (AnchorFormer's A, core/analysis/anchors.h).
inline constexpr const char* kAnchorAssignment = "anchor assignment";
// Branch outputs on the layer's grid (AttentionTrace::branch_outputs): HiLo's Hi-Fi, Lo-Fi.
inline constexpr const char* kBranchOutputs = "branch outputs";
// An auxiliary softmax mask whose sparsity is measured (Castling, attention/castling.h).
inline constexpr const char* kAuxiliaryMask = "auxiliary mask";
// Local windows tiled on the grid (AttentionTrace::window > 0): HiLo's Hi-Fi heads.
inline constexpr const char* kLocalWindows = "local windows";
// Per-head channel-to-channel maps that mix each token's value over its channels (XCA's
// d×d softmax): the trace's rank_matrices entry "channel_map", (heads, d, d) per image.
inline constexpr const char* kChannelMap = "channel map";
// Agent attention's agents (agent.cpp): internals agent.agent_attn (B, h, A, M), where each
// of the A = p² agents (the queries pooled to p×p) looks over the keys, and agent.q_attn
// (B, h, N, A), each query's weights over the agents.
inline constexpr const char* kAgentTokens = "agent tokens";
// BiFormer's routing (biformer.cpp): internals biformer.route_idx (B, S², k), the k regions
// each region's queries attend to, and biformer.region (rh, rw), the region size.
inline constexpr const char* kRoutedRegions = "routed regions";
// DAT's deformable sampling (dat.cpp): internals dat.reference and dat.pos (B, G, Hk, Wk, 2)
// in [−1, 1] units (y, x), where each group's keys were sampled, and dat.attn (B·h, N, Ns).
inline constexpr const char* kSamplingPoints = "sampling points";
// Token merging (ToMe, models/token_merging.h): the layer ran on merged tokens and its trace
// is carried back to the input tokens; internals "tome.owner" (B, T₀) int64, the merged
// token each input token was in when the layer ran, "tome.merged_owner" the same after the
// block's merge, and "tome.size" (B, T, 1) the merged tokens' sizes.
inline constexpr const char* kMergedTokens = "merged tokens";

}  // namespace attnlab::attention::capability
