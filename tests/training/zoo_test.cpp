// The shipped zoo (models/zoo/): every model loads strictly with the config zoo.json
// records, reaches the 82% bar by its own record, and `attnlab eval` on the first
// 1000 test images reproduces the number zoo.json records for that subset; Castling's
// series is complete and in order; the whole zoo stays within its size budget (48 MB: see
// TotalSizeIsWithinTheBudget).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "core/attention/registry.h"
#include "core/data/image_dataset.h"
#include "core/io/safetensors.h"
#include "models/backbone.h"
#include "models/checkpoint_loading.h"
#include "models/config_mechanism.h"
#include "models/model_config.h"
#include "models/zoo.h"
#include "tests/support/cli_runner.h"

namespace attnlab::models {
namespace {
namespace fs = std::filesystem;

const std::string kZoo = std::string(ATTNLAB_SOURCE_DIR) + "/models/zoo";

nlohmann::json zoo_index() {
  std::ifstream in(kZoo + "/zoo.json");
  return nlohmann::json::parse(in);
}

// Every registered mechanism but softmax_rope: RAVLT's softmax-with-RoPE ablation, a
// variant of softmax inside RAVLT's shell, not a mechanism of its own on the skeleton.
std::vector<std::string> zoo_mechanisms() {
  std::vector<std::string> names = attention::mechanism_names();
  names.erase(std::remove(names.begin(), names.end(), "softmax_rope"), names.end());
  return names;
}

TEST(Zoo, IndexListsEveryMechanismAndTheSwinBackboneAndMatchesTheFiles) {
  const nlohmann::json index = zoo_index();
  // zoo.json is exactly what the files say (attnlab zoo --write-index rebuilds it).
  EXPECT_EQ(index, build_zoo_index(kZoo));
  std::set<std::string> mechanisms, names;
  for (const auto& m : index["models"]) {
    mechanisms.insert(m["mechanism"].get<std::string>());
    names.insert(m["name"].get<std::string>());
  }
  const auto registered = zoo_mechanisms();
  EXPECT_EQ(mechanisms, std::set<std::string>(registered.begin(), registered.end()));
  EXPECT_TRUE(names.count("swin_backbone"));
  EXPECT_EQ(names.size(), registered.size() + 1);
  for (const auto& m : index["models"]) {
    SCOPED_TRACE(m["name"].get<std::string>());
    for (const char* k :
         {"accuracy", "parameters", "command", "seed", "steps", "wall_time_s", "machine"})
      EXPECT_TRUE(m.contains(k)) << k;
    EXPECT_GE(m["accuracy"]["test_percent"].get<double>(), 82.0);
    EXPECT_EQ(m["accuracy"]["test_total"].get<int64_t>(), 10000);
  }
}

// The demo (report --demo, the GUI's start) shows what zoo.json lists, in the mechanism
// registry's order; a folder without an index is refused by name.
TEST(Zoo, DemoIsTheIndexInRegistryOrder) {
  const ZooDemo demo = zoo_demo(kZoo);
  std::vector<std::string> names;
  for (const auto& m : demo.models) {
    EXPECT_TRUE(fs::is_regular_file(m)) << m;
    names.push_back(fs::path(m).stem().string());
  }
  // The registry's order; the Swin backbone (mechanism swin) right after the swin model.
  std::vector<std::string> expected = zoo_mechanisms();
  expected.insert(std::find(expected.begin(), expected.end(), "swin") + 1, "swin_backbone");
  EXPECT_EQ(names, expected);
  EXPECT_EQ(demo.series, (std::vector<std::string>{"castling", "linear"}));
  const fs::path empty = fs::temp_directory_path() / "attnlab_zoo_demo_empty";
  fs::create_directories(empty);
  try {
    zoo_demo(empty.string());
    ADD_FAILURE() << "no error for a folder without zoo.json";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("zoo.json"), std::string::npos) << e.what();
  }
  fs::remove_all(empty);
}

TEST(Zoo, EveryModelLoadsStrictlyWithTheRecordedConfig) {
  const nlohmann::json index = zoo_index();  // named: a temporary's ["models"] would dangle
  for (const auto& m : index["models"]) {
    const std::string path = kZoo + "/" + m["file"].get<std::string>();
    SCOPED_TRACE(path);
    const io::SafetensorsFile f = io::read_safetensors(path);
    const Json config = config_from_metadata(f.metadata);
    EXPECT_EQ(config, m["config"]);
    EXPECT_EQ(config_mechanism(config), m["mechanism"].get<std::string>());
    for (const auto& entry : f.tensors.entries()) {
      if (entry.tensor.dtype != io::DType::I64) {
        EXPECT_EQ(entry.tensor.dtype, io::DType::F16) << entry.name;
      }
    }
    const LoadedModel loaded = load_model(config, path);  // strict: throws on any mismatch
    int64_t params = 0;
    for (const auto& p : loaded.model->parameters()) params += p.numel();
    EXPECT_EQ(params, m["parameters"].get<int64_t>());
  }
}

TEST(Zoo, EvalOnTheFirstThousandTestImagesGivesTheRecordedNumber) {
  if (data::fashion_mnist_dir().empty()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const nlohmann::json index = zoo_index();  // named: a temporary's ["models"] would dangle
  for (const auto& m : index["models"]) {
    const std::string path = kZoo + "/" + m["file"].get<std::string>();
    const auto r = testing::run_cli("--threads 1 eval --model " + path +
                                    " --dataset fashion-mnist:test --limit 1000");
    ASSERT_EQ(r.code, 0) << r.out;
    char expected[64];
    std::snprintf(expected, sizeof expected, "accuracy %.2f%% (%lld/1000)",
                  m["accuracy"]["first1000_percent"].get<double>(),
                  m["accuracy"]["first1000_correct"].get<long long>());
    EXPECT_NE(r.out.find(expected), std::string::npos) << m["name"] << ": " << r.out;
  }
}

// Castling's series (its Fig. 6: every 90 steps) and linear attention's (every 180 steps,
// a re-run of the zoo's recipe on another machine: issue 26): from step 0 to the model's
// last step, in order, each checkpoint a loadable model of the model's config.
TEST(Zoo, SeriesRunFromStepZeroToTheEndInOrder) {
  const nlohmann::json index = zoo_index();
  std::map<std::string, size_t> at_least{{"castling", 10}, {"linear", 6}};
  for (const auto& [name, count] : at_least) {
    SCOPED_TRACE(name);
    const nlohmann::json* series = nullptr;
    for (const auto& s : index["series"])
      if (s["name"] == name) series = &s;
    ASSERT_NE(series, nullptr);
    const auto& cps = (*series)["checkpoints"];
    ASSERT_GE(cps.size(), count);
    EXPECT_EQ(cps.front()["step"].get<int64_t>(), 0);
    for (size_t i = 1; i < cps.size(); ++i)
      EXPECT_GT(cps[i]["step"].get<int64_t>(), cps[i - 1]["step"].get<int64_t>());
    int64_t final_steps = 0;
    for (const auto& m : index["models"])
      if (m["name"] == name) final_steps = m["steps"].get<int64_t>();
    EXPECT_EQ(cps.back()["step"].get<int64_t>(), final_steps);
    const Json config =
        config_from_metadata(io::read_safetensors(kZoo + "/" + name + ".safetensors").metadata);
    for (const auto& cp : cps)
      EXPECT_NO_THROW(load_model(config, kZoo + "/" + cp["file"].get<std::string>()));
  }
}

// Issue 23 set 40 MB for fourteen models and Castling's series; issue 68 asks for a model per
// new mechanism (about 1.2 MB each of float16 weights) and issue 26's series stay
// whole, so the budget is 48 MB (docs/ZOO.md, "Size").
TEST(Zoo, TotalSizeIsWithinTheBudget) {
  uintmax_t total = 0;
  for (const auto& e : fs::recursive_directory_iterator(kZoo))
    if (e.is_regular_file()) total += e.file_size();
  EXPECT_LE(total, 48u * 1000 * 1000);
}

}  // namespace
}  // namespace attnlab::models
