// `attnlab retrieve`: patch retrieval (issue 70 goal 4): one patch of one image → the k
// patches most similar to it, by cosine of their token vectors, across every image of an
// `attnlab embed --pool tokens` folder (core/retrieval: the embeddings memory-mapped, never
// read whole, so a 10 GB index costs no memory; the scan is chunked over --threads).
//   attnlab retrieve EMBED_DIR --image I --patch Y,X [--k 16] [--exclude-self] [--out FILE.csv]
// I is a row of EMBED_DIR/embeddings.npy (from 0: the I-th data line of images.csv; its
// `index` column differs only where embed skipped unreadable images), or an image as
// images.csv names it (the path, or its file name when that is unique). (Y, X) is a grid
// position from the top left, inside embed.json's grid. Prints rank, score, image row,
// patch and image name; --out writes the same as CSV (rank,score,image_index,image,
// label_name,patch_y,patch_x), atomically. --exclude-self leaves out every patch of image I
// (the query's neighbours in its own image are otherwise usually the best matches).
// The first line says what the vectors are: embed.json's features (the block's output, or
// its attention keys or queries; output for folders written before embed --features).
// A folder of pooled embeddings (one vector per image), a patch outside the grid, a row
// outside the folder: usage errors (exit 2). A damaged folder: exit 1.
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/cli/analyze_common.h"
#include "app/cli/cli_common.h"
#include "app/session/dataset_embedding.h"
#include "core/io/file_bytes.h"
#include "core/io/text.h"
#include "core/retrieval/top_k.h"
#include "core/runtime/threads.h"

namespace attnlab::cli {
namespace {

std::string retrieve_cell(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

bool retrieve_parse_int(const std::string& text, int64_t& value) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  value = v;
  return true;
}

}  // namespace

int cmd_retrieve(Args args, const GlobalOptions& g) {
  namespace fs = std::filesystem;
  const std::string image_arg = args.take_option("--image");
  const std::string patch_arg = args.take_option("--patch");
  const int k = args.take_positive_int("--k", 16);
  const bool exclude_self = args.take_flag("--exclude-self");
  const std::string out = args.take_option("--out");
  const std::vector<std::string> positionals = args.positionals();
  if (positionals.size() != 1)
    throw UsageError(
        "retrieve needs one EMBED_DIR (a folder written by attnlab embed --pool "
        "tokens)");
  if (image_arg.empty()) throw UsageError("retrieve needs --image I (a row of images.csv, from 0)");
  if (patch_arg.empty()) throw UsageError("retrieve needs --patch Y,X (a grid position)");
  const std::string dir = positionals.front();

  // embed.json: the pool and the grid.
  const std::string meta_path = (fs::path(dir) / "embed.json").string();
  if (!fs::is_regular_file(meta_path))
    throw UsageError("retrieve: " + dir + " has no embed.json: not a folder of attnlab embed");
  const std::vector<uint8_t> meta_bytes = io::read_file_bytes(meta_path, uint64_t(64) << 20);
  nlohmann::json meta;
  try {
    meta = nlohmann::json::parse(meta_bytes.begin(), meta_bytes.end());
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(meta_path + ": not valid JSON (" + e.what() + ")");
  }
  const std::string pool = meta.value("pool", std::string());
  if (pool != "tokens")
    throw UsageError("retrieve: " + dir + " holds embeddings pooled '" + pool +
                     "' (one vector per image); patch retrieval needs every token: run "
                     "`attnlab embed ... --pool tokens`");
  int64_t height = 0, width = 0;
  try {
    height = meta.at("grid").at("height").get<int64_t>();
    width = meta.at("grid").at("width").get<int64_t>();
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(meta_path + ": no grid height and width (" + e.what() + ")");
  }

  // The patch, before the index is opened: a usage error is said at once.
  const std::vector<std::string> yx = text::split(patch_arg, ',');
  int64_t y = -1, x = -1;
  if (yx.size() != 2 || !retrieve_parse_int(yx[0], y) || !retrieve_parse_int(yx[1], x))
    throw UsageError("retrieve: --patch wants Y,X (two integers, row then column), not '" +
                     patch_arg + "'");
  if (y < 0 || y >= height || x < 0 || x >= width)
    throw UsageError("retrieve: patch (" + std::to_string(y) + ", " + std::to_string(x) +
                     ") is outside the " + std::to_string(height) + "x" + std::to_string(width) +
                     " grid of " + dir + " (y in 0.." + std::to_string(height - 1) + ", x in 0.." +
                     std::to_string(width - 1) + ")");

  const retrieval::TokenIndex index((fs::path(dir) / "embeddings.npy").string());
  if (index.shape().size() != 3 || index.tokens() != height * width)
    throw std::runtime_error(index.path() + ": shape does not hold the " + std::to_string(height) +
                             "x" + std::to_string(width) + " grid embed.json names");

  // images.csv: each row's name and label name (the session's reader, as the GUI's).
  const std::vector<session::EmbeddingRow> images = session::read_embedding_rows(dir);
  if (int64_t(images.size()) != index.images())
    throw std::runtime_error((fs::path(dir) / session::kEmbeddingsCsv).string() + " lists " +
                             std::to_string(images.size()) + " images but " + index.path() +
                             " has " + std::to_string(index.images()) + " rows");

  // --image: a row, or a name from images.csv.
  int64_t row = -1;
  if (retrieve_parse_int(image_arg, row)) {
    if (row < 0 || row >= index.images())
      throw UsageError("retrieve: --image " + image_arg + " is not a row of " + dir + " (0.." +
                       std::to_string(index.images() - 1) + ")");
  } else {
    std::vector<int64_t> hits;
    for (size_t i = 0; i < images.size(); ++i)
      if (images[i].image == image_arg) hits = {int64_t(i)};
    if (hits.empty())
      for (size_t i = 0; i < images.size(); ++i)
        if (fs::path(images[i].image).filename() == image_arg) hits.push_back(int64_t(i));
    if (hits.size() != 1)
      throw UsageError("retrieve: --image " + image_arg +
                       (hits.empty() ? " names no" : " names " + std::to_string(hits.size())) +
                       " image(s) of " + dir + "/images.csv; give its row (0.." +
                       std::to_string(index.images() - 1) + ")");
    row = hits.front();
  }

  const std::vector<float> query = index.vector(row, y * width + x);
  retrieval::SearchOptions options;
  options.exclude_image = exclude_self ? row : -1;
  // --threads, else ATTNLAB_THREADS, else every core: what main() gave LibTorch.
  options.threads = g.threads > 0 ? g.threads : runtime::current_threads();
  // A large index takes a while to page in: say how far the scan is (Ctrl-C leaves no file).
  const bool large = index.file_size() > (uint64_t(1) << 30);
  Progress progress("retrieve", index.rows(), "tokens");
  if (large) options.on_progress = [&](int64_t done, int64_t) { progress.update(done, ""); };
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<retrieval::Match> best = retrieval::top_k_similar(index, query, k, options);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (large) progress.finish();

  const int64_t candidates = (index.images() - (exclude_self ? 1 : 0)) * index.tokens();
  const std::string features = session::embedding_features_of(meta);
  const std::string at =
      meta.value(features == "output" ? "block" : "attention", meta.value("block", std::string()));
  const std::string held = features + (at.empty() ? "" : " of " + at);
  std::printf(
      "retrieve: patch (%lld, %lld) of image %lld (%s) in %s (%s): the %zu most similar of "
      "%lld patches (%lld images x %lldx%lld)%s, %.1f ms\n",
      static_cast<long long>(y), static_cast<long long>(x), static_cast<long long>(row),
      images[size_t(row)].image.c_str(), dir.c_str(), held.c_str(), best.size(),
      static_cast<long long>(candidates), static_cast<long long>(index.images()),
      static_cast<long long>(height), static_cast<long long>(width),
      exclude_self ? ", its own image excluded" : "", ms);
  std::printf(" rank      score   image  patch y,x  name\n");
  std::string table = "rank,score,image_index,image,label_name,patch_y,patch_x\n";
  for (size_t i = 0; i < best.size(); ++i) {
    const retrieval::Match& m = best[i];
    const session::EmbeddingRow& im = images[size_t(m.image)];
    const int64_t py = m.token / width, px = m.token % width;
    const std::string patch = std::to_string(py) + "," + std::to_string(px);
    std::printf("%5zu  %9.6f  %6lld  %9s  %s%s\n", i + 1, static_cast<double>(m.score),
                static_cast<long long>(m.image), patch.c_str(), im.image.c_str(),
                im.label_name.empty() ? "" : (" (" + im.label_name + ")").c_str());
    table += std::to_string(i + 1) + "," + text::format_g(static_cast<double>(m.score), 9) + "," +
             std::to_string(m.image) + "," + retrieve_cell(im.image) + "," +
             retrieve_cell(im.label_name) + "," + std::to_string(py) + "," + std::to_string(px) +
             "\n";
  }
  if (!out.empty()) {
    io::write_file_atomic(out, table);
    std::printf("retrieve: wrote %s\n", out.c_str());
  }
  return kExitOk;
}

}  // namespace attnlab::cli
