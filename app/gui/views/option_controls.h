// The GUI's controls for the settings the analyses declare (app/session/analysis_options.h):
// one widget per option, chosen by its kind and bounded by its range, labelled with its
// name and explained by its help line on hover. The sidebar's ROLLOUT section shows the
// rollout's switches with it, and its SETTINGS section the options of the current tab's
// analysis; no analysis's setting is written into the GUI by hand.
#pragma once

#include <string>
#include <vector>

#include "app/session/analysis_options.h"

namespace attnlab::gui {

// Draws the options (the in_gui ones) and writes what the user changes into `values`
// (values outside an option's range are refused and the widget shows the last valid one).
// Returns true when a value changed.
bool option_controls(const std::vector<const session::AnalysisOption*>& options,
                     session::OptionValues& values);

// The in_gui options of the analysis whose tab is `tab_id` (declared or read by it), in
// registry order; empty for a tab without such options.
std::vector<const session::AnalysisOption*> tab_options(const std::string& tab_id);
// The in_gui options an analysis declares or reads.
std::vector<const session::AnalysisOption*> analysis_gui_options(const std::string& analysis);

}  // namespace attnlab::gui
