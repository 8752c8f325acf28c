// Class names and top-k; see predictions.h.
#include "app/session/predictions.h"

#include <ATen/ATen.h>

#include <cstdlib>
#include <fstream>

namespace attnlab::session {

std::vector<std::string> class_names(const nlohmann::json& config, int64_t classes) {
  std::vector<std::string> names;
  if (config.contains("class_names") && config["class_names"].is_array())
    for (const auto& n : config["class_names"])
      names.push_back(n.is_string() ? n.get<std::string>() : "");
  if (!names.empty() || classes != 1000)
    return int64_t(names.size()) == classes ? names : std::vector<std::string>{};
  const char* env = std::getenv("ATTNLAB_ASSETS");
  const std::string dir = env && *env ? env : ATTNLAB_ASSETS_DIR;
  std::ifstream in(dir + "/imagenet1k_classes.txt");
  for (std::string line; std::getline(in, line);) names.push_back(line);
  return names.size() == 1000 ? names : std::vector<std::string>{};
}

std::vector<Prediction> top_predictions(const at::Tensor& logits,
                                        const std::vector<std::string>& names, int64_t k) {
  const at::Tensor probs = at::softmax(logits.detach().to(at::kCPU, at::kFloat), -1);
  const auto top = probs.topk(std::min<int64_t>(k, probs.size(0)));
  std::vector<Prediction> out;
  for (int64_t i = 0; i < std::get<1>(top).size(0); ++i) {
    Prediction p;
    p.cls = std::get<1>(top)[i].item<int64_t>();
    p.probability = std::get<0>(top)[i].item<double>();
    if (size_t(p.cls) < names.size()) p.name = names[size_t(p.cls)];
    out.push_back(p);
  }
  return out;
}

}  // namespace attnlab::session
