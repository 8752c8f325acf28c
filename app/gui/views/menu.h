// The main menu bar (File: Open image / model, Recent, Export, Quit), its keyboard
// shortcuts, the Open dialog (the desktop's file chooser, native_dialog.h, or where
// there is none the in-app "type a path" popup with its file list) and the Export popup.
// ImGui calls only: main thread, between ImGui::NewFrame() and ImGui::Render().
#pragma once

#include "app/gui/gui_state.h"

namespace attnlab::gui {

// File > Open for `kind`: the desktop's chooser when there is one, else (or with
// `in_app`) the in-app popup; FileKind::Unknown there means "any file, by extension".
// Each reads the state and edits only the dialogs and the frame's requests it is given.
void request_open_dialog(const Workspace& ws, const ViewState& view,
                         const CheckpointPanelState& checkpoint, DialogsState& dialogs,
                         FileKind kind, bool in_app = false);
void handle_shortcuts(const Workspace& ws, const ViewState& view,
                      const CheckpointPanelState& checkpoint, DialogsState& dialogs,
                      FrameRequests& requests);
void draw_main_menu(const Workspace& ws, const ViewState& view, const RecentFiles& recent,
                    const CheckpointPanelState& checkpoint, DialogsState& dialogs,
                    FrameRequests& requests);
void draw_open_dialog(DialogsState& dialogs, FrameRequests& requests);
// Writes the export and says what it wrote (or why not) in the status bar.
void draw_export_dialog(const Workspace& ws, const ViewState& view, const SeriesState& series,
                        const CostState& cost, ExportDialogState& dialog, StatusBarState& status);

}  // namespace attnlab::gui
