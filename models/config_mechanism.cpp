// A config's attention mechanism; see config_mechanism.h.
#include "models/config_mechanism.h"

namespace attnlab::models {

std::string config_mechanism(const nlohmann::json& config) {
  if (!config.is_object()) return "";
  if (config.contains("attention") && config["attention"].is_string())
    return config["attention"].get<std::string>();
  const std::string arch = config.value("arch", std::string());
  if (arch == "litv2") return "hilo";
  if (arch == "ravlt") return "rala";
  if (arch == "swin") return "swin";
  if (arch == "vit" || arch == "deit") return "softmax";
  return "";
}

}  // namespace attnlab::models
