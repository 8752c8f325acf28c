// A classifier's top-k: class names (the config's own, as models trained here record
// them, else ImageNet's for 1000-class models) and the most probable classes of one
// image's logits. Shared by `attnlab classify` and the GUI's Top-5 tab.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace at {
class Tensor;  // only passed by reference here: users of Prediction need no LibTorch headers
}

namespace attnlab::session {

struct Prediction {
  int64_t cls = 0;
  double probability = 0;
  std::string name;  // "" when the classes have no names
};

// One name per class, or empty when neither the config nor ImageNet (for `classes` == 1000)
// names them.
std::vector<std::string> class_names(const nlohmann::json& config, int64_t classes);

// The names a user's file gives (`--class-names FILE`): one per line (blank lines are
// unnamed classes, a final newline adds none), or JSON: a list, or a map from class index
// to name ({"0": "tench", ...}, as Hugging Face's id2label; indices missing from it are
// unnamed). Throws std::runtime_error naming the file and what is wrong (unreadable,
// empty, bad JSON, a key that is not a class index, a name that is not a string).
std::vector<std::string> read_class_names(const std::string& path);
// `names` for a model with `classes` classes; std::runtime_error when the counts differ
// (`source` names where the names came from).
const std::vector<std::string>& checked_class_names(const std::vector<std::string>& names,
                                                    int64_t classes, const std::string& source);

// The k most probable classes of `logits` (classes,) after a softmax, most probable first.
std::vector<Prediction> top_predictions(const at::Tensor& logits,
                                        const std::vector<std::string>& names, int64_t k = 5);

}  // namespace attnlab::session
