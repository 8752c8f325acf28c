// The zoo directory and its index.
#include "models/zoo.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include <fstream>

#include "core/attention/registry.h"
#include "core/io/safetensors.h"
#include "core/runtime/data_paths.h"
#include "models/config_mechanism.h"
#include "models/model_config.h"

namespace attnlab::models {
namespace fs = std::filesystem;

std::string zoo_dir() {
  return runtime::zoo_data_dir().path;
}

namespace {

// The whole file is read (the zoo's files are ~1 MB); only its metadata is used.
std::map<std::string, std::string> metadata_of(const std::string& path) {
  return io::read_safetensors(path).metadata;
}

int64_t step_of(const std::string& path) {
  const int64_t step = metadata_step(metadata_of(path));
  if (step < 0) throw std::runtime_error(path + ": no training step in its metadata");
  return step;
}

}  // namespace

std::vector<std::string> zoo_series_files(const std::string& dir, const std::string& name) {
  std::vector<std::string> files;
  const fs::path sd = fs::path(dir) / (name + "_series");
  if (!fs::is_directory(sd)) return files;
  for (const auto& e : fs::directory_iterator(sd))
    if (e.path().extension() == ".safetensors") files.push_back(fs::absolute(e.path()).string());
  std::sort(files.begin(), files.end());  // step_NNNNNN: name order is step order
  return files;
}

nlohmann::json build_zoo_index(const std::string& dir) {
  nlohmann::json models = nlohmann::json::array(), series = nlohmann::json::array();
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".safetensors") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    const auto meta = metadata_of(f.string());
    const auto rec = meta.find("attnlab.training");
    if (rec == meta.end())
      throw std::runtime_error(f.string() + ": no attnlab.training record in its metadata");
    nlohmann::json r = nlohmann::json::parse(rec->second, nullptr, false);
    if (r.is_discarded() || !r.contains("accuracy"))
      throw std::runtime_error(f.string() + ": its attnlab.training record is malformed");
    const std::string name = f.stem().string();
    nlohmann::json entry = {{"name", name},
                            {"file", f.filename().string()},
                            {"size_bytes", fs::file_size(f)},
                            {"config", config_from_metadata(meta)}};
    for (const char* k : {"mechanism", "accuracy", "parameters", "command", "seed", "steps",
                          "epochs", "batch", "wall_time_s", "machine", "train_set"})
      if (r.contains(k)) entry[k] = r[k];
    // A backbone with its own attention (Swin) records none: the config says which.
    if (entry.value("mechanism", std::string()).empty())
      entry["mechanism"] = config_mechanism(entry["config"]);
    models.push_back(entry);
    const auto series_files = zoo_series_files(dir, name);
    if (!series_files.empty()) {
      nlohmann::json cps = nlohmann::json::array();
      for (const std::string& s : series_files)
        cps.push_back(
            {{"file", fs::relative(s, fs::absolute(dir)).string()}, {"step", step_of(s)}});
      series.push_back({{"name", name}, {"dir", name + "_series"}, {"checkpoints", cps}});
    }
  }
  return {{"format", "attnlab zoo 1"}, {"models", models}, {"series", series}};
}

ZooDemo zoo_demo(const std::string& dir) {
  const fs::path index = fs::path(dir) / "zoo.json";
  std::ifstream in(index);
  if (!in) throw std::runtime_error(index.string() + ": cannot read the zoo index");
  const nlohmann::json zoo = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!zoo.is_object() || !zoo.contains("models") || !zoo["models"].is_array())
    throw std::runtime_error(index.string() + ": not a zoo index (no \"models\" list)");
  const std::vector<std::string> order = attention::mechanism_names();
  const auto rank_of = [&](const nlohmann::json& m) {
    const std::string mech = m.value("mechanism", std::string());
    return std::find(order.begin(), order.end(), mech) - order.begin();
  };
  std::vector<nlohmann::json> models(zoo["models"].begin(), zoo["models"].end());
  std::stable_sort(models.begin(), models.end(),
                   [&](const auto& a, const auto& b) { return rank_of(a) < rank_of(b); });
  ZooDemo demo;
  for (const auto& m : models)
    demo.models.push_back(fs::absolute(fs::path(dir) / m.value("file", std::string())).string());
  if (zoo.contains("series") && zoo["series"].is_array())
    for (const auto& s : zoo["series"]) demo.series.push_back(s.value("name", std::string()));
  return demo;
}

}  // namespace attnlab::models
