// Mechanisms by name. Each mechanism file defines one MechanismInfo (its name, what it
// is, its options with defaults, and a factory); registry.cpp lists them, one line each.
// See docs/ATTENTION.md, "Adding a mechanism".
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/attention/mechanism.h"

namespace attnlab::attention {

// The registry's name of plain softmax attention (softmax.cpp): the baseline every bench and
// cost figure compares with, bench-attention's fused row, and CLIP's layers.
constexpr const char* kPlainSoftmaxMechanism = "softmax";

struct OptionSpec {
  // Choice: one of `choices` by name; the value is its index (configs and the CLI take the
  // name, see option_from_text).
  enum class Kind { Real, Integer, Flag, Choice };
  OptionSpec() = default;
  OptionSpec(std::string name_, Kind kind_, double default_value_, double min_, double max_,
             std::string help_, std::vector<std::string> choices_ = {})
      : name(std::move(name_)), kind(kind_), default_value(default_value_), min(min_),
        max(max_), help(std::move(help_)), choices(std::move(choices_)) {}
  std::string name;
  Kind kind = Kind::Real;
  double default_value = 0.0;
  double min = 0.0, max = 1e9;  // inclusive bounds, checked by make_mechanism
  std::string help;
  std::vector<std::string> choices;
};

// The reference implementation's stand-alone module, usable as a model of its own (the
// parity fixtures' single-module archs, run by models/attention_module and `attnlab infer`).
struct ReferenceModule {
  // The fixture config's arch name; empty: "<mechanism>_attention".
  std::string arch;
  // Its parity fixture in ../shared/fixtures/parity (tests/models/attention_module_test.cpp
  // runs every declared one against its expected outputs).
  std::string fixture;
  // The config keys holding the channel count and the head count. A head count absent or
  // null in the config leaves heads 0 for fit_to_weights (EfficientViT derives it); an
  // empty dim_arg leaves dim 0 for fit_to_weights too (DAT's config names heads × head
  // channels, not C).
  std::string dim_arg = "dim", heads_arg = "num_heads";
  // The reference constructor's argument names (as its config writes them) and the option
  // each sets; absent arguments keep the option's default. A string value names a choice
  // (option_from_text), so a mode the mechanism does not offer is refused, not ignored.
  std::vector<std::pair<std::string, std::string>> args;
  // Options the reference module always has, whatever its config says (Efficient
  // attention's residual inside the module).
  std::map<std::string, double> fixed_options;
  // Options the weights decide (HiLo's Lo-Fi head count from l_q's rows), or null.
  std::function<void(MechanismConfig&, const std::map<std::string, at::Tensor>&)> fit_to_weights;
  // The tokens form a grid: the config's H x W, or the [H, W] pair under grid_arg when set
  // (Swin's window_size: the fixture feeds windows); otherwise a 1 x N sequence.
  bool grid = false;
  std::string grid_arg;
  // The options that grid_arg's [H, W] pair also sets, {H's option, W's option}, when the
  // module is fed its window as the grid (Swin: window, window_w); empty: none. Set after
  // fit_to_weights: the config's pair decides what the weights cannot (Swin's 1 × n and
  // n × 1 windows have the same state dict).
  std::pair<std::string, std::string> grid_options;
  // The module takes and returns (B, C, H, W) images (Efficient, EfficientViT), not tokens.
  bool channels_first = false;
  // The module takes and returns (B, H, W, C) images (BiFormer's NHWC), not tokens.
  bool channels_last = false;
  // The tokens start with a class token, the H × W grid after it (the DeiT-form modules:
  // Agent, InLine); the layer's layout then has the prefix "cls".
  bool class_token = false;
  // The output's name for an eval forward, and for a training-mode forward ("" : none).
  std::string eval_output = "out", train_output;
};

struct MechanismInfo {
  std::string name;
  std::string summary;      // one line for --help and the GUI
  bool needs_grid = false;  // refuses prefix tokens (RoPE, windows, pooling)
  // Eval forward time and memory O(N), no N×N anywhere (Castling's training-only masked
  // softmax branch is N×N by definition).
  bool linear_in_tokens = false;
  // Its traces have one head per channel (Hydra): the config's heads do not apply.
  bool heads_are_channels = false;
  // The head count its traces report for a config, when it is not config.heads (EfficientViT:
  // h·(1+S), the multi-scale branch's heads too); null: config.heads (or C, as above).
  std::function<int64_t(const MechanismConfig&)> trace_heads;
  // Elements per image of the score matrices its eval forward materialises at once (each
  // head's queries × keys before and after the softmax count once: the estimate doubles
  // them), for the forward's memory estimate (models/memory_estimate.h). Null: heads·N·N,
  // or nothing for a mechanism linear_in_tokens (its working set is a few N×C tensors,
  // which the estimate counts for every layer).
  std::function<double(const MechanismConfig&, const TokenLayout&)> score_elements;
  std::vector<OptionSpec> options;
  // Options for a small model on a small grid (the zoo's 4-block models on 14×14 tokens),
  // where a paper default does not fit; the rest keep their defaults. Empty for most.
  std::map<std::string, double> small_model_options;
  // What its traces offer beyond rows (core/attention/capabilities.h); analyses that need
  // one skip the layers whose traces lack it.
  std::vector<std::string> capabilities;
  // Its reference module as a stand-alone model, when the fixtures have one.
  std::optional<ReferenceModule> reference_module;
  std::function<std::shared_ptr<AttentionMechanism>(const MechanismConfig&)> create;
};

// info.score_elements, or its default (above).
double score_elements(const MechanismInfo& info, const MechanismConfig& config,
                      const TokenLayout& layout);

// Every registered mechanism, in registry order.
const std::vector<MechanismInfo>& mechanisms();
std::vector<std::string> mechanism_names();
// Throws AttentionError listing the known names.
const MechanismInfo& mechanism_info(const std::string& name);
// The registered mechanism of this name, or nullptr.
const MechanismInfo* find_mechanism(const std::string& name);

// An option's value from its text in a config or on the command line: a choice's name
// (Kind::Choice), else a number or true/false. Throws AttentionError naming the choices.
double option_from_text(const MechanismInfo& info, const std::string& option,
                        const std::string& text);
// A choice option's name for its value (the value itself, formatted, for other kinds).
std::string option_text(const OptionSpec& spec, double value);

// Validate config.options against the mechanism's OptionSpecs (unknown names, kinds and
// bounds are errors that list what is accepted), fill defaults, build.
std::shared_ptr<AttentionMechanism> make_mechanism(const std::string& name, MechanismConfig config);

}  // namespace attnlab::attention
