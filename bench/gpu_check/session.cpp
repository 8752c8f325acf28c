// The GPU check's third program (attnlab_gpucheck_session, built beside attnlab_gpucheck by
// bench/gpu_check/CMakeLists.txt): every registered analysis, opt-in ones included, run
// through AnalysisSession on one model of each family (random weights from a preset, at a
// small input size where the family allows one) for one synthetic picture, on CUDA against
// the CPU: every table and every array, at fp32 (TF32 off) and at bf16 (the device's bf16
// forward against the CPU's fp32 one), with the tolerances derived in session_compare.h. One
// line per (model, analysis, dtype, output); each analysis's time on the CPU and the device
// (forward included; the median of --repeats runs, fewer for the slow ones: run_side); a
// summary; exit 1 on any FAIL.
//
// The picture is a uint8 RGB pattern made here (no image file: a GPU-check-only build has no
// decoder) and goes through session::edited_input, the path of the CLI, the GUI and the
// Python module's arrays: the model's resize and crop, then its normalisation.
//
// Without a CUDA device it says so and exits 77. --self-test runs the same code with both
// sides on the CPU, the "device" side with one thread (another summation order), so that
// the comparison itself is exercised on a machine without a GPU.
//   attnlab_gpucheck_session [--self-test] [--models NAME[@SIZE],...] [--analyses LIST]
//                            [--repeats N] [--no-bf16]
//   attnlab_gpucheck_session --default-models   (prints the default list)
#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "app/session/analysis_registry.h"
#include "app/session/analysis_session.h"
#include "app/session/edited_input.h"
#include "bench/gpu_check/session_compare.h"
#include "core/io/text.h"
#include "core/runtime/precision.h"
#include "core/runtime/threads.h"
#include "models/model_registry.h"
#include "models/presets.h"

using namespace attnlab;

namespace {

// One model per family of the preset registry (the ViT family's mechanisms each: softmax,
// anchor, Castling; DINOv2 with registers for the self-supervised ViTs), at the smallest
// input its family runs that keeps the run short; CLIP and Swin run at their own size only
// (224). Swin last: its faithfulness (hundreds of forwards at 224) is the longest part.
const char* kDefaultModels =
    "deit_tiny_patch16_224@112,anchor_deit_tiny_distilled_patch16_224@112,"
    "castling_deit_tiny@112,dinov2_vits14_reg@112,litv2_s@128,ravlt_t@128,clip_vit_b16,"
    "swin_tiny_patch4_window7_224";

struct Options {
  bool self_test = false, bf16 = true;
  std::string models = kDefaultModels;
  std::string analyses;  // "": every registered analysis
  int repeats = 3;
};

// A 160×120 picture (another aspect than the model's, so the resize and crop have work):
// a colour gradient, a checkerboard of 10-pixel cells, and a bright disc off-centre.
io::RgbImage synthetic_picture() {
  io::RgbImage im;
  im.width = 160;
  im.height = 120;
  im.rgb.resize(size_t(im.width) * size_t(im.height) * 3);
  for (int y = 0; y < im.height; ++y)
    for (int x = 0; x < im.width; ++x) {
      const bool cell = ((x / 10) + (y / 10)) % 2 == 0;
      const int dx = x - 100, dy = y - 50;
      const bool disc = dx * dx + dy * dy < 25 * 25;
      uint8_t* p = &im.rgb[(size_t(y) * size_t(im.width) + size_t(x)) * 3];
      p[0] = uint8_t(disc ? 250 : (x * 255) / (im.width - 1));
      p[1] = uint8_t(disc ? 230 : (y * 255) / (im.height - 1));
      p[2] = uint8_t(disc ? 40 : cell ? 200 : 30);
    }
  return im;
}

struct Timed {
  gpucheck::SideResults results;
  std::vector<double> ms;
};

void synchronize(const c10::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

// One analysis on one image, as the CLI's analyze runs it: the forward its settings ask for,
// add, explain (with autograd), finish.
gpucheck::SideResults run_once(models::Backbone& model, const c10::Device& device,
                               const at::Tensor& input, const image::Preprocessing& p,
                               const session::AnalysisSettings& settings, double& ms) {
  gpucheck::SideResults out;
  session::AnalysisSession s(settings, [&](const analysis::Array& a) { out.arrays.push_back(a); });
  synchronize(device);
  const auto t0 = std::chrono::steady_clock::now();
  const at::Tensor x = input.to(device);
  models::ForwardResult r;
  {
    const at::NoGradGuard no_grad;
    r = model.run(x, settings.forward_options());
  }
  s.add("img", r, 0, {"", &x, &p});
  if (s.explains()) s.explain("img", model, x);
  s.finish();
  synchronize(device);
  ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  out.tables = s.tables();
  for (auto& a : s.arrays()) out.arrays.push_back(std::move(a));
  out.warnings = s.warnings();
  out.skipped = s.skipped();
  if (r.output_kind == models::OutputKind::classes) out.top1 = r.logits[0].argmax().item<int64_t>();
  return out;
}

// Timed runs stop at `repeats` or once they took this long together: the analyses that run
// hundreds of forwards (faithfulness, heads) are timed once, the rest `repeats` times.
constexpr double kTimingBudgetMs = 1500;

// The first run gives the results; on a device it is also the warm-up, not timed.
Timed run_side(models::Backbone& model, const c10::Device& device, const at::Tensor& input,
               const image::Preprocessing& p, const session::AnalysisSettings& settings,
               int repeats, bool warm_up) {
  Timed t;
  double ms = 0;
  t.results = run_once(model, device, input, p, settings, ms);
  if (!warm_up) t.ms.push_back(ms);
  double spent = t.ms.empty() ? 0 : t.ms.front();
  while (int(t.ms.size()) < repeats && (t.ms.empty() || spent < kTimingBudgetMs)) {
    run_once(model, device, input, p, settings, ms);
    t.ms.push_back(ms);
    spent += ms;
  }
  return t;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int blocks_of(const models::Json& config, int traced) {
  int blocks = traced;
  for (const char* key : {"depths", "depth", "layers"}) {
    if (!config.contains(key)) continue;
    const auto& v = config[key];
    int n = 0;
    if (v.is_array())
      for (const auto& d : v) n += d.is_number_integer() ? d.get<int>() : 0;
    else if (v.is_number_integer())
      n = v.get<int>();
    blocks = std::max(blocks, n);
  }
  return std::max(blocks, 1);
}

struct Tally {
  int lines = 0, failed = 0, flipped = 0, errors = 0;
};

void print_verdicts(const std::string& head, const std::vector<gpucheck::Verdict>& verdicts,
                    Tally& tally) {
  for (const auto& v : verdicts) {
    ++tally.lines;
    tally.failed += v.failed;
    tally.flipped += v.flips;
    std::printf("%s %-44s %s\n", head.c_str(), v.output.c_str(), v.text.c_str());
  }
}

// The settings of one analysis: the explained class fixed at 0 (Grad-CAM and gradient rollout
// of the same class on both sides, whatever each predicts).
session::AnalysisSettings settings_for(const std::string& analysis, bool classes) {
  session::AnalysisSettings s;
  s.analyses = {analysis};
  if (classes) s.options.set("class", 0);
  return s;
}

int check_model(const std::string& spec, const std::vector<std::string>& analyses, const Options& o,
                const c10::Device& device, int device_threads, Tally& tally) {
  const size_t at = spec.find('@');
  const models::Preset& preset = models::find_preset(spec.substr(0, at));
  models::Json config = preset.config;
  image::Preprocessing p = preset.preprocessing;
  std::string tag = preset.name;
  if (at != std::string::npos) {
    const int64_t size = std::stoll(spec.substr(at + 1));
    try {
      config = models::config_at_size(preset.config, size, size, "bicubic");
      p = models::preprocessing_at_size(config, preset.preprocessing, size, size);
      tag += "@" + std::to_string(size);
    } catch (const std::exception& e) {
      std::printf("%s: at its own size (%s)\n", preset.name.c_str(), e.what());
    }
  }
  // Three copies of the same random weights (the same seed): the CPU's, the device's at
  // fp32 and at bf16 (set_precision rounds the weights, so the fp32 copies never see it).
  const auto make = [&config] {
    at::manual_seed(0);
    auto m = models::make_backbone(config);
    m->eval();
    return m;
  };
  const auto model = make(), dev32_model = make(), dev16_model = make();
  dev32_model->to(device);
  dev16_model->to(device);
  // bf16 where this LibTorch cannot run it there (the self-test's CPU under
  // ONEDNN_MAX_CPU_ISA=AVX2 on an AVX-512 machine): the bf16 side is not run, with why.
  const std::string bf16_refused =
      o.bf16 ? runtime::precision_refusal(at::kBFloat16, device) : std::string();
  if (o.bf16 && bf16_refused.empty()) dev16_model->set_precision(at::kBFloat16);
  const at::Tensor input =
      session::edited_input(synthetic_picture(), p, *model, /*edits=*/{});  // CPU, float32
  const bool classes = model->output_kind() == models::OutputKind::classes;
  int traced = 0;
  {
    const at::NoGradGuard no_grad;
    models::ForwardOptions fo;
    fo.trace_attention = true;
    traced = int(model->run(input, fo).traces.size());
  }
  const int blocks = blocks_of(config, traced);
  std::printf("== %s: %s, input %lldx%lld, %d blocks (%d traced)\n", tag.c_str(),
              preset.description.c_str(), (long long)input.size(2), (long long)input.size(3),
              blocks, traced);
  std::fflush(stdout);
  const int cpu_threads = runtime::current_threads();
  // Each side's start on stderr, at once: a run stopped by a time limit says where it was
  // (the H200 runs stopped inside RAVLT's and CLIP's rank without saying on which side).
  const auto starting = [&](const std::string& name, const char* side) {
    std::fprintf(stderr, "-- %s %s: %s\n", tag.c_str(), name.c_str(), side);
    std::fflush(stderr);
  };
  for (const auto& name : analyses) {
    const auto settings = settings_for(name, classes);
    try {
      at::set_num_threads(cpu_threads);
      starting(name, "cpu fp32");
      const Timed cpu =
          run_side(*model, c10::Device(c10::kCPU), input, p, settings, o.repeats, false);
      if (!cpu.results.skipped.empty() && cpu.results.tables.empty() &&
          cpu.results.arrays.empty()) {
        std::printf("%s %s: skipped: %s\n", tag.c_str(), name.c_str(),
                    cpu.results.skipped.front().c_str());
        continue;
      }
      if (o.self_test) at::set_num_threads(device_threads);
      starting(name, o.self_test ? "cpu/1-thread fp32" : "device fp32");
      const Timed dev32 =
          run_side(*dev32_model, device, input, p, settings, o.repeats, device.is_cuda());
      const std::string head = tag + " " + name;
      print_verdicts(head + " fp32",
                     gpucheck::compare_results(name, cpu.results, dev32.results,
                                               gpucheck::bounds_for(false, blocks)),
                     tally);
      double ms16 = 0;
      size_t runs16 = 0;
      std::optional<Timed> bf16;
      if (o.bf16 && !bf16_refused.empty()) {
        std::printf("%s bf16 not run: %s\n", head.c_str(), bf16_refused.c_str());
        if (device.is_cuda()) ++tally.errors;  // the check exists to run it there
      } else if (o.bf16) {
        try {
          starting(name, o.self_test ? "cpu/1-thread bf16" : "device bf16");
          bf16 = run_side(*dev16_model, device, input, p, settings, o.repeats, device.is_cuda());
        } catch (const c10::Error& e) {
          // The self-test's bf16 side runs on the CPU, where LibTorch 1.13 lacks some bf16
          // kernels (DINOv2's antialiased position-embedding resize): said, not failed. On
          // CUDA it is an error like any other.
          const std::string what = e.what_without_backtrace();
          if (!o.self_test || what.find("not implemented for 'BFloat16'") == std::string::npos)
            throw;
          std::printf("%s bf16 not run: this LibTorch's CPU lacks a kernel: %s\n", head.c_str(),
                      what.substr(0, 200).c_str());
        }
      }
      if (bf16) {
        const Timed& dev16 = *bf16;
        ms16 = median(dev16.ms);
        runs16 = dev16.ms.size();
        print_verdicts(head + " bf16",
                       gpucheck::compare_results(name, cpu.results, dev16.results,
                                                 gpucheck::bounds_for(true, blocks)),
                       tally);
        for (const auto& w : dev16.results.warnings)
          std::printf("%s bf16 warning: %s\n", head.c_str(), w.c_str());
      }
      for (const auto& w : cpu.results.warnings)
        std::printf("%s cpu warning: %s\n", head.c_str(), w.c_str());
      for (const auto& w : dev32.results.warnings)
        if (std::find(cpu.results.warnings.begin(), cpu.results.warnings.end(), w) ==
            cpu.results.warnings.end())
          std::printf("%s fp32 warning on the device only: %s\n", head.c_str(), w.c_str());
      if (cpu.results.top1 != dev32.results.top1)
        std::printf("%s note: top-1 class %lld on the CPU, %lld on the device (fp32)\n",
                    head.c_str(), (long long)cpu.results.top1, (long long)dev32.results.top1);
      const double c = median(cpu.ms), g = median(dev32.ms);
      std::printf("%s time: cpu fp32 %.1f ms, %s fp32 %.1f ms (x%.1f)", head.c_str(), c,
                  o.self_test ? "cpu/1-thread" : "cuda", g, g > 0 ? c / g : 0.0);
      if (bf16)
        std::printf(", %s bf16 %.1f ms (x%.1f)", o.self_test ? "cpu/1-thread" : "cuda", ms16,
                    ms16 > 0 ? c / ms16 : 0.0);
      std::printf("  [medians of %zu, %zu, %zu runs]\n", cpu.ms.size(), dev32.ms.size(), runs16);
    } catch (const std::exception& e) {
      ++tally.errors;
      std::printf("%s %s ERROR %s\n", tag.c_str(), name.c_str(),
                  std::string(e.what()).substr(0, 400).c_str());
    }
    std::fflush(stdout);
    at::set_num_threads(cpu_threads);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "gpucheck_session: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--self-test") {
      o.self_test = true;
    } else if (a == "--models") {
      o.models = value();
    } else if (a == "--analyses") {
      o.analyses = value();
    } else if (a == "--repeats") {
      o.repeats = std::max(1, std::stoi(value()));
    } else if (a == "--no-bf16") {
      o.bf16 = false;
    } else if (a == "--default-models") {  // for run_all.sh, which runs one model per process
      std::printf("%s\n", kDefaultModels);
      return 0;
    } else {
      std::fprintf(stderr,
                   "usage: attnlab_gpucheck_session [--self-test] [--models NAME[@SIZE],...] "
                   "[--analyses LIST] [--repeats N] [--no-bf16] | --default-models\n");
      return 2;
    }
  }
  if (!o.self_test && !torch::cuda::is_available()) {
    std::printf(
        "gpucheck_session: no CUDA device (a CPU-only LibTorch, no GPU, or "
        "CUDA_VISIBLE_DEVICES hides it): nothing checked, exit 77 (skipped)\n");
    return 77;
  }
  at::globalContext().setAllowTF32CuBLAS(false);
  at::globalContext().setAllowTF32CuDNN(false);
  runtime::configure_threads();
  const c10::Device device = o.self_test ? c10::Device(c10::kCPU) : c10::Device(c10::kCUDA, 0);
  std::vector<std::string> analyses;
  if (o.analyses.empty()) {
    analyses = session::analysis_names();
  } else {
    for (const auto& n : session::parse_analyses(o.analyses)) analyses.push_back(n);
  }
  std::printf("gpucheck_session: %s against the CPU (%d threads), %zu analyses: %s\n",
              o.self_test ? "self-test: the CPU with 1 thread" : "CUDA device 0",
              runtime::current_threads(), analyses.size(), text::join(analyses).c_str());
  const auto t0 = std::chrono::steady_clock::now();
  Tally tally;
  std::stringstream models(o.models);
  for (std::string spec; std::getline(models, spec, ',');) {
    if (spec.empty()) continue;
    const auto m0 = std::chrono::steady_clock::now();
    try {
      check_model(spec, analyses, o, device, 1, tally);
      std::printf("== %s done in %.0f s\n", spec.c_str(),
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - m0).count());
    } catch (const std::exception& e) {
      ++tally.errors;
      std::printf("%s ERROR %s\n", spec.c_str(), std::string(e.what()).substr(0, 400).c_str());
    }
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "gpucheck_session: %d outputs compared, %d FAIL, %d with flips (discrete, "
      "reported), %d errors, %.0f s\n",
      tally.lines, tally.failed, tally.flipped, tally.errors, s);
  return tally.failed == 0 && tally.errors == 0 ? 0 : 1;
}
