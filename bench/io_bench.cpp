// Checkpoint reading: our .pth path (zip + restricted unpickler + strided copies)
// against our safetensors path on the same weights — safetensors is the baseline, the
// ratio says what the pickle route costs. Files are read into memory once, outside the
// timed loop, so this measures parsing, not the disk.
#include <benchmark/benchmark.h>

#include "core/io/file_bytes.h"
#include "core/io/tensor_file.h"

namespace {

std::string fixture(const std::string& name) {
  return std::string(ATTNLAB_SHARED_DIR) + "/fixtures/parity/" + name;
}

void parse(benchmark::State& state, const std::string& file) {
  std::vector<uint8_t> bytes = attnlab::io::read_file_bytes(fixture(file));
  for (auto _ : state) {
    attnlab::io::TensorFile f =
        attnlab::io::parse_tensor_file(attnlab::io::ByteView(bytes.data(), bytes.size()), file);
    benchmark::DoNotOptimize(f.tensors.size());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes.size()));
}

}  // namespace

BENCHMARK_CAPTURE(parse, ravlt_safetensors, std::string("ravlt_mini.safetensors"))
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(parse, ravlt_pth, std::string("ravlt_mini.pth"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(parse, deit_safetensors, std::string("deit_mini.safetensors"))
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(parse, deit_pth, std::string("deit_mini.pth"))->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
