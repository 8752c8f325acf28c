// Workspace files from and to the GUI; see workspace_io.h.
#include "app/gui/workspace/workspace_io.h"

#include <algorithm>

#include "app/gui/workspace/model_options.h"
#include "app/gui/workspace/workspace.h"
#include "app/gui/workspace/workspace_file.h"

namespace attnlab::gui {

bool save_workspace(const GuiState& state, const std::string& path, std::string* message) {
  WorkspaceFile ws;
  for (const ModelSlot& m : state.models)
    ws.models.push_back({m.arg, m.options.preset, m.options.img_size, m.options.class_names_path});
  for (const ImageSlot& im : state.images) ws.images.push_back({im.path, im.edits});
  ws.model = state.view.model;
  ws.image = state.view.image;
  try {
    write_workspace(path, ws);
  } catch (const std::exception& e) {
    *message = e.what();
    return false;
  }
  *message = "saved the workspace to " + path + " (" + std::to_string(ws.models.size()) +
             " models, " + std::to_string(ws.images.size()) + " images)";
  return true;
}

bool open_workspace(GuiState& state, LoadWorker& loader, ComputeWorker& compute,
                    const std::string& path, std::string* message) {
  WorkspaceFile ws;
  try {
    ws = read_workspace(path);
  } catch (const std::exception& e) {
    *message = e.what();
    return false;
  }
  std::vector<int> models, images;  // where the file's entries went in the workspace
  for (const WorkspaceModel& m : ws.models) {
    ModelOptions options;
    options.preset = m.preset;
    options.img_size = m.img_size;
    options.class_names_path = m.class_names_path;
    add_model(state, compute, m.arg, &options);
    models.push_back(int(state.models.size()) - 1);
  }
  for (const WorkspaceImage& im : ws.images) {
    const int index = add_image(state, loader, im.path);  // one already open is reused
    ImageSlot& slot = state.images[size_t(index)];
    if (slot.edits != im.edits) {
      slot.edits = im.edits;
      // Each saved edit is a stroke of its own: Undo steps back through them one by one.
      slot.strokes.clear();
      for (size_t k = 0; k < slot.edits.size(); ++k) slot.strokes.push_back(k);
      ++*slot.edits_version;
    }
    images.push_back(index);
  }
  if (ws.model >= 0 && ws.model < int(models.size())) state.view.model = models[size_t(ws.model)];
  if (ws.image >= 0 && ws.image < int(images.size())) state.view.image = images[size_t(ws.image)];
  *message = "opened the workspace " + path + " (" + std::to_string(models.size()) + " models, " +
             std::to_string(images.size()) + " images)";
  return true;
}

}  // namespace attnlab::gui
