// `attnlab analyses`: the analysis registry — each analysis's name and summary, what a
// layer's trace must offer for it, the tables and arrays it writes, its report figures
// and its GUI tab.
#include <cstdio>

#include "app/cli/cli_common.h"
#include "app/session/analysis_registry.h"
#include "core/io/text.h"

namespace attnlab::cli {

int cmd_analyses(Args args, const GlobalOptions&) {
  if (!args.positionals().empty()) throw UsageError("analyses takes no arguments");
  for (const auto& a : session::analyses()) {
    std::printf("%s — %s\n", a.name.c_str(), a.summary.c_str());
    std::printf("  needs: %s%s\n",
                a.needs.empty() ? "any attention layer" : text::join(a.needs).c_str(),
                a.explain ? " (and the model: passes of its own)" : "");
    if (a.opt_in) std::printf("  not in \"all\": runs when named\n");
    std::vector<std::string> writes = a.tables;
    writes.insert(writes.end(), a.arrays.begin(), a.arrays.end());
    if (!writes.empty()) std::printf("  writes: %s\n", text::join(writes, "; ").c_str());
    std::vector<std::string> figures;
    for (const auto& k : a.figure_kinds) figures.push_back(k.title);
    if (!figures.empty()) std::printf("  figures: %s\n", text::join(figures, "; ").c_str());
    std::vector<std::string> options;
    for (const auto& o : a.options) options.push_back(o.usage());
    for (const auto& n : a.reads_options)
      if (const auto* o = session::find_analysis_option(n)) options.push_back(o->usage());
    if (!options.empty()) std::printf("  options: %s\n", text::join(options, " ").c_str());
    if (a.tab)
      std::printf("  GUI tab: %s%s\n", a.tab->title.c_str(),
                  a.series ? " (over a training series)" : "");
  }
  return kExitOk;
}

}  // namespace attnlab::cli
