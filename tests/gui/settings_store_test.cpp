// The GUI's settings file: round trips, defaults, damaged files (which must give defaults
// and a warning, never an exception), saving into new or impossible places, the recent
// lists, and where the file lives. Every test works in its own temporary folder.
#include "app/gui/workspace/settings_store.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include <unistd.h>

#include "tests/support/temp_path.h"

namespace attnlab::gui {
namespace {

namespace fs = std::filesystem;

class SettingsStoreTest : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return dir_.file(name); }

  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path(name), std::ios::binary) << text;
    return path(name);
  }

  attnlab::testing::TempDir dir_{"settings"};
};

// Sets (or unsets, with nullopt) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

void expect_defaults(const GuiSettings& s) {
  const GuiSettings d;
  EXPECT_EQ(s.window_width, d.window_width);
  EXPECT_EQ(s.window_height, d.window_height);
  EXPECT_EQ(s.recent_images, d.recent_images);
  EXPECT_EQ(s.recent_models, d.recent_models);
  EXPECT_EQ(s.last_images, d.last_images);
  EXPECT_EQ(s.last_models, d.last_models);
  EXPECT_EQ(s.colormap, d.colormap);
  EXPECT_EQ(s.alpha, d.alpha);
  EXPECT_EQ(s.bilinear, d.bilinear);
  EXPECT_EQ(s.normalisation, d.normalisation);
  EXPECT_EQ(s.layout, d.layout);
  EXPECT_EQ(s.shared_scale, d.shared_scale);
  EXPECT_EQ(s.analysis_options, d.analysis_options);
  EXPECT_EQ(s.left_panel_width, d.left_panel_width);
}

TEST_F(SettingsStoreTest, DefaultsAreTheDocumentedOnes) {
  const GuiSettings s;
  EXPECT_EQ(s.window_width, 1280);
  EXPECT_EQ(s.window_height, 800);
  EXPECT_EQ(s.colormap, "viridis");
  EXPECT_DOUBLE_EQ(s.alpha, 0.6);
  EXPECT_TRUE(s.bilinear);
  EXPECT_EQ(s.normalisation, "minmax");
  EXPECT_EQ(s.layout, "single");
  EXPECT_FALSE(s.shared_scale);  // compare: each model on its own scale
  EXPECT_EQ(s.analysis_options, "{}");  // every analysis option at `attnlab analyze`'s default
  EXPECT_EQ(s.left_panel_width, 320);
  EXPECT_TRUE(s.recent_images.empty() && s.recent_models.empty());
  EXPECT_TRUE(s.last_images.empty() && s.last_models.empty());
}

TEST_F(SettingsStoreTest, RoundTripKeepsEveryField) {
  GuiSettings s;
  s.window_width = 1920;
  s.window_height = 1080;
  s.recent_images = {"/data/b.png", "/data/a dir/a.jpg"};
  s.recent_models = {"/zoo/hilo.safetensors"};
  s.last_images = {"/data/b.png", "/data/b.png"};
  s.last_models = {"/zoo/hilo.safetensors", "/zoo/castling.pth"};
  s.colormap = "magma";
  s.alpha = 0.25;
  s.bilinear = false;
  s.normalisation = "percentile";
  s.layout = "compare";
  s.shared_scale = true;
  s.analysis_options = R"({"fusion":"max","no-renormalize":true,"residual":0.3})";
  s.left_panel_width = 410;
  const std::string file = path("settings.json");
  std::string error = "unchanged";
  ASSERT_TRUE(save_settings(file, s, &error)) << error;

  std::string warning = "unchanged";
  const GuiSettings r = load_settings(file, &warning);
  EXPECT_EQ(warning, "");
  EXPECT_EQ(r.window_width, 1920);
  EXPECT_EQ(r.window_height, 1080);
  EXPECT_EQ(r.recent_images, s.recent_images);
  EXPECT_EQ(r.recent_models, s.recent_models);
  EXPECT_EQ(r.last_images, s.last_images);  // duplicates kept: the same file open twice
  EXPECT_EQ(r.last_models, s.last_models);
  EXPECT_EQ(r.colormap, "magma");
  EXPECT_DOUBLE_EQ(r.alpha, 0.25);
  EXPECT_FALSE(r.bilinear);
  EXPECT_EQ(r.normalisation, "percentile");
  EXPECT_EQ(r.layout, "compare");
  EXPECT_TRUE(r.shared_scale);
  EXPECT_EQ(r.analysis_options, s.analysis_options);  // nlohmann's dump sorts the keys
  EXPECT_EQ(r.left_panel_width, 410);
}

TEST_F(SettingsStoreTest, SavedFileNamesItsFormatAndLeavesNoTemporary) {
  const std::string file = path("settings.json");
  ASSERT_TRUE(save_settings(file, GuiSettings{}, nullptr));
  std::ostringstream read;
  read << std::ifstream(file).rdbuf();
  const std::string text = read.str();
  EXPECT_NE(text.find("\"format\": \"attnlab gui settings 1\""), std::string::npos) << text;
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_.path)) ++entries;
  EXPECT_EQ(entries, 1);
}

TEST_F(SettingsStoreTest, MissingFileGivesDefaultsWithoutWarning) {
  std::string warning = "unchanged";
  expect_defaults(load_settings(path("nope.json"), &warning));
  EXPECT_EQ(warning, "");
  expect_defaults(load_settings("", &warning));
  EXPECT_EQ(warning, "");
  expect_defaults(load_settings(path("nope.json"), nullptr));  // null warning is allowed
}

TEST_F(SettingsStoreTest, NotJsonGivesDefaultsAndAWarningNamingTheFile) {
  for (const char* text : {"", "{", "window_width = 5", "{\"alpha\": 0.3,}", "\xff\xfe{}"}) {
    const std::string file = write("bad.json", text);
    std::string warning;
    expect_defaults(load_settings(file, &warning));
    EXPECT_NE(warning.find(file), std::string::npos) << warning;
    EXPECT_NE(warning.find("not valid JSON"), std::string::npos) << warning;
  }
}

TEST_F(SettingsStoreTest, NonObjectOrForeignFormatGivesDefaultsAndAWarning) {
  const std::pair<const char*, const char*> cases[] = {
      {"[1, 2, 3]", "array"},
      {"42", "number"},
      {"\"text\"", "string"},
      {"{\"format\": \"attnlab gui settings 2\", \"alpha\": 0.1}", "format"},
      {"{\"format\": 1, \"alpha\": 0.1}", "format"},
  };
  for (const auto& [text, problem] : cases) {
    const std::string file = write("odd.json", text);
    std::string warning;
    expect_defaults(load_settings(file, &warning));
    EXPECT_NE(warning.find(file), std::string::npos) << warning;
    EXPECT_NE(warning.find(problem), std::string::npos) << text << " -> " << warning;
  }
}

TEST_F(SettingsStoreTest, WrongTypedValuesKeepTheirDefaultsAndAreNamed) {
  const std::string file = write("types.json", R"({
    "format": "attnlab gui settings 1",
    "window_width": "wide", "window_height": true,
    "recent_images": "a.png", "recent_models": {"x": 1},
    "last_images": 7, "last_models": null,
    "colormap": 3, "alpha": "0.5", "bilinear": "yes",
    "normalisation": [], "layout": "grid", "left_panel_width": [300]
  })");
  std::string warning;
  expect_defaults(load_settings(file, &warning));
  EXPECT_NE(warning.find(file), std::string::npos) << warning;
  for (const char* key : {"window_width", "window_height", "recent_images", "recent_models",
                          "last_images", "last_models", "colormap", "alpha", "bilinear",
                          "normalisation", "layout", "left_panel_width"}) {
    EXPECT_NE(warning.find(std::string("\"") + key + "\""), std::string::npos)
        << key << " not named in: " << warning;
  }
}

TEST_F(SettingsStoreTest, GoodKeysSurviveBesideABadOne) {
  const std::string file =
      write("mixed.json", R"({"window_width": 1600, "alpha": "lots", "colormap": "gray"})");
  std::string warning;
  const GuiSettings s = load_settings(file, &warning);
  EXPECT_EQ(s.window_width, 1600);
  EXPECT_EQ(s.colormap, "gray");
  EXPECT_DOUBLE_EQ(s.alpha, GuiSettings{}.alpha);
  EXPECT_NE(warning.find("\"alpha\""), std::string::npos) << warning;
}

TEST_F(SettingsStoreTest, HugeAndTinyValuesAreClampedWithAWarning) {
  const std::string file = write("huge.json", R"({
    "window_width": 1e300, "window_height": -99999999999999999999999,
    "alpha": 7.5, "left_panel_width": 123456789012345678901234567890
  })");
  std::string warning;
  const GuiSettings s = load_settings(file, &warning);
  EXPECT_EQ(s.window_width, 16384);
  EXPECT_EQ(s.window_height, 320);
  EXPECT_DOUBLE_EQ(s.alpha, 1.0);
  EXPECT_EQ(s.left_panel_width, 4096);
  for (const char* key : {"window_width", "window_height", "alpha", "left_panel_width"}) {
    EXPECT_NE(warning.find(key), std::string::npos) << key << " not named in: " << warning;
  }

  const std::string low = write("low.json", R"({"window_width": 10, "alpha": -0.5})");
  const GuiSettings t = load_settings(low, &warning);
  EXPECT_EQ(t.window_width, 320);
  EXPECT_DOUBLE_EQ(t.alpha, 0.0);
}

TEST_F(SettingsStoreTest, InRangeValuesAndUnknownKeysGiveNoWarning) {
  const std::string file = write("fine.json", R"({
    "window_width": 320, "window_height": 16384, "alpha": 0, "future_option": {"a": 1}
  })");
  std::string warning = "unchanged";
  const GuiSettings s = load_settings(file, &warning);
  EXPECT_EQ(warning, "");
  EXPECT_EQ(s.window_width, 320);
  EXPECT_EQ(s.window_height, 16384);
  EXPECT_DOUBLE_EQ(s.alpha, 0.0);
}

TEST_F(SettingsStoreTest, LongOrMessyListsAreTrimmedAndCleaned) {
  std::string images;
  for (int i = 0; i < 25; ++i) images += (i ? ", " : "") + ("\"/img/" + std::to_string(i) + "\"");
  const std::string file = write("lists.json", "{\"recent_images\": [" + images +
                                                   "], \"recent_models\": [\"a\", 5, \"b\", "
                                                   "\"a\", \"\", \"c\"], \"last_images\": [" +
                                                   images + "]}");
  std::string warning;
  const GuiSettings s = load_settings(file, &warning);
  ASSERT_EQ(s.recent_images.size(), kMaxRecent);
  EXPECT_EQ(s.recent_images.front(), "/img/0");
  EXPECT_EQ(s.recent_images.back(), "/img/9");
  EXPECT_EQ(s.recent_models, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(s.last_images.size(), kMaxRecent);
  EXPECT_NE(warning.find("\"recent_images\" has 25 entries"), std::string::npos) << warning;
  EXPECT_NE(warning.find("\"recent_models\": dropped 2"), std::string::npos) << warning;
}

TEST_F(SettingsStoreTest, UnreadablePathsGiveDefaultsAndAWarning) {
  std::string warning;
  expect_defaults(load_settings(dir_.path.string(), &warning));  // a directory
  EXPECT_NE(warning.find(dir_.path.string()), std::string::npos) << warning;
  EXPECT_NE(warning.find("not a regular file"), std::string::npos) << warning;

  // A file without read permission (root reads it anyway, so only checked as a user).
  const std::string locked = write("locked.json", R"({"alpha": 0.2})");
  fs::permissions(locked, fs::perms::none);
  if (::geteuid() != 0) {
    expect_defaults(load_settings(locked, &warning));
    EXPECT_NE(warning.find(locked), std::string::npos) << warning;
    EXPECT_NE(warning.find("cannot read"), std::string::npos) << warning;
  }
  fs::permissions(locked, fs::perms::owner_all);
}

TEST_F(SettingsStoreTest, OversizedFileIsRefused) {
  const std::string file =
      write("big.json", "{\"colormap\": \"" + std::string(2 << 20, 'a') + "\"}");
  std::string warning;
  expect_defaults(load_settings(file, &warning));
  EXPECT_NE(warning.find(file), std::string::npos) << warning;
}

TEST_F(SettingsStoreTest, SaveCreatesMissingFolders) {
  const std::string file = path("deep/er/attnlab/settings.json");
  GuiSettings s;
  s.colormap = "inferno";
  std::string error;
  ASSERT_TRUE(save_settings(file, s, &error)) << error;
  EXPECT_EQ(load_settings(file, nullptr).colormap, "inferno");
}

TEST_F(SettingsStoreTest, SaveReplacesAnOlderFile) {
  const std::string file = path("settings.json");
  GuiSettings s;
  s.alpha = 0.1;
  ASSERT_TRUE(save_settings(file, s, nullptr));
  s.alpha = 0.9;
  ASSERT_TRUE(save_settings(file, s, nullptr));
  EXPECT_DOUBLE_EQ(load_settings(file, nullptr).alpha, 0.9);
}

TEST_F(SettingsStoreTest, SaveToAnImpossiblePathReturnsFalseWithAReason) {
  const std::string plain = write("plain", "x");
  std::string error;
  EXPECT_FALSE(save_settings(plain + "/sub/settings.json", GuiSettings{}, &error));
  EXPECT_NE(error.find(plain), std::string::npos) << error;

  error.clear();
  EXPECT_FALSE(save_settings(plain + "/settings.json", GuiSettings{}, &error));
  EXPECT_FALSE(error.empty());

  error.clear();
  EXPECT_FALSE(save_settings(dir_.path.string(), GuiSettings{}, &error));  // a directory
  EXPECT_FALSE(error.empty());

  error.clear();
  EXPECT_FALSE(save_settings("", GuiSettings{}, &error));
  EXPECT_FALSE(error.empty());
  EXPECT_FALSE(save_settings("", GuiSettings{}, nullptr));  // null error is allowed
}

TEST_F(SettingsStoreTest, NonUtf8PathsDoNotLoseTheOtherSettings) {
  GuiSettings s;
  s.recent_images = {"/data/caf\xe9.png", "/data/ok.png"};
  s.window_width = 999;
  const std::string file = path("settings.json");
  std::string error;
  ASSERT_TRUE(save_settings(file, s, &error)) << error;
  const GuiSettings r = load_settings(file, nullptr);
  EXPECT_EQ(r.window_width, 999);
  ASSERT_EQ(r.recent_images.size(), 2u);
  EXPECT_EQ(r.recent_images[1], "/data/ok.png");
}

TEST(RememberRecent, MovesToFrontDedupesAndCaps) {
  std::vector<std::string> list;
  remember_recent(list, "a");
  remember_recent(list, "b");
  remember_recent(list, "c");
  EXPECT_EQ(list, (std::vector<std::string>{"c", "b", "a"}));

  remember_recent(list, "a");  // already there: moves to the front, no copy left behind
  EXPECT_EQ(list, (std::vector<std::string>{"a", "c", "b"}));
  remember_recent(list, "a");
  EXPECT_EQ(list, (std::vector<std::string>{"a", "c", "b"}));

  remember_recent(list, "");  // nothing to remember
  EXPECT_EQ(list.size(), 3u);

  for (int i = 0; i < 20; ++i) remember_recent(list, "f" + std::to_string(i));
  ASSERT_EQ(list.size(), kMaxRecent);
  EXPECT_EQ(list.front(), "f19");
  EXPECT_EQ(list.back(), "f10");
}

TEST(RememberRecent, CleansUpAListThatAlreadyHadDuplicates) {
  std::vector<std::string> list = {"x", "y", "x", "z", "y"};
  remember_recent(list, "y");
  EXPECT_EQ(list, (std::vector<std::string>{"y", "x", "z"}));
}

TEST(SettingsPath, EnvOverrideWins) {
  ScopedEnv override_env("ATTNLAB_SETTINGS", "/tmp/attnlab-test/s.json");
  ScopedEnv xdg("XDG_CONFIG_HOME", "/cfg");
  EXPECT_EQ(settings_path(), "/tmp/attnlab-test/s.json");
}

TEST(SettingsPath, XdgConfigHomeThenHome) {
  ScopedEnv override_env("ATTNLAB_SETTINGS", std::nullopt);
  ScopedEnv home("HOME", "/home/someone");
  {
    ScopedEnv xdg("XDG_CONFIG_HOME", "/cfg");
    EXPECT_EQ(settings_path(), "/cfg/attnlab/settings.json");
  }
  {
    ScopedEnv xdg("XDG_CONFIG_HOME", std::nullopt);
    EXPECT_EQ(settings_path(), "/home/someone/.config/attnlab/settings.json");
  }
  {
    ScopedEnv xdg("XDG_CONFIG_HOME", "relative/cfg");  // the XDG spec says to ignore it
    EXPECT_EQ(settings_path(), "/home/someone/.config/attnlab/settings.json");
  }
  {
    ScopedEnv empty_override("ATTNLAB_SETTINGS", "");
    ScopedEnv xdg("XDG_CONFIG_HOME", "");
    EXPECT_EQ(settings_path(), "/home/someone/.config/attnlab/settings.json");
  }
}

TEST(SettingsPath, EmptyWhenNothingIsSet) {
  ScopedEnv override_env("ATTNLAB_SETTINGS", std::nullopt);
  ScopedEnv xdg("XDG_CONFIG_HOME", std::nullopt);
  ScopedEnv home("HOME", std::nullopt);
  EXPECT_EQ(settings_path(), "");
}

}  // namespace
}  // namespace attnlab::gui
