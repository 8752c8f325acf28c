// The `attnlab gui --script` parser: every command with good and bad arguments, quoting,
// comments, and errors that point at the right file and line.
#include "app/gui/script/gui_script.h"
#include "app/gui/workspace/sweep_sizes.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/support/temp_path.h"

namespace attnlab::gui {
namespace {

namespace fs = std::filesystem;
using Args = std::vector<std::string>;

// Parses one line that must hold exactly one command.
ScriptCommand parse_one(const std::string& line) {
  const std::vector<ScriptCommand> commands = parse_script(line, "t.script");
  if (commands.size() != 1) throw std::logic_error("expected one command from: " + line);
  return commands[0];
}

// The message of the std::invalid_argument that parsing `text` throws ("" when none).
std::string parse_error(const std::string& text, const std::string& file = "t.script") {
  try {
    parse_script(text, file);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(GuiScript, EveryCommandParsesWithGoodArguments) {
  const std::vector<std::pair<std::string, Args>> cases = {
      {"open-image img/cat.png", {"img/cat.png"}},
      {"open-model zoo/hilo.safetensors", {"zoo/hilo.safetensors"}},
      {"select-model 2", {"2"}},
      {"select-model hilo-tiny", {"hilo-tiny"}},
      {"select-image 0", {"0"}},
      {"select-image cat.png", {"cat.png"}},
      {"close-model 1", {"1"}},
      {"close-model hilo-tiny", {"hilo-tiny"}},
      {"close-image cat.png", {"cat.png"}},
      {"layer 11", {"11"}},
      {"head 0", {"0"}},
      {"heads-grid on", {"on"}},
      {"heads-grid off", {"off"}},
      {"fusion mean", {"mean"}},
      {"fusion max", {"max"}},
      {"fusion min", {"min"}},
      {"map query", {"query"}},
      {"map cls", {"cls"}},
      {"map rollout", {"rollout"}},
      {"click-token 3 13", {"3", "13"}},
      {"click-prefix cls", {"cls"}},
      {"tab maps", {"maps"}},
      {"map gradcam", {"gradcam"}},
      {"map gradrollout", {"gradrollout"}},
      {"map similarity", {"similarity"}},
      {"facet keys", {"keys"}},
      {"class top1", {"top1"}},
      {"class 281", {"281"}},
      {"gradcam-target blocks.3", {"blocks.3"}},
      {"tab spectra", {"spectra"}},
      {"tab rank", {"rank"}},
      {"tab anchors", {"anchors"}},
      {"tab mask", {"mask"}},
      {"tab locality", {"locality"}},
      {"tab predictions", {"predictions"}},
      {"tab cost", {"cost"}},
      {"layout single", {"single"}},
      {"layout compare", {"compare"}},
      {"shared-scale on", {"on"}},
      {"difference off", {"off"}},
      {"difference-of 2 0", {"2", "0"}},
      {"rollout-options max 0.3 0.2 off", {"max", "0.3", "0.2", "off"}},
      {"mouse-away", {}},
      {"mouse 640 400", {"640", "400"}},
      {"screenshot-figure out/view.png", {"out/view.png"}},
      {"export-screen-size out/view_export.png", {"out/view_export.png"}},
      {"colormap magma", {"magma"}},
      {"alpha 0.35", {"0.35"}},
      {"alpha 0", {"0"}},
      {"alpha 1", {"1"}},
      {"upsample nearest", {"nearest"}},
      {"upsample bilinear", {"bilinear"}},
      {"norm minmax", {"minmax"}},
      {"norm divmax", {"divmax"}},
      {"copy-command out/view.cmd", {"out/view.cmd"}},
      {"export-panel out/panel.png", {"out/panel.png"}},
      {"export-panel out/panel.svg", {"out/panel.svg"}},
      {"export-panel out/panel.PDF", {"out/panel.PDF"}},
      {"export-stats out/stats", {"out/stats"}},
      {"load-series", {}},
      {"sweep-sizes 28,42,56", {"28,42,56"}},
      {"cost macs", {"macs"}},
      {"cost latency", {"latency"}},
      {"cost memory", {"memory"}},
      {"bench", {}},
      {"load-as deit_tiny_patch16_224", {"deit_tiny_patch16_224"}},
      {"checkpoint 3", {"3"}},
      {"img-size deit_mini 160 192", {"deit_mini", "160", "192"}},
      {"img-size 0 384 384", {"0", "384", "384"}},
      {"merge tome_vit_mini 6", {"tome_vit_mini", "6"}},
      {"merge 0 none", {"0", "none"}},
      {"class-names deit_mini labels/names.json", {"deit_mini", "labels/names.json"}},
      {"class-names 1 none", {"1", "none"}},
      {"prompts clip \"a photo of a cat|a dog\"", {"clip", "a photo of a cat|a dog"}},
      {"prompts 0 none", {"0", "none"}},
      {"show-input on", {"on"}},
      {"show-input off", {"off"}},
      {"model-info out/model.json", {"out/model.json"}},
      {"wait-idle 2.5", {"2.5"}},
      {"wait-idle", {"60"}},  // the default is filled in
      {"wait-job analyse 20", {"analyse", "20"}},
      {"wait-job analyse", {"analyse", "60"}},
      {"cancel", {}},
      {"device cuda:0", {"cuda:0"}},
      {"dtype bf16", {"bf16"}},
      {"reanalyse", {}},
      {"frames 30", {"30"}},
      {"screenshot shot.png", {"shot.png"}},
      {"expect-error", {}},
      {"expect-no-error", {}},
      {"expect-busy", {}},
      {"open-dialog model", {"model"}},
      {"expect-answered", {}},
      {"sidebar-end", {}},
      {"edit on", {"on"}},
      {"edit-tool paste", {"paste"}},
      {"brush 3", {"3"}},
      {"edit-color 255,0,0", {"255,0,0"}},
      {"paste-from cat.png", {"cat.png"}},
      {"paint 3 4", {"3", "4"}},
      {"paint-drag 3 5", {"3", "5"}},
      {"undo", {}},
      {"clear-edits", {}},
      {"edit-difference on", {"on"}},
      {"expect-edits occlude:3,4,2;blur:0,0,1", {"occlude:3,4,2;blur:0,0,1"}},
      {"expect-edits none", {"none"}},
      {"save-workspace out/w.attnlab", {"out/w.attnlab"}},
      {"open-workspace out/w.attnlab", {"out/w.attnlab"}},
      {"projector out/emb", {"out/emb"}},
      {"projector-compare out/emb2", {"out/emb2"}},
      {"projector-method tsne", {"tsne"}},
      {"projector-options 5 10 7", {"5", "10", "7"}},
      {"projector-color correct", {"correct", "0", "0"}},  // the head's defaults filled in
      {"projector-color head-entropy 1 0", {"head-entropy", "1", "0"}},
      {"projector-hover 3", {"3"}},
      {"projector-hover none", {"none"}},
      {"projector-click 4", {"4"}},
      {"projector-select -1.5 -2 3e2 0", {"-1.5", "-2", "3e2", "0"}},
      {"projector-group-maps", {}},
      {"projector-retrieve 3 4", {"3", "4", "16"}},  // k's default filled in
      {"projector-retrieve 3 4 8", {"3", "4", "8"}},
      {"projector-open-match 2", {"2"}},
      {"projector-info out/projector.json", {"out/projector.json"}},
      {"quit", {}},
  };
  std::vector<std::string> seen;
  for (const auto& [line, args] : cases) {
    SCOPED_TRACE(line);
    const ScriptCommand c = parse_one(line);
    EXPECT_EQ(c.name, line.substr(0, line.find(' ')));
    EXPECT_EQ(c.args, args);
    EXPECT_EQ(c.line, 1);
    seen.push_back(c.name);
  }
  // The table above covers every command the parser knows.
  for (const std::string& name : script_command_names()) {
    EXPECT_NE(std::find(seen.begin(), seen.end(), name), seen.end()) << name << " untested";
  }
  EXPECT_EQ(script_command_names().size(), 85u);
}

TEST(GuiScript, BadArgumentsAreRefusedWithTheReason) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"open-image", "open-image takes 1 argument, got 0 (usage: open-image PATH)"},
      {"open-image a.png b.png", "takes 1 argument, got 2"},
      {"open-model \"\"", "PATH must not be empty"},
      {"select-model \"\"", "INDEX|NAME must not be empty"},
      {"layer x", "N must be an integer from 0"},
      {"layer -1", "N must be an integer from 0"},
      {"layer 1.5", "N must be an integer"},
      {"layer 99999999999", "N must be an integer"},
      {"head", "head takes 1 argument, got 0"},
      {"heads-grid yes", "expected on or off (got \"yes\")"},
      {"fusion avg", "expected mean or max or min"},
      {"map attention", "expected query or cls or rollout"},
      {"click-token 3", "click-token takes 2 arguments, got 1 (usage: click-token ROW COL)"},
      {"click-token 3 x", "COL must be an integer"},
      {"click-token -3 1", "ROW must be an integer"},
      {"click-prefix", "takes 1 argument"},
      {"tab graphs",
       "expected maps or spectra or rank or channel_maps or map_rank or anchors or locality or"},
      {"tab", "takes 1 argument"},
      {"layout side-by-side", "expected single or compare"},
      {"shared-scale 1", "expected on or off"},
      {"difference ON", "expected on or off"},  // values are case-sensitive
      {"colormap", "takes 1 argument"},
      {"alpha 1.5", "X must be a number from 0 to 1 (got \"1.5\")"},
      {"alpha -0.1", "X must be a number from 0 to 1"},
      {"alpha half", "X must be a number from 0 to 1"},
      {"alpha nan", "X must be a number from 0 to 1"},
      {"alpha 0.5x", "X must be a number from 0 to 1"},
      {"upsample cubic", "expected nearest or bilinear"},
      {"norm zscore", "expected minmax or divmax"},
      {"copy-command", "copy-command takes 1 argument, got 0"},
      {"export-panel out/panel.jpg", "PATH must end in .png, .svg, .pdf (got \"out/panel.jpg\")"},
      {"export-panel out.d/panel", "PATH must end in .png, .svg, .pdf"},
      {"export-stats", "takes 1 argument"},
      {"wait-idle soon", "SECONDS must be a number of seconds"},
      {"wait-idle -1", "SECONDS must be a number of seconds"},
      {"wait-idle inf", "SECONDS must be a number of seconds"},
      {"wait-idle 1 2", "wait-idle takes 0 or 1 arguments, got 2 (usage: wait-idle [SECONDS])"},
      {"wait-job", "wait-job takes 1 or 2 arguments, got 0"},
      {"wait-job analyse soon", "SECONDS must be a number of seconds"},
      {"cancel now", "cancel takes 0 arguments, got 1"},
      {"frames 0", "N must be an integer from 1"},
      {"brush 0", "N must be an integer from 1"},
      {"edit-tool smudge", "expected occlude or blur or paint or paste"},
      {"paint 3", "paint takes 2 arguments, got 1 (usage: paint ROW COL)"},
      {"edit-difference yes", "expected on or off"},
      {"frames", "takes 1 argument"},
      {"screenshot shot.ppm", "PATH must end in .png"},
      {"expect-error now", "expect-error takes 0 arguments, got 1"},
      {"expect-no-error x", "takes 0 arguments"},
      {"quit now", "quit takes 0 arguments, got 1"},
      {"img-size deit_mini 160", "img-size takes 3 arguments, got 2 (usage: img-size MODEL H W)"},
      {"img-size deit_mini 0 160", "H must be an integer from 1"},
      {"img-size deit_mini 160 -4", "W must be an integer from 1"},
      {"img-size deit_mini 160 1.5", "W must be an integer"},
      {"class-names deit_mini", "class-names takes 2 arguments, got 1"},
      {"class-names deit_mini \"\"", "FILE|none must not be empty"},
      {"show-input yes", "expected on or off"},
      {"model-info out/model.txt", "PATH must end in .json"},
  };
  for (const auto& [line, expected] : cases) {
    const std::string error = parse_error(line);
    EXPECT_EQ(error.rfind("t.script:1: ", 0), 0u) << line << " -> " << error;
    EXPECT_NE(error.find(expected), std::string::npos) << line << " -> " << error;
  }
}

TEST(GuiScript, UnknownCommandListsTheKnownOnes) {
  const std::string error = parse_error("open-image a.png\nzoom 2\n", "demo.script");
  EXPECT_EQ(error.rfind("demo.script:2: unknown command \"zoom\"; known commands: ", 0), 0u)
      << error;
  for (const std::string& name : script_command_names()) {
    EXPECT_NE(error.find(name), std::string::npos) << name;
  }
  // Names are exact: no case folding, no abbreviations.
  EXPECT_NE(parse_error("Quit").find("unknown command \"Quit\""), std::string::npos);
  EXPECT_NE(parse_error("open a.png").find("unknown command \"open\""), std::string::npos);
}

TEST(GuiScript, QuotedArgumentsMayHoldSpacesAndQuotes) {
  EXPECT_EQ(parse_one("open-image \"my images/a cat.png\"").args, Args{"my images/a cat.png"});
  EXPECT_EQ(parse_one("click-token \"3\" 4").args, (Args{"3", "4"}));
  EXPECT_EQ(parse_one("select-model \"tiny hilo\"").args, Args{"tiny hilo"});
  EXPECT_EQ(parse_one(R"(export-stats "a \"quoted\" dir")").args, Args{"a \"quoted\" dir"});
  EXPECT_EQ(parse_one(R"(export-stats "back\\slash")").args, Args{"back\\slash"});
  EXPECT_EQ(parse_one(R"(export-stats "C:\data\x")").args, Args{"C:\\data\\x"});
  EXPECT_EQ(parse_one("open-image \"# not a comment.png\"").args, Args{"# not a comment.png"});
  EXPECT_EQ(parse_one("screenshot \"out/shot 1.png\"   # trailing").args, Args{"out/shot 1.png"});
}

TEST(GuiScript, QuotingErrorsAreReported) {
  EXPECT_NE(parse_error("open-image \"a.png").find("t.script:1: unterminated quote at column 12"),
            std::string::npos)
      << parse_error("open-image \"a.png");
  EXPECT_NE(parse_error("open-image \"a\"b.png").find("closing quote must end the argument"),
            std::string::npos);
  EXPECT_NE(parse_error("open-image a\"b.png\"").find("quote inside an unquoted argument"),
            std::string::npos);
}

TEST(GuiScript, CommentsBlankLinesAndWhitespace) {
  const std::string text =
      "# a whole-line comment\n"
      "\n"
      "   \t  \n"
      "open-image run#3/img.png   # a comment after the arguments\n"
      "\t layer\t 2  \r\n"
      "    # indented comment\n"
      "quit#not-a-comment-start\n";
  EXPECT_NE(parse_error(text).find("t.script:7: unknown command \"quit#not-a-comment-start\""),
            std::string::npos);

  const std::vector<ScriptCommand> commands =
      parse_script(text.substr(0, text.rfind("quit")) + "quit # bye\n", "t.script");
  ASSERT_EQ(commands.size(), 3u);
  EXPECT_EQ(commands[0].name, "open-image");
  EXPECT_EQ(commands[0].args, Args{"run#3/img.png"});  // `#` inside a word is literal
  EXPECT_EQ(commands[0].line, 4);
  EXPECT_EQ(commands[1].name, "layer");
  EXPECT_EQ(commands[1].args, Args{"2"});  // tabs separate, a trailing \r is dropped
  EXPECT_EQ(commands[1].line, 5);
  EXPECT_EQ(commands[2].name, "quit");
  EXPECT_EQ(commands[2].line, 7);
}

TEST(GuiScript, EmptyScriptsGiveNoCommands) {
  EXPECT_TRUE(parse_script("", "t.script").empty());
  EXPECT_TRUE(parse_script("# only comments\n\n", "t.script").empty());
  EXPECT_EQ(parse_script("quit", "t.script").size(), 1u);  // no final newline needed
}

TEST(GuiScript, TheFirstErrorWinsWithItsLineNumber) {
  const std::string text =
      "open-image a.png\n"
      "# comment\n"
      "\n"
      "layer 1\n"
      "alpha 2\n"
      "bogus\n";
  EXPECT_EQ(parse_error(text, "scripts/demo.txt"),
            "scripts/demo.txt:5: alpha: X must be a number from 0 to 1 (got \"2\")");
}

TEST(GuiScript, ARealisticScript) {
  const std::string text = R"(# compare two models on one image
open-image "fixtures/cat 224.png"
open-model zoo/hilo.safetensors
open-model zoo/castling.pth
wait-idle 30
expect-no-error
layout compare
shared-scale on
select-model 1
layer 3
head 2
map rollout
click-token 7 7
tab spectra
export-panel out/spectra.svg
export-stats out/stats
frames 5
screenshot out/shot.png
quit
)";
  const std::vector<ScriptCommand> commands = parse_script(text, "compare.script");
  ASSERT_EQ(commands.size(), 18u);
  EXPECT_EQ(commands.front().args, Args{"fixtures/cat 224.png"});
  EXPECT_EQ(commands.front().line, 2);
  EXPECT_EQ(commands.back().name, "quit");
  EXPECT_EQ(commands.back().line, 19);
}

class LoadScriptTest : public ::testing::Test {
 protected:
  attnlab::testing::TempDir dir_{"script"};
};

TEST_F(LoadScriptTest, ReadsAndParsesAFile) {
  const std::string path = (dir_.path / "ok.script").string();
  std::ofstream(path) << "layer 2\nquit\n";
  const std::vector<ScriptCommand> commands = load_script(path);
  ASSERT_EQ(commands.size(), 2u);
  EXPECT_EQ(commands[0].name, "layer");
  EXPECT_EQ(commands[1].line, 2);

  const std::string empty = (dir_.path / "empty.script").string();
  std::ofstream(empty).flush();
  EXPECT_TRUE(load_script(empty).empty());
}

TEST_F(LoadScriptTest, ParseErrorsNameTheFile) {
  const std::string path = (dir_.path / "bad.script").string();
  std::ofstream(path) << "quit\nfly away\n";
  try {
    load_script(path);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path + ":2: unknown command \"fly\"", 0), 0u) << e.what();
  }
}

TEST_F(LoadScriptTest, UnreadableFilesThrowRuntimeErrorNamingTheFile) {
  for (const std::string& path : {(dir_.path / "missing.script").string(), dir_.path.string()}) {
    try {
      load_script(path);
      FAIL() << "no error for " << path;
    } catch (const std::invalid_argument& e) {
      FAIL() << "wrong exception type: " << e.what();
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()).rfind(path + ": cannot", 0), 0u) << e.what();
    }
  }
}

}  // namespace
}  // namespace attnlab::gui

namespace {

// The command table gives every command its help line, and the help lists them all.
// The sidebar's size sweep list (size_sweep_view.h): two or more sizes in pixels; the
// default is the model's size at 1, 1.5 and 2 times.
TEST(SizeSweep, ParsesTheListAndRefusesBadOnes) {
  EXPECT_EQ(attnlab::gui::parse_sweep_sizes("28,42,56"), (std::vector<int64_t>{28, 42, 56}));
  EXPECT_EQ(attnlab::gui::parse_sweep_sizes(" 224 , 288 "), (std::vector<int64_t>{224, 288}));
  for (const char* bad : {"", "28", "28,x", "28,0", "28,-4", "28,42.5", "28,99999"})
    EXPECT_THROW(attnlab::gui::parse_sweep_sizes(bad), std::invalid_argument) << bad;
  EXPECT_EQ(attnlab::gui::default_sweep_sizes({224, 224}), "224,336,448");
  EXPECT_EQ(attnlab::gui::default_sweep_sizes({28, 28}), "28,42,56");
  EXPECT_EQ(attnlab::gui::default_sweep_sizes({}), "");          // the image decides: no default
  EXPECT_EQ(attnlab::gui::default_sweep_sizes({160, 192}), "");  // not square
}

TEST(GuiScript, EveryCommandHasItsHelpInTheTable) {
  const std::string help = attnlab::gui::script_help();
  for (const auto& syntax : attnlab::gui::script_syntax()) {
    EXPECT_NE(std::string(syntax.help), "") << syntax.name;
    EXPECT_NE(help.find(attnlab::gui::script_usage(syntax)), std::string::npos) << syntax.name;
  }
  EXPECT_EQ(attnlab::gui::script_syntax().size(), attnlab::gui::script_command_names().size());
}

}  // namespace
