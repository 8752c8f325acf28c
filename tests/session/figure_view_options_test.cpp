// The one figure-view parser (app/session/figure_view_options.h) that the CLI, the Python
// module and the GUI's script share: an option by its name or its flag sets the same field,
// a refusal names the option as the caller spelled it, the N/T layer form works by name
// too, and how options combine is checked once.
#include <gtest/gtest.h>

#include <string>

#include "app/session/figure_view_options.h"

namespace attnlab::session {
namespace {

// The message of the parser's refusal of name=value ("" when it is accepted).
std::string refusal(const std::string& name, const std::string& value, const std::string& as = {}) {
  try {
    FigureViewParser p;
    p.set(name, value, as);
    p.finish();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(FigureViewOptions, NameAndFlagSetTheSameField) {
  for (const auto& [name, flag] : {std::pair<const char*, const char*>{"fusion", "--head-fusion"},
                                   {"compare_scale", "--compare-scale"}}) {
    const FigureViewOption& o = figure_view_option(name);
    EXPECT_STREQ(o.flag, flag);
    EXPECT_EQ(&figure_view_option(flag), &o);
  }
  FigureViewParser a, b;
  a.set("fusion", "max");
  b.set("--head-fusion", "max");
  EXPECT_EQ(a.finish().view.fusion, 1);
  EXPECT_EQ(b.finish().view.fusion, 1);
}

TEST(FigureViewOptions, EveryOptionSetsItsField) {
  FigureViewParser p;
  p.set("layer", "3/12");
  p.set("head", "2");
  p.set("map", "rollout");
  p.set("colormap", "magma");
  p.set("upsample", "nearest");
  p.set("alpha", "0.25");
  p.set("norm", "divmax");
  p.set("compare_scale", "shared");
  p.set("compare_difference", "1,0");
  const FigureOptions o = p.finish();
  EXPECT_EQ(o.view.layer, 3);
  EXPECT_EQ(o.view.layer_of, 12);
  EXPECT_EQ(o.view.head, 2);
  EXPECT_TRUE(o.view.rollout);
  EXPECT_EQ(o.style.overlay.cmap, viz::Colormap::Magma);
  EXPECT_EQ(o.style.overlay.upsample, viz::Upsample::Nearest);
  EXPECT_DOUBLE_EQ(o.style.overlay.alpha, 0.25);
  EXPECT_EQ(o.style.norm, viz::MapNormalisation::DivideByMax);
  EXPECT_EQ(o.compare_scale, viz::CompareScale::Shared);
  ASSERT_TRUE(o.compare_difference.has_value());
  EXPECT_EQ(o.compare_difference->first, 1);
}

TEST(FigureViewOptions, RefusalsNameTheOptionAsSpelled) {
  EXPECT_EQ(refusal("norm", "zscore", "--norm").rfind("--norm: minmax", 0), 0u);
  EXPECT_EQ(refusal("norm", "zscore").rfind("norm: minmax", 0), 0u);
  EXPECT_NE(refusal("layer", "4/4").find("a 4-layer model has no layer 4"), std::string::npos);
  EXPECT_NE(refusal("alpha", "1.5").find("alpha must lie in [0, 1]"), std::string::npos);
  EXPECT_NE(refusal("alpha", "0.5x").find("alpha"), std::string::npos);
  EXPECT_NE(refusal("colour", "red").find("unknown keyword 'colour'"), std::string::npos);
  EXPECT_EQ(refusal("alpha", "1"), "");
  FigureViewParser both;
  both.set("head", "1", "--head");
  both.set("fusion", "min", "--head-fusion");
  EXPECT_THROW(both.finish(), std::invalid_argument);
}

TEST(FigureViewOptions, ChoicesComeFromTheTable) {
  EXPECT_EQ(figure_view_choices("norm"), (std::vector<std::string>{"minmax", "divmax"}));
  EXPECT_EQ(figure_view_choices("fusion"), (std::vector<std::string>{"mean", "max", "min"}));
  for (const std::string& n : figure_view_choices("norm"))
    EXPECT_EQ(normalisation_option_name(*normalisation_from_name(n)), n);
}

}  // namespace
}  // namespace attnlab::session
