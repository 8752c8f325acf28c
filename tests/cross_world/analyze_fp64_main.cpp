// attnlab_analyze_fp64: `attnlab analyze` for one image with the model's weights, its input
// and its forward in float64, writing the same output folder (tables, arrays, sidecar)
// through the CLI's own writers. A test instrument, not a command: the cross-world test
// (cross_world_test.cpp) and scripts/make_cross_world_reference.sh need each analysis's
// float64 result to tell two LibTorch versions' float32 rounding from a real difference,
// and `--dtype` offers only the precisions meant for use (fp32, bf16, fp16).
//
//   attnlab_analyze_fp64 [--threads N] [analyze's options]
//
// --threads is attnlab's global option (ATTNLAB_THREADS or every core when absent).
// The picture is resized and cropped by attnlab's own code (PIL's fixed-point filter, no
// LibTorch), then normalised here in float64, so two builds' runs start from the same
// values: the CLI's float32 normalisation rounds, and its rounding depends on the build.
#include <ATen/ATen.h>
#include <torch/version.h>

#include <cstdio>
#include <string>
#include <vector>

#include "app/cli/analyze_common.h"
#include "app/cli/model_options.h"
#include "app/session/edited_input.h"
#include "core/analysis/output_folder.h"
#include "core/io/image_io.h"
#include "core/runtime/threads.h"

namespace {

using namespace attnlab;

// image::normalise_picture's (x / 255 − mean) / std, in float64 (mean and std are float32
// constants, exact in float64).
at::Tensor normalise_fp64(const io::RgbImage& picture, const image::Preprocessing& p) {
  const at::Tensor t = at::from_blob(const_cast<uint8_t*>(picture.rgb.data()),
                                     {picture.height, picture.width, 3}, at::kByte)
                           .permute({2, 0, 1})
                           .to(at::kDouble);
  const at::Tensor mean =
      at::tensor({double(p.mean[0]), double(p.mean[1]), double(p.mean[2])}).view({3, 1, 1});
  const at::Tensor stdv =
      at::tensor({double(p.std[0]), double(p.std[1]), double(p.std[2])}).view({3, 1, 1});
  return t.div(255).sub(mean).div(stdv).unsqueeze(0).contiguous();
}

int run(std::vector<std::string> argv) {
  cli::Args args(std::move(argv));
  runtime::configure_threads(args.take_positive_int("--threads", 0));
  cli::AnalyzeRequest req = cli::take_analyze_request(args, /*series=*/false);
  if (req.images.size() != 1) throw cli::UsageError("give exactly one image");
  const session::ImageInput& image = req.images.front();

  runtime::ComputeTarget target;  // the CPU, float64 (select_target knows no fp64 by name)
  target.dtype = at::kDouble;
  const cli::ReadyModel ready = cli::load_ready_model(req.model, target);
  if (ready.model->dtype() != at::kDouble)
    throw std::runtime_error("the model's weights did not become float64");
  const io::RgbImage picture =
      session::edited_picture(io::load_rgb_image(image.path), req.model.preprocessing,
                              *ready.model, req.settings.edits);
  const at::Tensor x = normalise_fp64(picture, req.model.preprocessing);

  analysis::OutputFolder folder(req.out, req.model.tag);
  session::AnalysisSession s(req.settings,
                             [&](const analysis::Array& a) { folder.write_array(a); });
  {
    const at::NoGradGuard no_grad;  // as analyse_images: the explanations enable their own
    const models::ForwardResult result = ready.model->run(x, req.settings.forward_options());
    s.add(image.tag, result, 0, {image.path, &x, &req.model.preprocessing});
    if (s.explains()) s.explain(image.tag, *ready.model, x);
  }
  s.finish();
  const nlohmann::json sidecar = {
      {"dtype", "fp64"},
      {"libtorch_version", std::to_string(TORCH_VERSION_MAJOR) + "." +
                               std::to_string(TORCH_VERSION_MINOR) + "." +
                               std::to_string(TORCH_VERSION_PATCH)},
      {"threads", runtime::current_threads()},
      {"settings", req.settings.to_json()},
      {"model", ready.description()},
      {"image", image.path}};
  cli::write_analyze_results(folder, s, req.settings, sidecar);
  for (const auto& w : s.warnings()) std::fprintf(stderr, "warning: %s\n", w.c_str());
  for (const auto& note : s.skipped()) std::fprintf(stderr, "%s\n", note.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const attnlab::cli::UsageError& e) {
    std::fprintf(stderr, "attnlab_analyze_fp64: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnlab_analyze_fp64: error: %s\n", e.what());
    return 1;
  }
}
