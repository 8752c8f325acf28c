// `attnlab mechanisms`: the registered attention mechanisms, what each is, whether it is
// linear in the number of tokens, whether it needs a pure token grid, and its options
// with defaults and bounds — the names `--attention` and the config files accept.
#include <cstdio>

#include "app/cli/cli_common.h"
#include "core/attention/registry.h"
#include "core/io/text.h"

namespace attnlab::cli {
namespace {

const char* kind_name(attention::OptionSpec::Kind k) {
  switch (k) {
    case attention::OptionSpec::Kind::Flag:
      return "flag";
    case attention::OptionSpec::Kind::Integer:
      return "integer";
    case attention::OptionSpec::Kind::Choice:
      return "choice";
    case attention::OptionSpec::Kind::Real:
      break;
  }
  return "real";
}

}  // namespace

int cmd_mechanisms(Args args, const GlobalOptions&) {
  if (!args.positionals().empty()) throw UsageError("mechanisms takes no arguments");
  for (const auto& m : attention::mechanisms()) {
    std::printf("%s — %s\n", m.name.c_str(), m.summary.c_str());
    std::printf("  cost: %s; tokens: %s\n", m.linear_in_tokens ? "linear in N" : "quadratic in N",
                m.needs_grid ? "pure H×W grid (no prefix tokens)" : "grid + prefix tokens");
    if (!m.capabilities.empty()) std::printf("  offers: %s\n", text::join(m.capabilities).c_str());
    for (const auto& o : m.options) {
      const std::string range =
          o.kind == attention::OptionSpec::Kind::Choice
              ? text::join(o.choices, " | ")
              : "[" + text::format_g(o.min) + ", " + text::format_g(o.max) + "]";
      std::printf("  %-12s %-7s default %-6s %s  %s\n", o.name.c_str(), kind_name(o.kind),
                  attention::option_text(o, o.default_value).c_str(), range.c_str(),
                  o.help.c_str());
    }
  }
  return kExitOk;
}

}  // namespace attnlab::cli
