// Model configuration sources and typed getters.
#include "models/model_config.h"

#include "models/hf_layout.h"

#include <fstream>
#include <sstream>

#include "core/attention/registry.h"
#include "models/backbone.h"

namespace attnlab::models {
namespace {

[[noreturn]] void bad(const std::string& family, const std::string& key, const std::string& what) {
  throw ModelError(family + " config: '" + key + "' " + what);
}

const Json& need_key(const Json& c, const std::string& key, const std::string& family) {
  if (!c.is_object() || !c.contains(key)) bad(family, key, "is missing");
  return c.at(key);
}

}  // namespace

Json config_from_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ModelError("cannot open the config file " + path);
  std::stringstream text;
  text << in.rdbuf();
  Json c = Json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (c.is_discarded()) throw ModelError(path + " is not valid JSON");
  if (is_hf_config(c)) return config_from_hf(c);  // a transformers config.json
  if (!c.is_object() || !c.contains("arch") || !c["arch"].is_string())
    throw ModelError(path + ": a model config needs a string \"arch\"");
  return c;
}

Json config_from_metadata(const std::map<std::string, std::string>& metadata) {
  Json c = Json::object();
  for (const auto& [key, value] : metadata) {
    if (key.rfind("attnlab.", 0) == 0) continue;  // training records, not model config
    Json v = Json::parse(value, nullptr, false);
    // Plain strings are stored as themselves by some writers ("vit" rather than "\"vit\"").
    c[key] = v.is_discarded() ? Json(value) : v;
  }
  if (!c.contains("arch") || !c["arch"].is_string())
    throw ModelError("the safetensors metadata holds no model config (no \"arch\" key)");
  return c;
}

std::map<std::string, std::string> config_to_metadata(const Json& config) {
  std::map<std::string, std::string> meta;
  for (const auto& [key, value] : config.items()) meta[key] = value.dump();
  return meta;
}

int64_t metadata_step(const std::map<std::string, std::string>& metadata) {
  for (const char* key : {"attnlab.step", "step", "global_step"}) {
    const auto it = metadata.find(key);
    if (it == metadata.end()) continue;
    const Json j = Json::parse(it->second, nullptr, false);
    if (j.is_number_integer()) return j.get<int64_t>();
  }
  return -1;
}

int64_t get_int(const Json& c, const std::string& key, const std::string& family) {
  const Json& v = need_key(c, key, family);
  if (!v.is_number_integer()) bad(family, key, "must be an integer");
  return v.get<int64_t>();
}

int64_t get_int(const Json& c, const std::string& key, const std::string& family,
                int64_t fallback) {
  return c.contains(key) ? get_int(c, key, family) : fallback;
}

double get_real(const Json& c, const std::string& key, const std::string& family, double fallback) {
  if (!c.contains(key)) return fallback;
  const Json& v = c.at(key);
  if (!v.is_number()) bad(family, key, "must be a number");
  return v.get<double>();
}

bool get_bool(const Json& c, const std::string& key, const std::string& family, bool fallback) {
  if (!c.contains(key)) return fallback;
  const Json& v = c.at(key);
  if (!v.is_boolean()) bad(family, key, "must be true or false");
  return v.get<bool>();
}

std::string get_string(const Json& c, const std::string& key, const std::string& family,
                       const std::string& fallback) {
  if (!c.contains(key)) return fallback;
  const Json& v = c.at(key);
  if (!v.is_string()) bad(family, key, "must be a string");
  return v.get<std::string>();
}

std::vector<int64_t> get_ints(const Json& c, const std::string& key, const std::string& family) {
  const Json& v = need_key(c, key, family);
  if (!v.is_array()) bad(family, key, "must be a list of integers");
  std::vector<int64_t> out;
  for (const auto& e : v) {
    if (!e.is_number_integer()) bad(family, key, "must be a list of integers");
    out.push_back(e.get<int64_t>());
  }
  return out;
}

std::vector<std::string> get_strings(const Json& c, const std::string& key,
                                     const std::string& family) {
  const Json& v = need_key(c, key, family);
  if (!v.is_array()) bad(family, key, "must be a list of strings");
  std::vector<std::string> out;
  for (const auto& e : v) {
    if (!e.is_string()) bad(family, key, "must be a list of strings");
    out.push_back(e.get<std::string>());
  }
  return out;
}

namespace {

// One attention option's value: a number, true/false as 1/0, or a choice by its name.
double attention_option_value(const Json& v, const std::string& mechanism, const std::string& key,
                              const std::string& family) {
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {  // a choice by name (e.g. linear's "feature_map": "relu")
    try {
      return attention::option_from_text(attention::mechanism_info(mechanism), key,
                                         v.get<std::string>());
    } catch (const attention::AttentionError& e) {
      bad(family, "attention_options", e.what());
    }
  }
  bad(family, "attention_options", "entry '" + key + "' must be a number, true/false or a name");
}

const Json* attention_options_object(const Json& c, const std::string& family) {
  if (!c.contains("attention_options")) return nullptr;
  const Json& o = c.at("attention_options");
  if (!o.is_object()) bad(family, "attention_options", "must be an object, e.g. {\"window\": 2}");
  return &o;
}

}  // namespace

std::map<std::string, double> get_attention_options(const Json& c, const std::string& mechanism,
                                                    const std::string& family) {
  std::map<std::string, double> out;
  if (const Json* o = attention_options_object(c, family))
    for (const auto& [k, v] : o->items()) out[k] = attention_option_value(v, mechanism, k, family);
  return out;
}

std::vector<std::map<std::string, double>> get_stage_attention_options(const Json& c,
                                                                       const std::string& mechanism,
                                                                       const std::string& family,
                                                                       size_t stages) {
  std::vector<std::map<std::string, double>> out(stages);
  if (const Json* o = attention_options_object(c, family))
    for (const auto& [k, v] : o->items()) {
      if (v.is_array() && v.size() != stages)
        bad(family, "attention_options",
            "entry '" + k + "' lists " + std::to_string(v.size()) + " values for " +
                std::to_string(stages) + " stages");
      for (size_t i = 0; i < stages; ++i)
        out[i][k] = attention_option_value(v.is_array() ? v[i] : v, mechanism, k, family);
    }
  return out;
}

}  // namespace attnlab::models
