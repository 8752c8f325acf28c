// attnlab_project_tool: a test instrument for tests/projection/reference_check.py. Reads
// an N×D float32 .npy (core/io/npy.h), runs one projection or quality measure of
// attnlab_projection, writes the coordinates as a float64 .npy and prints one JSON line of
// scalars (explained variance, KL divergence, timings) for the script to compare with
// sklearn and umap-learn.
//
//   attnlab_project_tool pca|tsne|umap IN.npy OUT.npy [key=value ...]
//   attnlab_project_tool quality X.npy Y.npy k=10      (Y: float32 or float64, N×d)
// keys: k (PCA components / quality's k), dims, perplexity, iterations, theta, seed,
//       threads, n_neighbors, min_dist, n_epochs, init (pca|random).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/io/npy.h"
#include "core/projection/pca.h"
#include "core/projection/quality.h"
#include "core/projection/tsne.h"
#include "core/projection/umap.h"

namespace {

using namespace attnlab;

std::vector<double> as_doubles(const io::RawTensor& t) {
  std::vector<double> out(static_cast<size_t>(t.numel()));
  if (t.dtype == io::DType::F32) {
    std::vector<float> f(out.size());
    std::memcpy(f.data(), t.bytes.data(), f.size() * sizeof(float));
    for (size_t i = 0; i < f.size(); ++i) out[i] = static_cast<double>(f[i]);
  } else if (t.dtype == io::DType::F64) {
    std::memcpy(out.data(), t.bytes.data(), out.size() * sizeof(double));
  } else {
    throw std::invalid_argument("expected a float32 or float64 matrix, got " + t.describe());
  }
  return out;
}

// .npy format 1.0, little-endian float64, C order: the header padded to a multiple of 64.
void write_f64_npy(const std::string& path, const std::vector<double>& v, int64_t rows, int64_t cols) {
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (" + std::to_string(rows) +
                       ", " + std::to_string(cols) + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const auto len = static_cast<uint16_t>(header.size());
  const char len_bytes[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  out.write(len_bytes, 2);
  out << header;
  out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(double)));
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::string json_array(const std::vector<double>& v) {
  std::ostringstream s;
  s.precision(17);
  s << '[';
  for (size_t i = 0; i < v.size(); ++i) s << (i ? ", " : "") << v[i];
  return s.str() + ']';
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: attnlab_project_tool pca|tsne|umap|quality IN.npy OUT.npy [key=value ...]\n";
    return 2;
  }
  try {
    const std::string method = argv[1];
    std::map<std::string, std::string> opt;
    for (int a = 4; a < argc; ++a) {
      const std::string kv = argv[a];
      const auto eq = kv.find('=');
      if (eq == std::string::npos) throw std::invalid_argument("expected key=value, got " + kv);
      opt[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    auto num = [&](const char* key, double fallback) { return opt.count(key) ? std::stod(opt[key]) : fallback; };
    const io::RawTensor in = io::read_npy(argv[2]);
    if (in.shape.size() != 2) throw std::invalid_argument("expected an N×D matrix, got " + in.describe());
    const std::vector<double> xd = as_doubles(in);
    const std::vector<float> x(xd.begin(), xd.end());
    const projection::MatrixView view(x, in.shape[0], in.shape[1]);
    const int threads = static_cast<int>(num("threads", 0));
    std::ostringstream json;
    json.precision(17);
    const auto start = std::chrono::steady_clock::now();
    auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    if (method == "pca") {
      const auto r = projection::pca(view, static_cast<int64_t>(num("k", 2)));
      write_f64_npy(argv[3], r.coords, r.n, r.k);
      json << "{\"explained_variance\": " << json_array(r.explained_variance)
           << ", \"explained_variance_ratio\": " << json_array(r.explained_variance_ratio)
           << ", \"components\": " << json_array(r.components) << ", \"seconds\": " << seconds() << "}";
    } else if (method == "tsne") {
      projection::TsneOptions o;
      o.dims = static_cast<int>(num("dims", 2));
      o.perplexity = num("perplexity", 30);
      o.iterations = static_cast<int>(num("iterations", 1000));
      o.theta = num("theta", 0.5);
      o.seed = static_cast<uint64_t>(num("seed", 0));
      o.threads = threads;
      if (opt.count("init") && opt["init"] == "random") o.init = projection::TsneOptions::Init::Random;
      const auto r = projection::tsne(view, o);
      write_f64_npy(argv[3], r.coords, r.n, r.dims);
      json << "{\"kl_divergence\": " << r.kl_divergence << ", \"seconds\": " << seconds() << "}";
    } else if (method == "umap") {
      projection::UmapOptions o;
      o.dims = static_cast<int>(num("dims", 2));
      o.n_neighbors = static_cast<int>(num("n_neighbors", 15));
      o.min_dist = num("min_dist", 0.1);
      o.n_epochs = static_cast<int>(num("n_epochs", 0));
      o.seed = static_cast<uint64_t>(num("seed", 0));
      o.threads = threads;
      const auto r = projection::umap(view, o);
      write_f64_npy(argv[3], r.coords, r.n, r.dims);
      json << "{\"a\": " << r.a << ", \"b\": " << r.b << ", \"seconds\": " << seconds() << "}";
    } else if (method == "quality") {
      const io::RawTensor yt = io::read_npy(argv[3]);
      if (yt.shape.size() != 2) throw std::invalid_argument("expected an N×d projection, got " + yt.describe());
      const std::vector<double> y = as_doubles(yt);
      const projection::CoordsView yv(y, yt.shape[0], yt.shape[1]);
      const auto k = static_cast<int64_t>(num("k", 10));
      json << "{\"trustworthiness\": " << projection::trustworthiness(view, yv, k, threads)
           << ", \"knn_preservation\": " << projection::knn_preservation(view, yv, k, threads)
           << ", \"seconds\": " << seconds() << "}";
    } else {
      throw std::invalid_argument("unknown method " + method);
    }
    std::cout << json.str() << std::endl;
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "attnlab_project_tool: " << e.what() << "\n";
    return 1;
  }
}
