// `attnlab zoo`: the models this project trained (models/zoo by default).
//   attnlab zoo [DIR]                 list them: mechanism, accuracy, parameters, size
//   attnlab zoo [DIR] --write-index   (re)write DIR/zoo.json from the models' own training
//                                     records (safetensors metadata "attnlab.training") and
//                                     the checkpoint series in DIR/<name>_series/
#include <cstdio>
#include <filesystem>

#include "app/cli/cli_common.h"
#include "core/io/file_bytes.h"
#include "core/io/safetensors.h"
#include "models/zoo.h"

namespace attnlab::cli {
namespace fs = std::filesystem;

int cmd_zoo(Args args, const GlobalOptions&) {
  const bool write = args.take_flag("--write-index");
  const auto pos = args.positionals();
  if (pos.size() > 1) throw UsageError("zoo takes at most one DIR");
  const std::string dir = pos.empty() ? models::zoo_dir() : pos[0];
  if (dir.empty() || !fs::is_directory(dir))
    throw std::runtime_error("no zoo directory" + (dir.empty() ? std::string() : " at " + dir) +
                             " (set ATTNLAB_ZOO or pass DIR)");
  const nlohmann::json index = models::build_zoo_index(dir);
  if (write) {
    const std::string text = index.dump(2) + "\n";
    const std::string path = (fs::path(dir) / "zoo.json").string();
    io::write_file_atomic(path, text);
    std::printf("wrote %s (%zu models, %zu series)\n", path.c_str(), index["models"].size(),
                index["series"].size());
    return kExitOk;
  }
  std::printf("%-10s %-10s %9s %9s %10s %8s\n", "name", "mechanism", "test acc", "first1k",
              "params", "MB");
  for (const auto& m : index["models"])
    std::printf("%-10s %-10s %8.2f%% %8.2f%% %10lld %8.2f\n", m["name"].get<std::string>().c_str(),
                m["mechanism"].get<std::string>().c_str(),
                m["accuracy"]["test_percent"].get<double>(),
                m["accuracy"]["first1000_percent"].get<double>(), m["parameters"].get<long long>(),
                m["size_bytes"].get<double>() / 1e6);
  for (const auto& s : index["series"])
    std::printf("series %-10s %zu checkpoints, steps %lld..%lld\n",
                s["name"].get<std::string>().c_str(), s["checkpoints"].size(),
                s["checkpoints"].front()["step"].get<long long>(),
                s["checkpoints"].back()["step"].get<long long>());
  return kExitOk;
}

}  // namespace attnlab::cli
