// attnlab: entry point. Parses the global options, configures LibTorch's threads, and
// dispatches to a CLI subcommand or the GUI. Every failure ends as one readable line on
// stderr and a non-zero exit code.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "app/cli/model_options.h"
#include "app/cli/version.h"
#include "core/io/file_bytes.h"
#include "core/runtime/allocator_tuning.h"
#include "core/runtime/device.h"
#include "core/runtime/memory_budget.h"
#include "core/runtime/precision.h"
#include "core/runtime/threads.h"
#ifdef ATTNLAB_HAVE_GUI
#include "app/gui/gui.h"
#endif

namespace {

int run_gui_command(attnlab::cli::Args args, const std::string& first_image,
                    const attnlab::cli::GlobalOptions& g) {
#ifdef ATTNLAB_HAVE_GUI
  attnlab::gui::GuiOptions o;
  o.device = g.device;
  o.dtype = g.dtype;
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
  o.merge = attnlab::cli::take_merge(args);                  // the one parser of --merge
  for (auto& p : args.positionals()) o.images.push_back(p);  // attnlab IMAGE... --model M
  return attnlab::gui::run_gui(o);
#else
  (void)args;
  (void)first_image;
  (void)g;
  std::fprintf(
      stderr,
      "attnlab: this build has no GUI (GLFW/Dear ImGui were not found when it was configured)\n");
  return attnlab::cli::kExitFailure;
#endif
}

// --max-memory, else ATTNLAB_MAX_MEMORY: the forward pass's memory budget (a malformed
// size is a usage error, said now); neither: the default share of available RAM.
void set_memory_budget_option(const std::string& option) {
  const char* env = std::getenv("ATTNLAB_MAX_MEMORY");
  const std::string text = !option.empty() ? option : env ? env : "";
  const std::string origin =
      !option.empty() ? "--max-memory " + option : "ATTNLAB_MAX_MEMORY=" + text;
  try {
    attnlab::runtime::set_memory_budget(text, origin);
  } catch (const std::invalid_argument& e) {
    throw attnlab::cli::UsageError(
        std::string(option.empty() ? "ATTNLAB_MAX_MEMORY: " : "--max-memory: ") + e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace attnlab::cli;
  std::vector<std::string> args(argv + 1, argv + argc);
  GlobalOptions g;
  // Ctrl-C or a kill during an export leaves no temporary file (complete files stay).
  attnlab::io::remove_temporaries_on_signal();
  try {
    // Global options may appear anywhere before the command's own arguments.
    Args all(args);
    // -h/--help anywhere: the whole help, or after a command that command's own. A file
    // as the first word opens the GUI, so `attnlab photo.png --help` is the GUI's help.
    if (const auto topic = help_request(args)) {
      std::string name = *topic;
      if (!name.empty() && !find_command(name) &&
          (std::filesystem::is_regular_file(name) || std::filesystem::is_directory(name)))
        name = "gui";
      std::fputs((name.empty() ? usage_text() : command_help(name)).c_str(), stdout);
      return kExitOk;
    }
    if (all.take_flag("--version")) {
      std::printf("%s\n", version_line().c_str());
      return kExitOk;
    }
    attnlab::runtime::tune_allocator();  // before LibTorch allocates (allocator_tuning.h)
    g.threads = all.take_positive_int("--threads", 0);
    g.device = attnlab::runtime::default_device_spec();  // ATTNLAB_DEVICE, else auto
    std::string device = all.take_option("--device");
    if (!device.empty()) g.device = device;
    g.dtype = attnlab::runtime::default_dtype_spec();  // ATTNLAB_DTYPE, else fp32
    std::string dtype = all.take_option("--dtype");
    if (!dtype.empty()) g.dtype = dtype;
    try {
      attnlab::runtime::parse_dtype(g.dtype);  // an unknown name is a usage error, said now
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    attnlab::runtime::configure_threads(g.threads);
    set_memory_budget_option(all.take_option("--max-memory"));

    std::string command = all.take_command();
    // `attnlab IMAGE... --model M`: a first word that names a file or folder (and not a
    // command) opens the GUI on it.
    const CommandSpec* spec = find_command(command);
    const bool file =
        !spec && !command.empty() &&
        (std::filesystem::is_regular_file(command) || std::filesystem::is_directory(command));
    const bool gui = command.empty() || command == "gui" || file;
    // The GUI leaves one core to the interface: with every core busy in LibTorch, the
    // frame loop would wait for the scheduler while a long job runs.
    if (gui && g.threads == 0 && std::getenv("ATTNLAB_THREADS") == nullptr) {
      const unsigned cores = std::thread::hardware_concurrency();
      if (cores > 1) attnlab::runtime::configure_threads(int(cores) - 1);
    }
    if (gui) return run_gui_command(all, file ? command : "", g);
    if (spec && spec->run) return spec->run(all, g);
    throw unknown_command(command);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "attnlab: %s\n(see attnlab --help)\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnlab: error: %s\n", e.what());
    return kExitFailure;
  }
}
