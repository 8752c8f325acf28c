// The figure options of `attnlab report` (app/cli/report_options.h): the view options the
// GUI's copied command uses (--layer, --head, --head-fusion, --map, --norm, --figures) are
// parsed into session::FigureOptions, and every bad value is a usage error naming the
// option; session::MapView's layer mapping and titles, which the GUI shares.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "app/cli/report_options.h"

namespace attnlab {
namespace {

cli::ReportFigureOptions parse(std::vector<std::string> words) {
  cli::Args args(std::move(words));
  cli::ReportFigureOptions o = cli::take_report_figure_options(args);
  EXPECT_TRUE(args.remaining().empty());
  return o;
}

// The usage error's message for these options ("" when they parse).
std::string usage_error(std::vector<std::string> words) {
  try {
    parse(std::move(words));
  } catch (const cli::UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(ReportOptions, DefaultsAreTheReportsOwn) {
  const cli::ReportFigureOptions o = parse({});
  EXPECT_EQ(o.formats.size(), 3u);
  EXPECT_EQ(o.dpi, 200);
  EXPECT_TRUE(o.kinds.empty());
  EXPECT_EQ(o.figure.style.norm, viz::MapNormalisation::MinMax);
  EXPECT_EQ(o.figure.view.layer, -1);
  EXPECT_EQ(o.figure.view.head, -1);
  EXPECT_EQ(o.figure.view.fusion, 0);
  EXPECT_FALSE(o.figure.view.rollout);
}

TEST(ReportOptions, ViewOptionsParse) {
  const cli::ReportFigureOptions o =
      parse({"--layer", "2/4", "--head-fusion", "max", "--norm", "divmax", "--map", "rollout",
             "--figures", "compare,head_maps", "--alpha", "0.35", "--colormap", "magma"});
  EXPECT_EQ(o.figure.view.layer, 2);
  EXPECT_EQ(o.figure.view.layer_of, 4);
  EXPECT_EQ(o.figure.view.fusion, 1);
  EXPECT_TRUE(o.figure.view.rollout);
  EXPECT_EQ(o.figure.style.norm, viz::MapNormalisation::DivideByMax);
  EXPECT_EQ(o.kinds, (std::set<std::string>{"compare", "head_maps"}));
  EXPECT_DOUBLE_EQ(o.figure.style.overlay.alpha, 0.35);
  EXPECT_EQ(parse({"--head", "3"}).figure.view.head, 3);
  EXPECT_EQ(parse({"--layer", "5"}).figure.view.layer_of, 0);
  EXPECT_EQ(parse({"--layer", "last"}).figure.view.layer, -1);
}

TEST(ReportOptions, CompareScaleAndDifference) {
  const cli::ReportFigureOptions d = parse({});
  EXPECT_EQ(d.figure.compare_scale, viz::CompareScale::PerPanel);  // every map readable
  EXPECT_FALSE(d.figure.compare_difference.has_value());
  const cli::ReportFigureOptions o =
      parse({"--compare-scale", "shared", "--compare-difference", "2,0"});
  EXPECT_EQ(o.figure.compare_scale, viz::CompareScale::Shared);
  ASSERT_TRUE(o.figure.compare_difference.has_value());
  EXPECT_EQ(o.figure.compare_difference->first, 2);
  EXPECT_EQ(o.figure.compare_difference->second, 0);
  EXPECT_NE(usage_error({"--compare-scale", "global"}).find("--compare-scale: per-panel"),
            std::string::npos);
  for (const char* bad : {"1", "1,1", "a,b", "-1,2", "1,"})
    EXPECT_NE(usage_error({"--compare-difference", bad}).find("--compare-difference"),
              std::string::npos)
        << bad;
}

TEST(ReportOptions, BadValuesAreUsageErrors) {
  EXPECT_NE(usage_error({"--layer", "x"}).find("--layer wants last, N or N/T"), std::string::npos);
  EXPECT_NE(usage_error({"--layer", "-1"}).find("--layer"), std::string::npos);
  EXPECT_NE(usage_error({"--layer", "3/0"}).find("--layer"), std::string::npos);
  EXPECT_NE(usage_error({"--layer", "4/4"}).find("a 4-layer model has no layer 4"),
            std::string::npos);
  EXPECT_NE(usage_error({"--head", "one"}).find("--head wants a head index"), std::string::npos);
  EXPECT_NE(usage_error({"--head-fusion", "avg"}).find("--head-fusion: mean, max or min"),
            std::string::npos);
  EXPECT_NE(usage_error({"--head", "1", "--head-fusion", "max"}).find("not both"),
            std::string::npos);
  EXPECT_NE(usage_error({"--norm", "zscore"}).find("--norm: minmax"), std::string::npos);
  EXPECT_NE(usage_error({"--map", "gradcam"}).find("--map: query"), std::string::npos);
  EXPECT_NE(usage_error({"--figures", "maps"}).find("unknown figure kind 'maps'"),
            std::string::npos);
  EXPECT_NE(usage_error({"--figures", "compare,"}).find("unknown figure kind ''"),
            std::string::npos);
  EXPECT_NE(usage_error({"--alpha", "2"}).find("--alpha"), std::string::npos);
  EXPECT_NE(usage_error({"--formats", "jpg"}).find("--formats"), std::string::npos);
}

TEST(MapView, LayerByIndexOrRelativeDepth) {
  session::MapView v;
  EXPECT_EQ(v.layer_in(4), 3);  // the last
  v.layer = 2;
  EXPECT_EQ(v.layer_in(4), 2);
  EXPECT_EQ(v.layer_in(2), 1);  // clamped to the last
  v.layer_of = 4;               // layer 2 of a 4-layer model
  EXPECT_EQ(v.layer_in(4), 2);
  EXPECT_EQ(v.layer_in(2), 1);   // 2/3 of the way: round(0.67)
  EXPECT_EQ(v.layer_in(12), 7);  // round(2/3 * 11) = round(7.33)
  v.layer = 0;
  EXPECT_EQ(v.layer_in(12), 0);
  v.layer_of = 1;  // a one-layer model's layer is the last of every model
  EXPECT_EQ(v.layer_in(6), 5);
  EXPECT_EQ(v.layer_in(0), -1);
}

TEST(MapView, TitleStatesTheMap) {
  session::MapView v;
  EXPECT_EQ(v.title("query (7, 7)"), "Head-mean attention of query (7, 7), last layer");
  v.layer = 2;
  v.fusion = 2;
  EXPECT_EQ(v.title("the cls token"), "Head-min attention of the cls token, layer 2");
  v.head = 1;
  EXPECT_EQ(v.title("query (3, 9)"), "Head 1 attention of query (3, 9), layer 2");
  v.rollout = true;
  EXPECT_EQ(v.title("the cls token"), "Attention rollout of the cls token");
}

}  // namespace
}  // namespace attnlab
