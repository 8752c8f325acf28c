// OutputFolder: naming, subfolders and the sidecar's file list; the bytes go through the
// atomic writers of export.h.
#include "core/analysis/output_folder.h"

#include <exception>
#include <filesystem>
#include <stdexcept>

#include "core/analysis/export.h"
#include "core/io/file_bytes.h"
#include "core/io/io_error.h"

namespace attnlab::analysis {

std::string file_safe(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-' || c == '_';
    out += ok ? c : '_';
  }
  return out.empty() ? "unnamed" : out;
}

OutputFolder::OutputFolder(std::string dir, std::string model_tag)
    : dir_(std::move(dir)), model_(file_safe(model_tag)) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec || !std::filesystem::is_directory(dir_))
    throw io::IoError(
        io::IoErrorKind::WriteFailed, dir_,
        "cannot create the output folder: " + (ec ? ec.message() : std::string("not a directory")));
}

std::vector<std::string> OutputFolder::write_table(const Table& t) {
  const std::string stem = dir_ + "/" + model_ + "__" + file_safe(t.name);
  std::vector<std::string> paths{stem + ".csv", stem + ".json"};
  write_table_csv(paths[0], t);
  write_table_json(paths[1], t);
  if (t.name == "rank_layers") {
    paths.push_back(stem + ".tex");
    write_table_latex(paths[2], t);
  }
  for (const auto& p : paths)
    files_.push_back({{"file", std::filesystem::path(p).lexically_relative(dir_).string()},
                      {"kind", "table"},
                      {"rows", t.rows.size()},
                      {"columns", t.columns},
                      {"caption", t.caption}});
  return paths;
}

namespace {

// An array's file, relative to the folder: one sub-folder per analysis, the key's first
// field (core/analysis/result_key.h). Creates the sub-folder.
std::string array_file(const std::string& dir, const std::string& model, const Array& a) {
  const std::string name = file_safe(a.name);
  const std::string sub = name.substr(0, name.find("__"));
  std::filesystem::create_directories(dir + "/" + sub);
  return sub + "/" + model + "__" + name + ".npy";
}

nlohmann::json array_entry(const std::string& file, const Array& a) {
  return {{"file", file},
          {"kind", "array"},
          {"shape", a.shape},
          {"axes", a.axes},
          {"caption", a.caption}};
}

}  // namespace

std::string OutputFolder::write_array(const Array& a) {
  const std::string file = array_file(dir_, model_, a);
  write_array_npy(dir_ + "/" + file, a);
  files_.push_back(array_entry(file, a));
  return dir_ + "/" + file;
}

void OutputFolder::write_arrays(const std::vector<Array>& arrays) {
  std::vector<std::string> files;
  std::exception_ptr failure;
  io::BatchedWrites batch;
  try {
    for (const Array& a : arrays) {
      const std::string file = array_file(dir_, model_, a);
      write_array_npy(dir_ + "/" + file, a);
      files.push_back(file);
    }
  } catch (...) {
    failure = std::current_exception();  // the arrays before it are still committed
  }
  try {
    batch.commit();
  } catch (...) {
    if (!failure) failure = std::current_exception();
  }
  for (size_t i = 0; i < batch.committed(); ++i) files_.push_back(array_entry(files[i], arrays[i]));
  if (failure) std::rethrow_exception(failure);
}

std::string OutputFolder::write_text(const std::string& name, const std::string& text,
                                     const std::string& caption) {
  const std::string file = file_safe(name);
  const std::string path = dir_ + "/" + file;
  io::write_file_atomic(path, text);
  files_.push_back({{"file", file}, {"kind", "text"}, {"caption", caption}});
  return path;
}

std::string OutputFolder::adopt_file(const std::string& from_dir, const nlohmann::json& entry) {
  namespace fs = std::filesystem;
  const std::string file = entry.at("file").get<std::string>();
  const fs::path rel = fs::path(file).lexically_normal();
  if (file.empty() || rel.is_absolute() || *rel.begin() == "..")
    throw std::runtime_error(from_dir + " lists the file '" + file + "' outside its folder");
  const fs::path from = fs::path(from_dir) / rel, to = fs::path(dir_) / rel;
  if (!fs::is_regular_file(from))
    throw std::runtime_error(from.string() + " is listed but missing (was the folder moved?)");
  fs::create_directories(to.parent_path());
  const fs::path tmp = to.string() + ".adopting";
  std::error_code ec;
  fs::remove(tmp, ec);
  fs::create_hard_link(from, tmp, ec);  // same file system: no copy
  if (ec) fs::copy_file(from, tmp, fs::copy_options::overwrite_existing);
  fs::rename(tmp, to);
  files_.push_back(entry);
  return to.string();
}

std::string OutputFolder::write_sidecar(nlohmann::json settings) {
  settings["files"] = files_;
  const std::string path = dir_ + "/" + model_ + "__settings.json";
  write_json(path, settings);
  return path;
}

}  // namespace attnlab::analysis
