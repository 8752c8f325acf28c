// take_model_choice; see model_options.h.
#include "app/cli/model_options.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

namespace attnlab::cli {
namespace {

// Says on stderr how a checkpoint with no config was recognised (stdout stays the output).
ModelChoice said_recognition(ModelChoice c) {
  if (!c.recognition.empty())
    std::fprintf(stderr, "attnlab: %s: %s\n", c.checkpoint.c_str(), c.recognition.c_str());
  return c;
}

}  // namespace

std::vector<int64_t> parse_img_size(const std::string& text) {
  std::vector<int64_t> hw;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = text.find_first_of(",x", start);
    const std::string part = text.substr(start, end == std::string::npos ? end : end - start);
    char* stop = nullptr;
    const long long v = std::strtoll(part.c_str(), &stop, 10);
    if (part.empty() || *stop != '\0' || v < 1)
      throw UsageError("--img-size takes H or H,W in pixels (got '" + text + "')");
    hw.push_back(v);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (hw.size() == 1) hw.push_back(hw[0]);
  if (hw.size() != 2) throw UsageError("--img-size takes H or H,W in pixels (got '" + text + "')");
  return hw;
}

int64_t take_merge(Args& args) {
  const std::string merge = args.take_option("--merge");
  if (merge.empty()) return -1;
  char* stop = nullptr;
  const long long per_block = std::strtoll(merge.c_str(), &stop, 10);
  if (*stop != '\0' || per_block < 0)
    throw UsageError(
        "--merge takes R, the tokens ToMe merges away in every block (an integer "
        ">= 0; got '" +
        merge + "')");
  return per_block;
}

void take_text_options(Args& args, std::vector<std::string>& prompts,
                       std::vector<std::string>& templates) {
  for (std::string t; !(t = args.take_option("--prompt-template")).empty();) templates.push_back(t);
  for (std::string t; !(t = args.take_option("--text")).empty();) prompts.push_back(t);
  if (const std::string file = args.take_option("--text-file"); !file.empty()) {
    std::ifstream in(file);
    if (!in) throw UsageError("--text-file: cannot read " + file);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::vector<std::string> lines = session::split_prompts(text, '\n');
    if (lines.empty()) throw UsageError("--text-file: " + file + " holds no prompt");
    prompts.insert(prompts.end(), lines.begin(), lines.end());
  }
}

session::ModelRequest take_model_request(Args& args, bool hash_checkpoint) {
  session::ModelRequest r;
  r.hash_checkpoint = hash_checkpoint;
  r.model = args.take_option("--model");
  r.preset = args.take_option("--preset");
  r.config_path = args.take_option("--config");
  r.checkpoint = args.take_option("--checkpoint");
  r.key = args.take_option("--key");
  r.random_init = args.take_flag("--random-init");
  r.class_names_path = args.take_option("--class-names");
  take_text_options(args, r.prompts, r.prompt_templates);
  if (const std::string size = args.take_option("--img-size"); !size.empty())
    r.img_size = parse_img_size(size);
  r.merge = take_merge(args);
  if (const std::string interp = args.take_option("--pos-interpolation"); !interp.empty()) {
    if (r.img_size.empty()) throw UsageError("--pos-interpolation goes with --img-size");
    r.pos_interpolation = interp;
  }
  return r;
}

ModelChoice take_model_choice(Args& args, bool hash_checkpoint) {
  return choose_request(take_model_request(args, hash_checkpoint));
}

nlohmann::json config_for_checkpoint(const std::string& checkpoint, const std::string& preset,
                                     const std::string& config_path, const std::string& key) {
  try {
    const session::CheckpointConfig c =
        session::checkpoint_config(checkpoint, preset, config_path, key);
    if (!c.recognition.empty())
      std::fprintf(stderr, "attnlab: %s: %s\n", checkpoint.c_str(), c.recognition.c_str());
    return c.config;
  } catch (const session::ModelChoiceError& e) {
    throw UsageError(e.what());
  }
}

ReadyModel load_ready_model(const ModelChoice& choice, const runtime::ComputeTarget& target) {
  ReadyModel r = session::load_chosen_model(choice, target);
  for (const auto& w : r.warnings)
    std::fprintf(stderr, "attnlab: warning: %s: %s\n", choice.tag.c_str(), w.c_str());
  for (const auto& n : r.notes)
    std::fprintf(stderr, "attnlab: %s: %s\n", choice.tag.c_str(), n.c_str());
  if (r.describe.contains("precision_note"))
    std::fprintf(stderr, "attnlab: %s: %s\n", choice.tag.c_str(),
                 r.describe["precision_note"].get<std::string>().c_str());
  return r;
}

ModelChoice choose_request(const session::ModelRequest& request) {
  try {
    return said_recognition(session::choose_model(request));
  } catch (const session::ModelChoiceError& e) {
    throw UsageError(e.what());
  }
}

ModelChoice model_entry_choice(const std::string& entry, const std::string& preset) {
  try {
    return said_recognition(session::model_entry_choice(entry, preset));
  } catch (const session::ModelChoiceError& e) {
    throw UsageError(e.what());
  }
}

void check_dataset_classes(const std::string& spec, int64_t dataset_classes,
                           const ReadyModel& ready) {
  const int64_t classes = ready.config.value("num_classes", int64_t{1000});
  if (dataset_classes > classes)
    throw std::runtime_error(spec + " has " + std::to_string(dataset_classes) +
                             " classes; the model predicts " + std::to_string(classes));
}

data::ImageDataset load_dataset_for(const std::string& spec, const ReadyModel& ready) {
  const int size = static_cast<int>(ready.config.value("img_size", 224));
  data::ImageDataset set = data::load_dataset(spec, size);
  if (set.images.size(2) != size || set.images.size(3) != size)
    throw std::runtime_error(spec + " holds " + std::to_string(set.images.size(3)) + "×" +
                             std::to_string(set.images.size(2)) + " images; the model takes " +
                             std::to_string(size) + "×" + std::to_string(size) +
                             " (a folder:DIR set is resized by the model's preprocessing)");
  check_dataset_classes(spec, set.classes(), ready);
  return set;
}

}  // namespace attnlab::cli
