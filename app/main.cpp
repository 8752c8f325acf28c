// attnlab: entry point. Parses the global options, configures LibTorch's threads, and
// dispatches to a CLI subcommand or the GUI. Every failure ends as one readable line on
// stderr and a non-zero exit code.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <exception>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "app/cli/cli_common.h"
#include "core/runtime/device.h"
#include "core/runtime/threads.h"
#ifdef ATTNLAB_HAVE_GUI
#include "app/gui/gui.h"
#endif

namespace {

const char* kUsage = R"(attnlab — look inside efficient-attention vision transformers

usage: attnlab [global options] <command> [args]

commands:
  gui [IMAGE...] [--model M...]            open the desktop GUI (default command); with
      [--empty] [--script FILE]             no files, the zoo and the demo images
      [--after-frames N] [--screenshot PNG] (tests: quit after N frames, save PNG)
  IMAGE... --model M...                     the same: open these in the GUI
  inspect FILE... [--stats] [--json]        list tensors, dtypes, shapes, metadata and
                                            container keys of safetensors/.pth/.npy/IDX;
                                            --stats: min/max/mean/std, NaN/Inf counts
  info                                      LibTorch version, threads, devices
  mechanisms                                the attention mechanisms and their options
  infer --checkpoint FILE --input IN --out OUT   run a model on IN's tensor `input`; write
      [--config JSON | --preset NAME] [--key K]  logits and every intermediate under the
      [--half]                              fixtures' names (--half: fp16 weights on CUDA)
  classify --checkpoint FILE [--preset NAME | --config JSON] [--key K] IMAGE...
                                            preprocess as the model's paper does, print top-5
  presets                                   the official model presets
  analyze --model PRESET|CHECKPOINT --images FILES|DIR --out DIR
      [--analyses LIST]       maps,rollout,rank,spectra,anchors,mask,locality,gradcam,
                              gradrollout (default all)
      [--class C]             the class gradcam/gradrollout explain (default: top-1)
      [--gradcam-target PATH] [--signed-cam]   Grad-CAM's module (default: last block's
                              norm1 or last stage) and its map without the ReLU
      [--query y,x]           query cell on the first attention layer's grid (default centre)
      [--query-token N]       or a token index of that layer (prefix first: 0 = cls)
      [--layers LIST]         attention layers by index, e.g. 0,3-5 (default all)
      [--fusion mean|max|min] [--residual R] [--discard F] [--no-renormalize]   rollout
      [--rank-rtol X | --rank-atol X]   rank tolerance (default torch.linalg.matrix_rank's)
      [--mask-threshold E]    Castling mask threshold (default: the layer's own, 0.02)
      [--preset P | --config JSON] [--checkpoint FILE] [--key K] [--random-init]
                                            write every statistic (CSV, JSON, LaTeX), map
                                            and spectrum (.npy) and a settings sidecar
  analyze-series --checkpoints FILES... --images FILES|DIR --out DIR [options as analyze]
                                            the statistics of each checkpoint in order
                                            (default mask,rank,locality: Castling Fig. 6)
  report --models M1 M2... --images FILES|DIR --out DIR   every paper figure (maps, rollout,
      [--formats svg,pdf,png] [--dpi N]       models side by side, spectra, ranks, anchors,
      [--series CKPT...]                      mask sparsity, locality), the statistics of
      [--colormap NAME] [--alpha A]           analyze and an index.html with captions;
      [--upsample nearest|bilinear]           colormaps: viridis magma inferno plasma cividis
      [analysis options as analyze]           turbo jet gray RdBu coolwarm
  report --demo [--out DIR] [--images ...]  the zoo's six models on four demo images, and
                                            Castling's checkpoint series
      (report and gui: a model M is a checkpoint, or a config .json = untrained weights)
  train --mechanism NAME | --config JSON | --preset NAME --out RUN_DIR [--export FILE]
      [--dataset fashion-mnist:train|folder:DIR] [--epochs E | --steps N] [--batch B]
      [--lr LR] [--warmup N] [--seed S] [--checkpoint-every K] [--series DIR]
      [--threshold EPS] [--sparse-penalty L] [--option NAME=VALUE...] [--resume [CKPT]]
                                            train (AdamW, warm-up + cosine, label smoothing,
                                            light augmentation); docs/TRAINING.md
  eval --model CHECKPOINT|PRESET --dataset fashion-mnist:test [--limit N]
                                            classification accuracy in percent
  export-samples --dataset SPEC --out DIR [--per-class N]
                                            the first N images of each class as PNGs
  zoo [DIR] [--write-index]                 list the trained zoo / rewrite its zoo.json

global options:
  --threads N     LibTorch intra-op threads (default: ATTNLAB_THREADS or all cores)
  --device D      auto | cpu | cuda | cuda:N (default auto)
  -h, --help      this text
  --version       print the version
)";

int run_gui_command(attnlab::cli::Args args, const std::string& first_image) {
#ifdef ATTNLAB_HAVE_GUI
  attnlab::gui::GuiOptions o;
  if (!first_image.empty()) o.images.push_back(first_image);
  for (auto& p : args.take_list("--image")) o.images.push_back(p);
  for (auto& p : args.take_list("--images")) o.images.push_back(p);
  for (auto& p : args.take_list("--checkpoint")) o.models.push_back(p);
  for (auto& p : args.take_list("--model")) o.models.push_back(p);
  for (auto& p : args.take_list("--models")) o.models.push_back(p);
  o.max_frames = args.take_positive_int("--frames", 0);
  o.max_frames = args.take_positive_int("--after-frames", o.max_frames);
  o.screenshot_path = args.take_option("--screenshot");
  o.script_path = args.take_option("--script");
  o.no_demo = args.take_flag("--empty");
  for (auto& p : args.positionals()) o.images.push_back(p);  // attnlab IMAGE... --model M
  return attnlab::gui::run_gui(o);
#else
  (void)args;
  (void)first_image;
  std::fprintf(
      stderr,
      "attnlab: this build has no GUI (GLFW/Dear ImGui were not found when it was configured)\n");
  return attnlab::cli::kExitFailure;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  using namespace attnlab::cli;
  std::vector<std::string> args(argv + 1, argv + argc);
  GlobalOptions g;
  try {
    // Global options may appear anywhere before the command's own arguments.
    Args all(args);
    if (all.take_flag("-h") || all.take_flag("--help")) {
      std::fputs(kUsage, stdout);
      return kExitOk;
    }
    if (all.take_flag("--version")) {
      std::printf("attnlab %s\n", ATTNLAB_VERSION);
      return kExitOk;
    }
    g.threads = all.take_positive_int("--threads", 0);
    std::string device = all.take_option("--device");
    if (!device.empty()) g.device = device;
    attnlab::runtime::configure_threads(g.threads);

    std::string command = all.take_command();
    // `attnlab IMAGE... --model M`: a first word that names a file or folder (and not a
    // command) opens the GUI on it.
    static const char* kCommands[] = {"inspect", "info", "mechanisms", "infer", "classify", "presets",
                                      "analyze", "analyze-series", "report", "train", "eval",
                                      "export-samples", "zoo"};
    const bool known = std::find(std::begin(kCommands), std::end(kCommands), command) != std::end(kCommands);
    const bool file = !known && !command.empty() &&
                      (std::filesystem::is_regular_file(command) || std::filesystem::is_directory(command));
    const bool gui = command.empty() || command == "gui" || file;
    // The GUI leaves one core to the interface: with every core busy in LibTorch, the
    // frame loop would wait for the scheduler while a long job runs.
    if (gui && g.threads == 0 && std::getenv("ATTNLAB_THREADS") == nullptr) {
      const unsigned cores = std::thread::hardware_concurrency();
      if (cores > 1) attnlab::runtime::configure_threads(int(cores) - 1);
    }
    if (gui) return run_gui_command(all, file ? command : "");
    if (command == "inspect") return cmd_inspect(all, g);
    if (command == "info") return cmd_info(all, g);
    if (command == "mechanisms") return cmd_mechanisms(all, g);
    if (command == "infer") return cmd_infer(all, g);
    if (command == "classify") return cmd_classify(all, g);
    if (command == "presets") return cmd_presets(all, g);
    if (command == "analyze") return cmd_analyze(all, g);
    if (command == "analyze-series") return cmd_analyze_series(all, g);
    if (command == "report") return cmd_report(all, g);
    if (command == "train") return cmd_train(all, g);
    if (command == "eval") return cmd_eval(all, g);
    if (command == "export-samples") return cmd_export_samples(all, g);
    if (command == "zoo") return cmd_zoo(all, g);
    throw UsageError("unknown command '" + command + "'");
  } catch (const UsageError& e) {
    std::fprintf(stderr, "attnlab: %s\n(see attnlab --help)\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnlab: error: %s\n", e.what());
    return kExitFailure;
  }
}
