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

}  // namespace attnlab::attention::capability
