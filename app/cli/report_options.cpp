// Parsing of the report's figure options; see report_options.h.
#include "app/cli/report_options.h"

#include <algorithm>
#include <stdexcept>

#include "app/session/analysis_registry.h"
#include "app/session/figure_view_options.h"
#include "core/io/text.h"

namespace attnlab::cli {
namespace {

std::vector<viz::FigureFormat> parse_formats(const std::string& text) {
  std::vector<viz::FigureFormat> out;
  for (const std::string& item : text::split(text)) {
    const auto f = viz::figure_format_from_name(item);
    if (!f) throw UsageError("--formats: '" + item + "' is not svg, pdf or png");
    if (std::find(out.begin(), out.end(), *f) == out.end()) out.push_back(*f);
  }
  return out;
}

std::set<std::string> parse_figure_kinds(const std::string& text) {
  const std::vector<session::FigureKind> known = session::figure_kinds();
  std::set<std::string> out;
  for (const std::string& item : text::split(text)) {
    const bool found = std::any_of(known.begin(), known.end(),
                                   [&](const session::FigureKind& k) { return k.id == item; });
    if (!found) {
      std::vector<std::string> ids;
      for (const auto& k : known) ids.push_back(k.id);
      throw UsageError("--figures: unknown figure kind '" + item +
                       "' (known: " + text::join(ids, ", ") + ")");
    }
    out.insert(item);
  }
  return out;
}

}  // namespace

ReportFigureOptions take_report_figure_options(Args& args) {
  ReportFigureOptions o;
  const std::string formats = args.take_option("--formats");
  o.formats = parse_formats(formats.empty() ? "svg,pdf,png" : formats);
  o.dpi = args.take_real("--dpi", 200);
  if (!(o.dpi >= 30 && o.dpi <= 1200)) throw UsageError("--dpi must lie in [30, 1200]");
  // The view options: one parser for every front end (session/figure_view_options.h).
  session::FigureViewParser view;
  try {
    for (const auto& option : session::figure_view_options()) {
      const std::string value = args.take_option(option.flag);
      if (!value.empty()) view.set(option.flag, value, option.flag);
    }
    o.figure = view.finish();
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const std::string kinds = args.take_option("--figures");
  if (!kinds.empty()) o.kinds = parse_figure_kinds(kinds);
  return o;
}

}  // namespace attnlab::cli
