// Class names and top-k; see predictions.h.
#include "app/session/predictions.h"

#include <ATen/ATen.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/runtime/data_paths.h"

namespace attnlab::session {

std::vector<std::string> class_names(const nlohmann::json& config, int64_t classes) {
  std::vector<std::string> names;
  if (config.contains("class_names") && config["class_names"].is_array())
    for (const auto& n : config["class_names"])
      names.push_back(n.is_string() ? n.get<std::string>() : "");
  if (!names.empty() || classes != 1000)
    return int64_t(names.size()) == classes ? names : std::vector<std::string>{};
  const std::string dir = runtime::assets_data_dir().path;
  if (dir.empty()) return {};
  std::ifstream in(dir + "/imagenet1k_classes.txt");
  for (std::string line; std::getline(in, line);) names.push_back(line);
  return names.size() == 1000 ? names : std::vector<std::string>{};
}

std::vector<std::string> read_class_names(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot read the class names file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos)
    throw std::runtime_error(path + ": the class names file is empty");
  std::vector<std::string> names;
  if (text[first] == '[' || text[first] == '{') {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(path + ": not valid JSON (" + e.what() + ")");
    }
    const auto name_of = [&](const nlohmann::json& v, const std::string& where) {
      if (!v.is_string()) throw std::runtime_error(path + ": " + where + " is not a string");
      return v.get<std::string>();
    };
    if (j.is_array()) {
      for (size_t i = 0; i < j.size(); ++i)
        names.push_back(name_of(j[i], "entry " + std::to_string(i)));
    } else {
      for (const auto& [key, value] : j.items()) {
        char* end = nullptr;
        const long long index = std::strtoll(key.c_str(), &end, 10);
        if (key.empty() || *end != '\0' || index < 0 || index > (1 << 24))
          throw std::runtime_error(path + ": key '" + key + "' is not a class index");
        if (names.size() <= size_t(index)) names.resize(size_t(index) + 1);
        names[size_t(index)] = name_of(value, "the name of class " + key);
      }
    }
  } else {
    std::stringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      names.push_back(line);
    }
  }
  if (names.empty()) throw std::runtime_error(path + ": the class names file names no class");
  return names;
}

const std::vector<std::string>& checked_class_names(const std::vector<std::string>& names,
                                                    int64_t classes, const std::string& source) {
  if (int64_t(names.size()) != classes)
    throw std::runtime_error(source + " names " + std::to_string(names.size()) +
                             " classes, but the model has " + std::to_string(classes));
  return names;
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
