// What a path the user handed us (dropped on the window, typed in the Open popup) is:
// an image or a model (checkpoint or config), decided by extension. Only routing: the loaders still
// check the bytes, so a misnamed file fails with a clear error instead of being misread.
#pragma once

#include <string>

namespace attnlab::gui {

// Model: a checkpoint or a model config .json; Workspace: a saved workspace (workspace_file.h).
enum class FileKind { Image, Model, Workspace, Unknown };

// .png .jpg .jpeg .bmp .tif .tiff .webp .ppm .pgm .pnm -> Image;
// .pth .pt .safetensors .bin .json -> Model; .attnlab -> Workspace; case-insensitive.
FileKind classify_path(const std::string& path);
// The extension of the file name, lower-cased, with its dot (".png"); "" when none.
std::string lower_extension(const std::string& path);

// Cleans up a typed or pasted path: trims whitespace, strips one pair of surrounding
// quotes (file managers add them when copying), expands a leading "~/" from $HOME.
std::string normalize_user_path(const std::string& typed);

}  // namespace attnlab::gui
