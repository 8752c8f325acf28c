// A toy analysis registered here, in this test binary only, reaches every consumer of the
// analysis registry with no other change: `attnlab analyze --analyses` (and its help),
// `attnlab report` (a figure and an index section), the GUI's tab table and its script
// command `tab`. The toy is what a contributor's new analysis would be: one compute step
// over the traces, a table, an array, a report figure and a tab.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "app/cli/completion.h"
#ifdef ATTNLAB_HAVE_GUI
#include "app/gui/script/gui_script.h"
#include "app/gui/views/option_controls.h"
#include "app/gui/views/tab_table.h"
#endif
#include "app/session/analysis_registry.h"
#include "app/session/analysis_session.h"
#include "core/analysis/attention_maps.h"
#include "core/analysis/export.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_path.h"
#include "tests/support/text_file.h"
#include "viz/figures/rollout.h"

namespace {

namespace fs = std::filesystem;
using namespace attnlab;

// The toy: per layer, the largest weight of the centre token's head-mean row; the last
// layer's head-mean map as an array keyed by image and layer (a key shape the toy
// declares itself); that map drawn over the picture as its figure.
session::AnalysisInfo toy_analysis() {
  session::AnalysisInfo info;
  info.name = "toy";
  info.summary = "a test's toy: the centre query's largest weight per layer";
  info.tables = {"toy_peaks"};
  info.arrays = {"toy__<image>__L<ll>"};
  info.key_shape = analysis::ResultKeyShape{true, true, false, false, false};
  info.add = [](session::ImageStep& s) {
    analysis::Table t;
    t.name = "toy_peaks";
    t.caption = "largest head-mean weight of the centre query per layer";
    t.columns = {"layer", "peak"};
    t.key_columns = 1;
    at::Tensor last;
    int64_t last_index = -1;
    for (const auto& l : s.layers) {
      const auto& lay = l.trace->layout;
      const int64_t centre = lay.num_prefix() + (lay.height / 2) * lay.width + lay.width / 2;
      const analysis::QueryMap m = analysis::query_map(*l.trace, 0, centre);
      last = m.grid.mean(0);
      last_index = l.index;
      t.add_row({l.index, s.settings.options.real("toy-scale") * last.max().item<double>()});
    }
    s.session.accumulate(t);
    s.session.emit(session::to_array(
        last, analysis::format_result_key({"toy", s.image, last_index, "", "", ""}), {"y", "x"}));
  };
  // Its one setting, declared here and nowhere else: the CLI's option and help, the sidecar
  // and the GUI's Settings section find it in the registry.
  session::AnalysisOption scale{"toy-scale", session::AnalysisOption::Kind::Real, "S", 1.0};
  scale.min = 0;
  scale.min_open = true;
  scale.max = 10;
  scale.help = "multiplies the toy's peaks";
  info.options = {scale};
  info.figure_kinds = {{"toy", "The toy's centre maps"}};
  info.report_figures = [](const session::ReportInputs& in, std::vector<session::FigureJob>& jobs) {
    for (const auto& m : in.models)
      for (const auto& im : m.images)
        for (const auto& [key, a] : m.arrays_of("toy", im.tag)) {
          const viz::RgbaImage* picture = &im.picture;
          const analysis::Array* map = a;
          jobs.push_back(
              {"toy", "toy__" + m.name + "__" + im.tag + "__L" + std::to_string(key.layer),
               [=, &m] { return viz::rollout_figure(*picture, *map, {}, m.name, "toy", {}); }});
        }
  };
  info.tab = session::AnalysisTab{"toy",
                                  "Toy",
                                  false,
                                  false,
                                  [](const session::TabInputs& in) {
                                    const auto& m = in.models.front();
                                    return viz::rollout_figure(m.images.front().picture,
                                                               *m.arrays_of("toy").front().second,
                                                               {}, m.name, "toy", in.style);
                                  },
                                  ""};
  return info;
}

// Registered once, before any test reads the registry.
const bool kRegistered = [] {
  session::register_analysis(toy_analysis());
  return true;
}();

std::string checkpoint() {
  return attnlab::testing::parity_dir() + "/deit_mini.safetensors";
}
std::string demo_image() {
  return std::string(ATTNLAB_SOURCE_DIR) + "/assets/demo.png";
}

TEST(ToyAnalysis, ItsDeclaredKeyShapeParses) {
  ASSERT_TRUE(kRegistered);
  const auto key = analysis::parse_result_key("toy__some__image__L07");
  ASSERT_TRUE(key.has_value());
  EXPECT_EQ(key->image, "some__image");
  EXPECT_EQ(key->layer, 7);
  EXPECT_THROW(analysis::register_result_key_shape("maps", {}), std::invalid_argument);
}

TEST(ToyAnalysis, IsInTheRegistryAndTheAnalyzeHelp) {
  ASSERT_TRUE(kRegistered);
  ASSERT_NE(session::find_analysis("toy"), nullptr);
  EXPECT_EQ(session::parse_analyses("all").count("toy"), 1u);
  // The help lists the registry in order: toy comes right after the last shipped analysis.
  const auto& all = session::analyses();
  ASSERT_GE(all.size(), 2u);
  ASSERT_EQ(all.back().name, "toy");
  const std::string last_shipped = all[all.size() - 2].name;
  EXPECT_NE(cli::usage_text().find(last_shipped + ",toy"), std::string::npos) << cli::usage_text();
  EXPECT_THROW(session::register_analysis(toy_analysis()), std::invalid_argument);  // taken
}

TEST(ToyAnalysis, AnalyzeWritesItsTableAndArray) {
  attnlab::testing::TempDir out("analyze");
  const int code = cli::cmd_analyze(cli::Args({"--model", checkpoint(), "--images", demo_image(),
                                               "--out", out.path.string(), "--analyses", "toy"}),
                                    {});
  ASSERT_EQ(code, cli::kExitOk);
  EXPECT_TRUE(fs::exists(out.path / "deit_mini__toy_peaks.csv"));
  EXPECT_TRUE(fs::exists(out.path / "toy" / "deit_mini__toy__demo__L01.npy"));
  const std::string csv =
      attnlab::testing::read_text((out.path / "deit_mini__toy_peaks.csv").string());
  EXPECT_NE(csv.find("layer,peak_mean"), std::string::npos) << csv;
}

TEST(ToyAnalysis, ItsOptionReachesTheHelpCompletionManPageAndSidecar) {
  ASSERT_TRUE(kRegistered);
  EXPECT_NE(cli::usage_text().find("[--toy-scale S]"), std::string::npos);
  const std::string help = session::analysis_options_help();
  EXPECT_NE(help.find("toy: multiplies the toy's peaks (in (0, 10]; default 1)"), std::string::npos)
      << help;
  const auto opts = cli::command_options("analyze");
  EXPECT_NE(std::find(opts.begin(), opts.end(), "--toy-scale"), opts.end());
  const auto report_opts = cli::command_options("report");  // "analysis options as analyze"
  EXPECT_NE(std::find(report_opts.begin(), report_opts.end(), "--toy-scale"), report_opts.end());

  attnlab::testing::TempDir out("toy_scale");
  const auto run = [&](std::vector<std::string> extra, const std::string& folder) {
    std::vector<std::string> args = {"--model",    checkpoint(), "--images",
                                     demo_image(), "--out",      (out.path / folder).string(),
                                     "--analyses", "toy"};
    args.insert(args.end(), extra.begin(), extra.end());
    return cli::cmd_analyze(cli::Args(args), {});
  };
  ASSERT_EQ(run({}, "one"), cli::kExitOk);
  ASSERT_EQ(run({"--toy-scale", "2"}, "two"), cli::kExitOk);
  const auto one =
      analysis::read_table_csv((out.path / "one" / "deit_mini__toy_peaks.csv").string());
  const auto two =
      analysis::read_table_csv((out.path / "two" / "deit_mini__toy_peaks.csv").string());
  ASSERT_EQ(one.rows.size(), two.rows.size());
  const size_t col = one.column("peak_mean");
  for (size_t i = 0; i < one.rows.size(); ++i)
    // Doubling is exact in binary floating point; the CSV prints 9 significant digits, a
    // relative rounding of at most 5e-9 per printed value: 2x printed vs 2 * (x printed)
    // differ by at most 2 * 5e-9 * 2x relative to x, so 2e-8 * x bounds it.
    EXPECT_NEAR(two.rows[i].at(col).r, 2 * one.rows[i].at(col).r, 2e-8 * one.rows[i].at(col).r);
  const std::string side =
      attnlab::testing::read_text((out.path / "two" / "deit_mini__settings.json").string());
  EXPECT_EQ(nlohmann::json::parse(side)["settings"]["options"]["toy-scale"], 2) << side;
  // Out of its declared range: refused by name, before any image is read.
  EXPECT_THROW(run({"--toy-scale", "0"}, "zero"), cli::UsageError);
}

TEST(ToyAnalysis, TheReportDrawsItsFigureInItsOwnSection) {
  attnlab::testing::TempDir out("report");
  const int code =
      cli::cmd_report(cli::Args({"--models", checkpoint(), "--images", demo_image(), "--out",
                                 out.path.string(), "--analyses", "maps,toy", "--formats", "png"}),
                      {});
  ASSERT_EQ(code, cli::kExitOk);
  EXPECT_TRUE(fs::exists(out.path / "figures" / "toy__deit_mini__demo__L1.png"));
  const std::string index = attnlab::testing::read_text((out.path / "index.html").string());
  EXPECT_NE(index.find("The toy's centre maps"), std::string::npos);
  EXPECT_NE(index.find("toy__deit_mini__demo__L1"), std::string::npos);
}

#ifdef ATTNLAB_HAVE_GUI
TEST(ToyAnalysis, TheGuiListsItsTabAndScriptsCanSelectIt) {
  const std::vector<std::string> ids = gui::tab_ids();
  ASSERT_NE(std::find(ids.begin(), ids.end(), "toy"), ids.end());
  // Tabs come by group, Maps first. The toy names no group (AnalysisTab::group) and is no
  // analysis the GUI's table knows, so it is in the fallback group ("More"), the last one.
  EXPECT_EQ(ids.front(), "maps");
  EXPECT_EQ(ids.back(), "toy");
  const auto tab = gui::find_tab("toy");
  ASSERT_TRUE(tab.has_value());
  EXPECT_EQ(tab->group, gui::kFallbackGroup);
  EXPECT_EQ(gui::tab_rows().back().group.title, "More");
  EXPECT_EQ(tab->title, "Toy");
  EXPECT_EQ(tab->help, session::find_analysis("toy")->summary);
  EXPECT_EQ(tab->kind, gui::TabKind::Figure);
  const auto commands = gui::parse_script("tab toy\n", "t.script");
  ASSERT_EQ(commands.size(), 1u);
  EXPECT_EQ(commands[0].args, std::vector<std::string>{"toy"});
  // Its setting is in the GUI's Settings section of its tab.
  const auto options = gui::tab_options("toy");
  ASSERT_EQ(options.size(), 1u);
  EXPECT_EQ(options[0]->name, "toy-scale");
}
#endif

TEST(ToyAnalysis, ItsTabFigureDrawsFromOneImagesResults) {
  // What the GUI's tab job hands the tab: one image's results of one model.
  session::ModelResults r;
  r.name = "toy-model";
  r.images.push_back({"img", viz::RgbaImage{}});
  r.images.front().picture.width = r.images.front().picture.height = 8;
  r.images.front().picture.rgba.assign(8 * 8 * 4, 128);
  analysis::Array map;
  map.name = analysis::format_result_key({"toy", "img", 3, "", "", ""});
  map.shape = {2, 2};
  map.axes = {"y", "x"};
  map.data = {0.1f, 0.2f, 0.3f, 0.4f};
  r.arrays.push_back(map);
  session::TabInputs in;
  in.models.push_back(r);
  const viz::CaptionedFigure fig = session::find_analysis("toy")->tab->figure(in);
  EXPECT_NE(fig.caption.find("toy-model"), std::string::npos) << fig.caption;
}

}  // namespace
