// `attnlab completion bash`: the bash completion script, generated from what this binary
// knows — the command table (also what completes after `help`) and each command's options
// (read from its --help lines), the model presets, the attention mechanisms, the analyses
// and the colormaps — so it cannot drift from the code. The .deb installs its output as
// /usr/share/bash-completion/completions/attnlab (scripts/package.sh).
#pragma once

#include <string>
#include <vector>

namespace attnlab::cli {

// Every "--option" named in a command's --help lines, sorted, once each; a command whose
// help says "options as analyze" also gets analyze's. Empty for an unknown command.
std::vector<std::string> command_options(const std::string& command);

// The whole script (bash); `attnlab completion bash` prints it.
std::string bash_completion_script();

}  // namespace attnlab::cli
