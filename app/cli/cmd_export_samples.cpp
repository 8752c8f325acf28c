// `attnlab export-samples`: writes the first N test images of every class as PNGs, with an
// index.csv (file, index in the set, label, class name), e.g. the demo images in assets/:
//   attnlab export-samples --dataset fashion-mnist:test --per-class 3 --out assets/fashion-mnist
#include <ATen/ATen.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "app/cli/cli_common.h"
#include "app/cli/output_failure.h"
#include "core/data/image_dataset.h"
#include "core/io/file_bytes.h"
#include "core/io/image_io.h"

namespace attnlab::cli {
namespace fs = std::filesystem;
namespace {

std::string slug(const std::string& name) {
  std::string s;
  for (char c : name)
    s += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '-';
  return s;
}

void write_png(const std::string& path, const at::Tensor& chw) {
  const at::Tensor hwc = chw.permute({1, 2, 0}).contiguous();
  io::save_png(path, static_cast<int>(hwc.size(1)), static_cast<int>(hwc.size(0)),
               static_cast<int>(hwc.size(2)), hwc.data_ptr<uint8_t>());
}

}  // namespace

int cmd_export_samples(Args args, const GlobalOptions&) {
  const std::string spec = args.take_option("--dataset");
  const std::string out = args.take_option("--out");
  const int per_class = args.take_positive_int("--per-class", 3);
  if (spec.empty() || out.empty())
    throw UsageError("export-samples needs --dataset SPEC and --out DIR");
  if (!args.positionals().empty()) throw UsageError("export-samples takes no positional arguments");
  const data::ImageDataset set = data::load_dataset(spec, 28);
  create_output_folder(out);
  std::vector<int> taken(static_cast<size_t>(set.classes()), 0);
  std::ostringstream index;
  index << "file,index,label,class\n";
  int written = 0;
  for (int64_t i = 0; i < set.size(); ++i) {
    const int64_t label = set.labels[i].item<int64_t>();
    if (taken[static_cast<size_t>(label)] >= per_class) continue;
    ++taken[static_cast<size_t>(label)];
    char name[128];
    std::snprintf(name, sizeof name, "%02lld-%s-%05lld.png", static_cast<long long>(label),
                  slug(set.class_names[static_cast<size_t>(label)]).c_str(),
                  static_cast<long long>(i));
    write_png((fs::path(out) / name).string(), set.images[i]);
    index << name << "," << i << "," << label << ",\""
          << set.class_names[static_cast<size_t>(label)] << "\"\n";
    ++written;
  }
  io::write_file_atomic((fs::path(out) / "index.csv").string(), index.str());
  std::printf("wrote %d images of %s to %s\n", written, spec.c_str(), out.c_str());
  return kExitOk;
}

}  // namespace attnlab::cli
