// Where a model's configuration comes from: a JSON file in the format of the fixtures'
// `.config.json` ({"arch": "vit", "embed_dim": 64, ...}; keys a family does not use,
// such as "source" and "seed", are ignored), or a safetensors `__metadata__` holding the
// same keys with JSON-encoded string values. Families read their keys with the typed
// getters below, which name the key and the family in every error.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace attnlab::models {

using Json = nlohmann::json;

Json config_from_file(const std::string& path);
// Throws ModelError when a value is not valid JSON or "arch" is missing.
Json config_from_metadata(const std::map<std::string, std::string>& metadata);
// The inverse: one JSON-encoded string per config key.
std::map<std::string, std::string> config_to_metadata(const Json& config);
// The training step a checkpoint's metadata records ("attnlab.step", else "step" or
// "global_step"), or -1 when none holds an integer.
int64_t metadata_step(const std::map<std::string, std::string>& metadata);

// Typed access: `family` is used in messages ("vit config: 'depth' must be an integer").
int64_t get_int(const Json& c, const std::string& key, const std::string& family);
int64_t get_int(const Json& c, const std::string& key, const std::string& family, int64_t fallback);
double get_real(const Json& c, const std::string& key, const std::string& family, double fallback);
bool get_bool(const Json& c, const std::string& key, const std::string& family, bool fallback);
std::string get_string(const Json& c, const std::string& key, const std::string& family,
                       const std::string& fallback);
std::vector<int64_t> get_ints(const Json& c, const std::string& key, const std::string& family);
// "attention_options" of a config for mechanism `mechanism` ({} when absent): numbers,
// true/false as 1/0, a choice by its name (linear's "feature_map": "relu"); ModelError
// naming the family for anything else or an unknown choice. Every family that lets a
// config pick its attention reads the options with this.
std::map<std::string, double> get_attention_options(const Json& c, const std::string& mechanism,
                                                    const std::string& family);
// The same for a pyramid of `stages` stages: an entry may also be a list of one value per
// stage (e.g. a positional encoding sized by each stage's tokens); one map per stage.
std::vector<std::map<std::string, double>> get_stage_attention_options(const Json& c,
                                                                       const std::string& mechanism,
                                                                       const std::string& family,
                                                                       size_t stages);
std::vector<std::string> get_strings(const Json& c, const std::string& key,
                                     const std::string& family);

}  // namespace attnlab::models
