// Workspace files from and to the GUI; see workspace_io.h.
#include "app/gui/workspace/workspace_io.h"

#include <algorithm>

#include "app/gui/workspace/model_options.h"
#include "app/gui/workspace/workspace.h"
#include "app/gui/workspace/workspace_file.h"

namespace attnlab::gui {

bool save_workspace(const Workspace& open, const ViewState& view, const std::string& path,
                    std::string* message) {
  WorkspaceFile ws;
  for (const ModelSlot& m : open.models)
    ws.models.push_back({m.arg, m.options.preset, m.options.img_size, m.options.class_names_path,
                         m.options.merge, m.options.prompts});
  for (const ImageSlot& im : open.images) ws.images.push_back({im.path, im.edits});
  ws.model = view.model;
  ws.image = view.image;
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

bool open_workspace(Workspace& open, ViewState& view, const DeviceState& device, LoadWorker& loader,
                    ComputeWorker& compute, const std::string& path, std::string* message) {
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
    options.merge = m.merge;
    options.prompts = m.prompts;
    add_model(open, device, compute, m.arg, &options);
    models.push_back(int(open.models.size()) - 1);
  }
  for (const WorkspaceImage& im : ws.images) {
    const int index = add_image(open, loader, im.path);  // one already open is reused
    ImageSlot& slot = open.images[size_t(index)];
    if (slot.edits != im.edits) {
      slot.edits = im.edits;
      // Each saved edit is a stroke of its own: Undo steps back through them one by one.
      slot.strokes.clear();
      for (size_t k = 0; k < slot.edits.size(); ++k) slot.strokes.push_back(k);
      ++*slot.edits_version;
    }
    images.push_back(index);
  }
  if (ws.model >= 0 && ws.model < int(models.size())) view.model = models[size_t(ws.model)];
  if (ws.image >= 0 && ws.image < int(images.size())) view.image = images[size_t(ws.image)];
  *message = "opened the workspace " + path + " (" + std::to_string(models.size()) + " models, " +
             std::to_string(images.size()) + " images)";
  return true;
}

}  // namespace attnlab::gui
