// The report's index.html.
#include "app/cli/report_index.h"

#include <algorithm>

#include "app/session/analysis_registry.h"
#include "viz/xml_escape.h"

namespace attnlab::cli {
namespace {

std::string esc(const std::string& s) {
  return viz::xml_escape(s);
}

const char* kStyle =
    R"(body{font-family:"DejaVu Sans",Helvetica,Arial,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
figure{margin:1.2em 0;padding:.6em;border:1px solid #eee;border-radius:4px}
figure img{max-width:100%;height:auto;display:block;margin:0 auto}
figcaption{font-size:.9em;margin-top:.5em;line-height:1.35}figcaption a{margin-right:.6em}
.settings{background:#f6f6f6;padding:.6em 1em;border-radius:4px;font-size:.92em}
.errors{background:#fff0f0;border:1px solid #e99;padding:.6em 1em;border-radius:4px}
pre{font-size:.8em;overflow:auto}code{font-size:.9em})";

// One figure: the PNG when there is one (fast in every browser), else the SVG, with its
// caption and a link per format. `folder`: where its files are, relative to the index;
// `id_prefix` keeps the page's ids unique (a dataset's figures share their stems).
std::string figure_html(const IndexEntry& e, const std::string& folder,
                        const std::string& id_prefix = "") {
  std::string shown;
  for (const char* pref : {"png", "svg"})
    if (shown.empty() && std::find(e.formats.begin(), e.formats.end(), pref) != e.formats.end())
      shown = pref;
  std::string h = "<figure id=\"" + esc(id_prefix + e.stem) + "\">\n";
  if (!shown.empty())
    h += "<img src=\"" + esc(folder + e.stem) + "." + shown + "\" alt=\"" + esc(e.caption) +
         "\" loading=\"lazy\">\n";
  h += "<figcaption>" + esc(e.caption) + "<br>";
  for (const auto& fmt : e.formats)
    h += "<a href=\"" + esc(folder + e.stem) + "." + esc(fmt) + "\">" + esc(fmt) + "</a>";
  return h + "<code>" + esc(e.stem) + "</code></figcaption>\n</figure>\n";
}

}  // namespace

std::string render_index_html(const IndexPage& page) {
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
                  esc(page.title) + "</title>\n<style>\n" + kStyle +
                  "\n</style>\n</head>\n<body>\n";
  h += "<h1>" + esc(page.title) + "</h1>\n<p class=\"settings\">" + esc(page.settings) + "</p>\n";
  if (!page.errors.empty()) {
    h += "<div class=\"errors\"><strong>Not everything could be made:</strong><ul>\n";
    for (const auto& e : page.errors) h += "<li>" + esc(e) + "</li>\n";
    h += "</ul></div>\n";
  }
  for (const auto& kind : session::figure_kinds()) {
    std::vector<const IndexEntry*> entries;
    for (const auto& f : page.figures)
      if (f.kind == kind.id) entries.push_back(&f);
    if (entries.empty()) continue;
    h += "<h2 id=\"" + esc(kind.id) + "\">" + esc(kind.title) + "</h2>\n";
    for (const auto* e : entries) h += figure_html(*e, "figures/");
  }
  if (!page.datasets.empty()) {
    h += "<h2 id=\"datasets\">Datasets at a glance</h2>\n<p>Folders of <code>attnlab "
         "embed</code>: each projected once, coloured by label, by prediction and by "
         "correct/wrong where the folder has them, and the images each head attends to most "
         "sharply and most broadly where it was embedded with <code>--heads</code>.</p>\n";
    for (const auto& d : page.datasets) {
      h +=
          "<h3 id=\"dataset-" + esc(d.name) + "\">" + esc(d.name) + "</h3>\n<p class=\"settings\">";
      h += "<code>" + esc(d.source) + "</code>";
      for (const auto& [what, value] : d.facts) h += "<br>" + esc(what) + ": " + esc(value);
      h += "</p>\n";
      if (!d.notes.empty()) {
        h += "<ul>\n";
        for (const auto& n : d.notes) h += "<li>" + esc(n) + "</li>\n";
        h += "</ul>\n";
      }
      for (const auto& e : d.figures)
        h += figure_html(e, "datasets/" + d.name + "/", "dataset-" + d.name + "-");
      if (!d.files.empty()) {
        h += "<p>";
        for (const auto& f : d.files) h += "<a href=\"" + esc(f) + "\">" + esc(f) + "</a> ";
        h += "</p>\n";
      }
    }
  }
  if (!page.stats_files.empty()) {
    h += "<h2 id=\"statistics\">Statistics</h2>\n<p>The tables and arrays of <code>attnlab "
         "analyze</code>, one settings sidecar per model.</p>\n<ul>\n";
    for (const auto& s : page.stats_files)
      h += "<li><a href=\"" + esc(s) + "\">" + esc(s) + "</a></li>\n";
    h += "</ul>\n";
  }
  h += "<h2 id=\"run\">Run</h2>\n<pre>" + esc(page.run.dump(2)) + "</pre>\n</body>\n</html>\n";
  return h;
}

}  // namespace attnlab::cli
