// LITv2 (SPEC §2.2): arch "litv2". Config keys (fixture names, defaults in brackets):
// img_size [224], patch_size [4], embed_dim, depths, num_heads, mlp_ratio [4.0],
// qkv_bias [true], alpha [0.9], local_ws [[0, 0, 2, 1]] (HiLo window per stage; 0 = no
// attention), num_classes [1000], ln_eps [1e-5], and ours: lofi_heads [all -1] (Lo-Fi head
// count per stage, -1 = floor(heads·alpha)), which litv2_config_for_weights() fills from a
// checkpoint so that α-ablation checkpoints load; attention ["hilo"] and attention_options
// [{}]: "LITv2 with attention X", another registered mechanism that takes a pure grid
// (agent_pvt, pola, mlla, sra, ...) in the stages with attention (local_ws > 0), built with
// the stage's width and heads and these options, an entry either one value or a list of
// one per stage (num_patches: [0, 0, 196, 49]) (alpha, lofi_heads and the window are
// HiLo's and then unused). Nothing else changes: stem, ConvFFN, DTM, head.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/nn/state_loading.h"
#include "models/backbone.h"
#include "models/model_config.h"

namespace attnlab::models {

std::shared_ptr<Backbone> make_litv2(const Json& config);

// The full-size configs of the released models: "litv2_s", "litv2_m", "litv2_b".
// Throws ModelError for other names.
Json litv2_official_config(const std::string& name);
std::vector<std::string> litv2_official_names();

// `config` with "lofi_heads" set from the weights: for each attention stage, the rows of
// layers.i.blocks.j.attn.l_q.weight / head_dim (0 when the blocks have h_qkv but no l_q);
// -1 for stages without attention. Throws ModelError when the blocks of a stage disagree or
// a stage has no attention weights.
Json litv2_config_for_weights(Json config, const nn::TensorMap& weights);

}  // namespace attnlab::models
