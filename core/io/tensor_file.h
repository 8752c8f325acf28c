// One entry point for every tensor file attnlab opens: sniffs the format from the bytes
// (not the extension) and returns the tensors, the metadata and, for PyTorch
// checkpoints, what else the container holds. Used by `attnlab inspect`, the GUI's
// open dialog and the checkpoint loaders.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/io/byte_reader.h"
#include "core/io/raw_tensor.h"

namespace attnlab::io {

enum class FileFormat { Safetensors, TorchZip, Npy, Idx, Unknown };
const char* file_format_name(FileFormat f);

// Decides the format from the first bytes. Legacy (pre-1.6) torch.save files and bare
// pickles are reported as Unknown by this function; read_tensor_file explains them.
FileFormat sniff_format(ByteView head);

// One top-level entry of a checkpoint container (a .pth's outer dict), for display and
// for choosing which state dict to load.
struct ContainerEntry {
  std::string key;
  std::string kind;     // "state dict", "tensor", "int", "float", "str", "dict", "object", ...
  std::string summary;  // e.g. "152 tensors", "300", "argparse.Namespace (skipped)"
  size_t tensor_count = 0;
};

struct TensorFile {
  std::string path;
  FileFormat format = FileFormat::Unknown;
  // Every tensor in the file. For a .pth container, the name is the path through the
  // container, components joined by '.' ("model.blocks.0.attn.qkv.weight").
  TensorDict tensors;
  // Parallel to tensors.entries(): the container key each tensor sits under ("" when the
  // file has no container, i.e. safetensors / npy / IDX, or a .pth that is a bare dict of
  // tensors), and its name below that key.
  std::vector<std::string> container_key;
  std::vector<std::string> name_in_container;
  std::map<std::string, std::string> metadata;  // safetensors __metadata__
  std::vector<ContainerEntry> container;        // .pth top-level entries
  std::vector<std::string> notes;               // things skipped while reading, and why
};

TensorFile read_tensor_file(const std::string& path);
TensorFile parse_tensor_file(ByteView data, const std::string& path);

}  // namespace attnlab::io
