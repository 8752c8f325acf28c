// The CLI's what-if edits (`--edit`, issue 48 item 5): a bad operation is a usage error
// naming it; an edit that occludes every token with one colour gives exactly the results
// of a flat picture of that colour (the edit reaches the model's input and nothing else
// changes); the run records its edits in the sidecar and in edits.txt, and a run without
// edits writes neither; an edit's unit is the model's first-layer token.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "app/cli/analyze_common.h"
#include "app/cli/cli_common.h"
#include "app/session/edited_input.h"
#include "core/image/preprocess.h"
#include "core/io/image_io.h"
#include "models/model_config.h"
#include "models/model_registry.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_path.h"
#include "tests/support/text_file.h"

namespace {

namespace fs = std::filesystem;
using namespace attnlab;

std::string edit_demo_image() {
  return std::string(ATTNLAB_SOURCE_DIR) + "/assets/demo.png";
}
std::string edit_checkpoint() {
  return attnlab::testing::parity_dir() + "/deit_mini.safetensors";
}
std::shared_ptr<models::Backbone> edit_fixture_model(const std::string& name) {
  return models::make_backbone(
      models::config_from_file(attnlab::testing::parity_dir() + "/" + name + ".config.json"));
}

// Every .csv and .npy under `dir` (tables and arrays), by path relative to it, as bytes.
std::map<std::string, std::string> edit_result_files(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string ext = e.path().extension().string();
    if (e.is_regular_file() && (ext == ".csv" || ext == ".npy"))
      out[e.path().lexically_relative(dir).string()] = attnlab::testing::read_text(e.path());
  }
  return out;
}

TEST(EditOption, ABadOperationIsAUsageErrorNamingIt) {
  attnlab::testing::TempDir out("bad_edit");
  const auto analyze = [&](const std::string& edit) {
    return cli::cmd_analyze(cli::Args({"--model", edit_checkpoint(), "--images", edit_demo_image(),
                                       "--out", (out.path / "r").string(), "--edit", edit}),
                            {});
  };
  for (const std::string bad :
       {"smudge:0,0,1", "occlude:0,0", "paint:1,1,1,300,0,0", "blur:a,0,1"}) {
    try {
      analyze("occlude:1,1,2;" + bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const cli::UsageError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("--edit"), std::string::npos) << what;
      EXPECT_NE(what.find("'" + bad + "'"), std::string::npos) << what;
      // The good operation before it is not the one blamed.
      EXPECT_EQ(what.find("occlude:1,1,2"), std::string::npos) << what;
    }
  }
  // A paste whose source is not there would fail every image: refused at once, by name.
  try {
    analyze("paste:0,0,1,2,2," + (out.path / "missing.png").string());
    ADD_FAILURE() << "a missing paste source was accepted";
  } catch (const cli::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("missing.png"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(out.path / "r"));  // refused before anything was written
}

TEST(EditOption, RepeatedEditsFollowEachOtherInOrder) {
  cli::Args args(
      {"--edit", "occlude:1,1,2", "--layers", "0", "--edit", "blur:0,0,1;paint:2,3,1,1,2,3"});
  const session::AnalysisSettings st = cli::take_analysis_settings(args, "all");
  EXPECT_EQ(image::edits_text(st.edits), "occlude:1,1,2,128,128,128;blur:0,0,1;paint:2,3,1,1,2,3");
  EXPECT_TRUE(args.remaining().empty());
  EXPECT_EQ(st.to_json()["edits"], image::edits_text(st.edits));
  // None given: the sidecar's settings have no "edits" key (older sidecars unchanged).
  cli::Args none({"--layers", "0"});
  EXPECT_FALSE(cli::take_analysis_settings(none, "all").to_json().contains("edits"));
}

TEST(EditOption, EditPatchIsTheFirstLayersTokenSide) {
  EXPECT_EQ(session::edit_patch(*edit_fixture_model("deit_mini"), 224, 224), 16);  // ViT /16
  EXPECT_EQ(session::edit_patch(*edit_fixture_model("swin_mini"), 32, 32), 4);     // patch 4
  EXPECT_EQ(session::edit_patch(*edit_fixture_model("litv2_mini"), 224, 224), 4);  // stage 1
}

TEST(EditOption, NoEditsIsThePreprocessedPicture) {
  const io::RgbImage demo = io::load_rgb_image(edit_demo_image());
  const image::Preprocessing p = image::imagenet_eval(248, 224);
  const io::RgbImage plain = image::preprocess_picture(demo, p);
  const io::RgbImage edited =
      session::edited_picture(demo, p, *edit_fixture_model("deit_mini"), {});
  EXPECT_EQ(edited.width, plain.width);
  EXPECT_EQ(edited.height, plain.height);
  EXPECT_TRUE(edited.rgb == plain.rgb);
}

// occlude:0,0,14 with a colour covers deit_mini's whole 14 x 14 token grid, so the model
// sees a flat picture: exactly what it sees of a flat PNG of that colour. The two runs are
// then one computation on one input tensor and every table and array must be equal byte
// for byte (tolerance 0): the same model, input and thread count in one process do the
// same float operations in the same order. Any difference means the edit did not reach
// the input exactly as a flat picture, or changed something besides the input.
TEST(EditOption, OccludingEveryTokenIsAnalysedAsAFlatPicture) {
  attnlab::testing::TempDir out("flat");
  const std::array<uint8_t, 3> colour{30, 120, 200};
  const std::string edits = "occlude:0,0,14,30,120,200";

  cli::Args model_args({"--model", edit_checkpoint()});
  const cli::ModelChoice choice = cli::take_model_choice(model_args);
  const image::Preprocessing& p = choice.preprocessing;
  const std::shared_ptr<models::Backbone> model = edit_fixture_model("deit_mini");

  // The flat picture under the demo image's name (so its maps get the same file names),
  // at the size the preprocessing resizes to: the resize then leaves it as it is (a
  // resample of a flat picture is off by one in places: PIL's fixed-point weights) and the
  // crop cuts a flat picture of the model's input size.
  const auto flat_picture = [&](int width, int height) {
    io::RgbImage im;
    im.width = width;
    im.height = height;
    for (int i = 0; i < width * height; ++i)
      im.rgb.insert(im.rgb.end(), colour.begin(), colour.end());
    return im;
  };
  const int side = p.resize_short > 0 ? p.resize_short : std::max(p.crop, p.crop_width);
  ASSERT_GE(side, std::max(p.crop, p.crop_width));
  const io::RgbImage flat = flat_picture(p.crop_width > 0 ? p.crop_width : p.crop, p.crop);
  fs::create_directories(out.path / "flat");
  const std::string flat_png = (out.path / "flat" / "demo.png").string();
  io::save_png(flat_png, side, side, 3, flat_picture(side, side).rgb.data());
  const io::RgbImage flat_seen = image::preprocess_picture(io::load_rgb_image(flat_png), p);
  ASSERT_EQ(flat_seen.width, flat.width);
  ASSERT_EQ(flat_seen.height, flat.height);
  ASSERT_TRUE(flat_seen.rgb == flat.rgb) << "the flat PNG changed in its preprocessing";
  // The edited demo image is that same picture (so the CLI runs below compare one input).
  const io::RgbImage edited = session::edited_picture(io::load_rgb_image(edit_demo_image()), p,
                                                      *model, image::parse_edits(edits));
  ASSERT_TRUE(edited.rgb == flat.rgb);

  const auto analyze = [&](const std::string& image, const std::string& folder,
                           const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"--model",  edit_checkpoint(),
                                     "--images", image,
                                     "--out",    (out.path / folder).string(),
                                     "--query",  "3,4"};
    args.insert(args.end(), extra.begin(), extra.end());
    return cli::cmd_analyze(cli::Args(args), {});
  };
  ASSERT_EQ(analyze(edit_demo_image(), "edited", {"--edit", edits}), cli::kExitOk);
  ASSERT_EQ(analyze(flat_png, "plain", {}), cli::kExitOk);

  const auto edited_files = edit_result_files(out.path / "edited");
  const auto plain_files = edit_result_files(out.path / "plain");
  ASSERT_GT(plain_files.size(), 10u);  // tables and maps of every analysis of "all"
  ASSERT_EQ(edited_files.size(), plain_files.size());
  for (const auto& [name, bytes] : plain_files) {
    const auto other = edited_files.find(name);
    ASSERT_NE(other, edited_files.end()) << name;
    EXPECT_TRUE(other->second == bytes) << name << " differs";
  }
  // And the demo image unedited is not flat: the comparison can fail.
  ASSERT_EQ(analyze(edit_demo_image(), "unedited", {}), cli::kExitOk);
  const auto unedited_files = edit_result_files(out.path / "unedited");
  ASSERT_EQ(unedited_files.count("deit_mini__entropy_layers.csv"), 1u);
  EXPECT_NE(unedited_files.at("deit_mini__entropy_layers.csv"),
            plain_files.at("deit_mini__entropy_layers.csv"));

  // The edits are recorded: the sidecar's settings and edits.txt (listed in the sidecar).
  const auto sidecar = [&](const std::string& folder) {
    return nlohmann::json::parse(
        attnlab::testing::read_text((out.path / folder / "deit_mini__settings.json").string()));
  };
  const nlohmann::json with = sidecar("edited");
  EXPECT_EQ(with["settings"]["edits"], edits);
  bool listed = false;
  for (const auto& f : with["files"]) listed |= f["file"] == session::kEditsFile;
  EXPECT_TRUE(listed) << with["files"].dump();
  const std::string text =
      attnlab::testing::read_text((out.path / "edited" / "edits.txt").string());
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.front(), '#') << text;
  EXPECT_EQ(text.substr(text.find('\n') + 1), edits + "\n");
  EXPECT_EQ(text, session::edits_file_text(image::parse_edits(edits)));
  // Without edits: neither.
  EXPECT_FALSE(sidecar("plain")["settings"].contains("edits"));
  EXPECT_FALSE(fs::exists(out.path / "plain" / "edits.txt"));
}

// The report writes edits.txt beside its figures, says the edits in its index, and each
// model's statistics sidecar records them.
TEST(EditOption, TheReportRecordsItsEdits) {
  attnlab::testing::TempDir out("report");
  const std::string edits = "blur:0,0,3;paint:5,5,2,255,0,0";
  ASSERT_EQ(cli::cmd_report(cli::Args({"--models", edit_checkpoint(), "--images", edit_demo_image(),
                                       "--out", out.path.string(), "--analyses", "entropy",
                                       "--formats", "png", "--edit", edits}),
                            {}),
            cli::kExitOk);
  EXPECT_EQ(attnlab::testing::read_text((out.path / "edits.txt").string()),
            session::edits_file_text(image::parse_edits(edits)));
  const std::string index = attnlab::testing::read_text((out.path / "index.html").string());
  EXPECT_NE(index.find(edits), std::string::npos);
  const nlohmann::json side = nlohmann::json::parse(
      attnlab::testing::read_text((out.path / "stats" / "deit_mini__settings.json").string()));
  EXPECT_EQ(side["settings"]["edits"], edits);
}

// CKA between models is a pass of its own over the images (report_cka.h): the edits reach
// it too. Without them it compares the models on the demo image, with an occlusion on
// another picture, so the table changes.
TEST(EditOption, CkaBetweenModelsSeesTheEditedPictures) {
  attnlab::testing::TempDir out("cka");
  const auto report = [&](const std::string& folder, const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"--models",
                                     edit_checkpoint(),
                                     attnlab::testing::parity_dir() + "/swin_mini.safetensors",
                                     "--images",
                                     edit_demo_image(),
                                     "--out",
                                     (out.path / folder).string(),
                                     "--analyses",
                                     "cka",
                                     "--formats",
                                     "png"};
    args.insert(args.end(), extra.begin(), extra.end());
    return cli::cmd_report(cli::Args(args), {});
  };
  ASSERT_EQ(report("plain", {}), cli::kExitOk);
  ASSERT_EQ(report("edited", {"--edit", "occlude:0,0,4,255,255,255"}), cli::kExitOk);
  const std::string table = "stats/models__cka_models.csv";
  const std::string plain = attnlab::testing::read_text((out.path / "plain" / table).string());
  const std::string edited = attnlab::testing::read_text((out.path / "edited" / table).string());
  ASSERT_FALSE(plain.empty());
  ASSERT_FALSE(edited.empty());
  EXPECT_NE(plain, edited);
}

}  // namespace
