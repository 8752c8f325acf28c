// The shipped model zoo (models/zoo/): small models this project trained on
// Fashion-MNIST, one per mechanism, plus checkpoint series (docs/ZOO.md).
//   <dir>/<name>.safetensors         fp16 weights, config and "attnlab.training" record
//   <dir>/<name>_series/step_*.safetensors   fp16 weights at every training checkpoint
//   <dir>/zoo.json                   the index, built from those files (build_zoo_index)
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace attnlab::models {

// $ATTNLAB_ZOO, else the installed share/attnlab/zoo, else the source tree's models/zoo,
// else "" (runtime::zoo_data_dir).
std::string zoo_dir();

// The index of a zoo directory: {"models": [{name, file, size_bytes, config, and the
// training record's mechanism, accuracy, parameters, command, seed, steps, wall_time_s,
// machine}], "series": [{name, dir, checkpoints: [{file, step}] in step order}]}.
// Throws std::runtime_error naming a file whose record is missing or malformed.
nlohmann::json build_zoo_index(const std::string& dir);

// The series files of a zoo index entry, in step order (absolute paths).
std::vector<std::string> zoo_series_files(const std::string& dir, const std::string& name);

// What the demo shows, read from <dir>/zoo.json: the zoo's model files (absolute paths) in
// the mechanism registry's order, and the names of its checkpoint series in index order.
// So the zoo, not the code, says which models exist. Throws std::runtime_error naming
// the index when it is missing or malformed.
struct ZooDemo {
  std::vector<std::string> models;
  std::vector<std::string> series;
};
ZooDemo zoo_demo(const std::string& dir);

}  // namespace attnlab::models
