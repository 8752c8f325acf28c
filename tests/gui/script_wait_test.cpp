// The script runner's waits: wait-idle and wait-job fail once their limit passes, and
// ATTNLAB_SCRIPT_WAIT_SCALE stretches every limit (the sanitizer builds run many times
// slower; scripts/sanitize.sh sets it), with bad values refused by name.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "app/gui/gui_state.h"
#include "app/gui/script/gui_script.h"
#include "app/gui/script/script_runner.h"

namespace attnlab::gui {
namespace {

ScriptRunner runner_for(const std::string& text, int wait_scale) {
  ScriptRunner r;
  r.commands = parse_script(text, "t.script");
  r.wait_scale = wait_scale;
  return r;
}

TEST(ScriptWait, WaitIdleFailsOnlyAfterItsLimitTimesTheScale) {
  for (const int scale : {1, 10}) {
    GuiState state;
    ScriptRunner r = runner_for("wait-idle 60\n", scale);
    step_script(r, state, /*idle=*/false, /*now=*/0.0);
    ASSERT_TRUE(r.waiting_idle);
    step_script(r, state, false, 60.0 * scale - 1.0);
    EXPECT_FALSE(r.failed) << "scale " << scale;
    step_script(r, state, false, 60.0 * scale + 1.0);
    ASSERT_TRUE(r.failed) << "scale " << scale;
    EXPECT_NE(r.failure.find("script line 1 (wait-idle)"), std::string::npos) << r.failure;
    // A failure under a stretched limit says so, so a sanitizer log reads right.
    EXPECT_EQ(r.failure.find("ATTNLAB_SCRIPT_WAIT_SCALE") != std::string::npos, scale != 1)
        << r.failure;
  }
}

TEST(ScriptWait, WaitJobLimitIsScaledToo) {
  GuiState state;
  ScriptRunner r = runner_for("wait-job analyse 30\n", 4);
  step_script(r, state, true, 0.0);
  step_script(r, state, true, 119.0, "load");
  EXPECT_FALSE(r.failed);
  step_script(r, state, true, 121.0, "load");
  ASSERT_TRUE(r.failed);
  EXPECT_NE(r.failure.find("no job 'analyse' ran before the wait ran out (limits × 4"),
            std::string::npos)
      << r.failure;
}

TEST(ScriptWait, ScaleTakesWholeNumbersFromOneTo1000) {
  EXPECT_EQ(parse_script_wait_scale("1"), 1);
  EXPECT_EQ(parse_script_wait_scale("10"), 10);
  EXPECT_EQ(parse_script_wait_scale("1000"), 1000);
  for (const char* bad : {"", "0", "1001", "2.5", "-3", "ten", "10s", "99999"}) {
    try {
      parse_script_wait_scale(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("ATTNLAB_SCRIPT_WAIT_SCALE: '" + std::string(bad)),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace attnlab::gui
