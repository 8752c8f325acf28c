// The GUI script interpreter; see script_runner.h. The commands themselves are the table
// in script_commands.cpp.
#include "app/gui/script/script_runner.h"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "app/gui/script/script_commands.h"

namespace attnlab::gui {
namespace {

void fail_script_line(ScriptRunner& r, const ScriptCommand& c, const std::string& message) {
  r.failed = r.done = true;
  r.failure = "script line " + std::to_string(c.line) + " (" + c.name + "): " + message;
}

// Says when the limits were scaled, so a failure under a sanitizer reads right.
std::string scale_note(const ScriptRunner& r) {
  if (r.wait_scale == 1) return "";
  return " (limits × " + std::to_string(r.wait_scale) + ": ATTNLAB_SCRIPT_WAIT_SCALE)";
}

// "script line 12: wait-idle 3.4 s of its 60 s": how close each wait came to its limit, the
// data the scripts' limits are set from (each at least 10x its median, docs/GUI.md).
void log_wait(const ScriptRunner& r, double now, double deadline) {
  if (!r.log_waits || r.next == 0) return;
  const ScriptCommand& c = r.commands[r.next - 1];
  std::fprintf(stderr, "attnlab: script line %d: %s %.1f s of its %.0f s\n", c.line, c.name.c_str(),
               now - r.wait_started, deadline - r.wait_started);
}

}  // namespace

int parse_script_wait_scale(const std::string& text) {
  // Whole numbers only: the test scripts multiply their own shell timeouts by it too.
  const bool digits = !text.empty() && text.size() <= 4 &&
                      text.find_first_not_of("0123456789") == std::string::npos;
  const int scale = digits ? std::stoi(text) : 0;
  if (scale < 1 || scale > 1000)
    throw std::invalid_argument("ATTNLAB_SCRIPT_WAIT_SCALE: '" + text +
                                "' is not a whole number from 1 to 1000 (the factor for "
                                "every wait-idle and wait-job limit)");
  return scale;
}

int script_wait_scale_from_env() {
  const char* value = std::getenv("ATTNLAB_SCRIPT_WAIT_SCALE");
  return value == nullptr || *value == '\0' ? 1 : parse_script_wait_scale(value);
}

void step_script(ScriptRunner& r, GuiState& state, bool idle, double now,
                 const std::string& running_job) {
  if (!r.active()) return;
  if (r.frames_left > 0) {
    --r.frames_left;
    return;
  }
  if (r.waiting_idle) {
    if (!idle) {
      if (now > r.idle_deadline) {
        fail_script_line(r, r.commands[r.next - 1],
                         "the workers were still busy when the wait ran out" + scale_note(r));
      }
      return;
    }
    r.waiting_idle = false;
    log_wait(r, now, r.idle_deadline);
  }
  if (!r.waiting_job.empty()) {
    if (running_job.find(r.waiting_job) == std::string::npos) {
      if (now > r.job_deadline)
        fail_script_line(
            r, r.commands[r.next - 1],
            "no job '" + r.waiting_job + "' ran before the wait ran out" + scale_note(r));
      return;
    }
    r.waiting_job.clear();
    log_wait(r, now, r.job_deadline);
  }
  while (r.next < r.commands.size() && !r.done) {
    const ScriptCommand& c = r.commands[r.next++];
    try {
      ScriptContext context{r, state, idle, now, running_job};
      if (!script_command(c.name).run(context, c)) return;
    } catch (const std::exception& e) {
      fail_script_line(r, c, e.what());
      return;
    }
  }
  if (r.next >= r.commands.size()) r.done = true;
}

}  // namespace attnlab::gui
