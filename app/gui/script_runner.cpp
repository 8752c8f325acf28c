// The GUI script interpreter; see script_runner.h. The commands themselves are the table
// in script_commands.cpp.
#include "app/gui/script_runner.h"

#include "app/gui/script_commands.h"

namespace attnlab::gui {
namespace {

void fail(ScriptRunner& r, const ScriptCommand& c, const std::string& message) {
  r.failed = r.done = true;
  r.failure = "script line " + std::to_string(c.line) + " (" + c.name + "): " + message;
}

}  // namespace

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
        fail(r, r.commands[r.next - 1], "the workers were still busy when the wait ran out");
      }
      return;
    }
    r.waiting_idle = false;
  }
  if (!r.waiting_job.empty()) {
    if (running_job.find(r.waiting_job) == std::string::npos) {
      if (now > r.job_deadline)
        fail(r, r.commands[r.next - 1],
             "no job '" + r.waiting_job + "' ran before the wait ran out");
      return;
    }
    r.waiting_job.clear();
  }
  while (r.next < r.commands.size() && !r.done) {
    const ScriptCommand& c = r.commands[r.next++];
    try {
      ScriptContext context{r, state, idle, now, running_job};
      if (!script_command(c.name).run(context, c)) return;
    } catch (const std::exception& e) {
      fail(r, c, e.what());
      return;
    }
  }
  if (r.next >= r.commands.size()) r.done = true;
}

}  // namespace attnlab::gui
