// Shared pieces of the `attnlab` subcommands: a small argument cursor, global options
// (--threads, --device) and the uniform way errors reach the user (one line on stderr,
// a non-zero exit code, never a stack trace).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "core/runtime/precision.h"

namespace attnlab::cli {

struct GlobalOptions {
  int threads = 0;  // 0 = ATTNLAB_THREADS or all cores
  std::string device = "auto";
  std::string dtype = "fp32";  // --dtype, else ATTNLAB_DTYPE, else fp32
};

// Where the command's models run: --device and --dtype (runtime::select_target), a
// precision this LibTorch cannot run there refused with std::invalid_argument.
runtime::ComputeTarget compute_target(const GlobalOptions& g);

// Arguments after the subcommand name. Options are `--name value` or `--flag`.
class Args {
 public:
  explicit Args(std::vector<std::string> args) : args_(std::move(args)) {}
  // Removes and returns the value of --name (empty if absent). Throws UsageError when
  // the option is present without a value.
  std::string take_option(const std::string& name);
  bool take_flag(const std::string& name);
  bool has_flag(const std::string& name) const;
  // Removes --name and, when the next word is not an option, that word, which it returns
  // ("" when --name is absent or has no value).
  std::string take_optional_value(const std::string& name);
  // Every argument not taken yet (for recording the command line).
  const std::vector<std::string>& remaining() const { return args_; }
  // Removes --name N and returns N, or `fallback` when absent. Throws UsageError unless
  // the whole value is a positive integer.
  int take_positive_int(const std::string& name, int fallback);
  // Removes --name and every value after it up to the next --option; may be repeated
  // (values accumulate). Throws UsageError when --name is present without a value.
  std::vector<std::string> take_list(const std::string& name);
  // Removes --name X and returns X as a real, or `fallback` when absent.
  double take_real(const std::string& name, double fallback);
  // What remains; throws UsageError if an unknown --option is left.
  std::vector<std::string> positionals() const;
  // Removes and returns the first word if it is not an option ("" otherwise).
  std::string take_command();

 private:
  std::vector<std::string> args_;
};

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Exit codes: 0 ok, 1 the input was bad or an operation failed, 2 usage error.
constexpr int kExitOk = 0, kExitFailure = 1, kExitUsage = 2;

int cmd_inspect(Args args, const GlobalOptions& g);
int cmd_info(Args args, const GlobalOptions& g);
int cmd_mechanisms(Args args, const GlobalOptions& g);
int cmd_analyses(Args args, const GlobalOptions& g);
int cmd_infer(Args args, const GlobalOptions& g);
int cmd_classify(Args args, const GlobalOptions& g);
int cmd_presets(Args args, const GlobalOptions& g);
int cmd_analyze(Args args, const GlobalOptions& g);
int cmd_merge(Args args, const GlobalOptions& g);
int cmd_analyze_series(Args args, const GlobalOptions& g);
int cmd_train(Args args, const GlobalOptions& g);
int cmd_eval(Args args, const GlobalOptions& g);
int cmd_head_importance(Args args, const GlobalOptions& g);
int cmd_faithfulness(Args args, const GlobalOptions& g);
int cmd_probe(Args args, const GlobalOptions& g);
int cmd_embed(Args args, const GlobalOptions& g);
int cmd_project(Args args, const GlobalOptions& g);
int cmd_retrieve(Args args, const GlobalOptions& g);
int cmd_analyze_sizes(Args args, const GlobalOptions& g);
int cmd_export_samples(Args args, const GlobalOptions& g);
int cmd_zoo(Args args, const GlobalOptions& g);
int cmd_report(Args args, const GlobalOptions& g);
int cmd_complexity(Args args, const GlobalOptions& g);
int cmd_bench_attention(Args args, const GlobalOptions& g);
int cmd_completion(Args args, const GlobalOptions& g);
int cmd_manpage(Args args, const GlobalOptions& g);
int cmd_help(Args args, const GlobalOptions& g);

}  // namespace attnlab::cli
