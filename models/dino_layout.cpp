// See dino_layout.h.
#include "models/dino_layout.h"

#include <ATen/ATen.h>

#include <regex>
#include <utility>

namespace attnlab::models {

namespace {

// The teacher first: it is what DINO's and DINOv2's evaluations load (checkpoint_key
// "teacher"); a file of one network has it under backbone.* alone.
const char* const kBackbonePrefixes[] = {"teacher.backbone.", "backbone.", "student.backbone."};

bool has_key(const nn::TensorMap& tensors, const std::string& key) {
  return tensors.count(key) > 0;
}

}  // namespace

bool is_dino_training_layout(const nn::TensorMap& tensors) {
  for (const char* prefix : kBackbonePrefixes)
    if (has_key(tensors, std::string(prefix) + "cls_token")) return true;
  return false;
}

DinoBackbone dino_training_backbone(nn::TensorMap tensors) {
  DinoBackbone out;
  for (const char* prefix : kBackbonePrefixes)
    if (has_key(tensors, std::string(prefix) + "cls_token")) {
      out.taken = prefix;
      break;
    }
  // DINOv2's BlockChunk: blocks.<chunk>.<index>.rest, the index global (earlier indices of
  // a chunk are Identity placeholders with no weights).
  const std::regex chunked(R"(^blocks\.\d+\.(\d+)\.(.*)$)");
  std::smatch m;
  for (auto& [name, t] : tensors) {
    if (out.taken.empty() || name.rfind(out.taken, 0) != 0) {
      ++out.left_out;
      continue;
    }
    std::string own = name.substr(out.taken.size());
    if (std::regex_match(own, m, chunked)) {
      own = "blocks." + m[1].str() + "." + m[2].str();
      out.unchunked = true;
    }
    out.tensors[own] = std::move(t);
  }
  return out;
}

std::string DinoBackbone::note() const {
  const std::string network = taken.rfind("student", 0) == 0 ? "student" : "teacher";
  return "a DINO / DINOv2 training checkpoint: opened as its " + network + "'s backbone (" + taken +
         "*); " + std::to_string(left_out) +
         " tensors of the projection heads and the other network are left out" +
         (unchunked ? "; its chunked blocks (blocks.<chunk>.<index>) read as blocks.<index>" : "");
}

}  // namespace attnlab::models
