// `attnlab help [COMMAND]`: the whole help, or one command's usage and options — the same
// text as `attnlab --help` and `attnlab COMMAND --help` (both from app/cli/commands.h), for
// a newcomer who types the word rather than the option.
#include <cstdio>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"

namespace attnlab::cli {

int cmd_help(Args args, const GlobalOptions&) {
  const auto words = args.positionals();
  if (words.size() > 1) throw UsageError("help takes one command (attnlab help COMMAND)");
  // An unknown command throws here: a usage error that names it and lists the commands.
  const std::string text = words.empty() ? usage_text() : command_help(words[0]);
  std::fputs(text.c_str(), stdout);
  return kExitOk;
}

}  // namespace attnlab::cli
