// choose_model / load_chosen_model: see model_source.h.
#include "app/session/model_source.h"

#include <ATen/ATen.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include "app/session/predictions.h"
#include "core/analysis/export.h"
#include "core/io/tensor_file.h"
#include "core/io/torch_bridge.h"
#include "models/checkpoint_loading.h"
#include "models/checkpoint_recognition.h"
#include "models/hf_layout.h"
#include "models/image_text.h"
#include "models/model_registry.h"
#include "models/presets.h"
#include "models/zero_shot_head.h"

namespace attnlab::session {

CheckpointConfig checkpoint_config(const std::string& checkpoint, const std::string& preset,
                                   const std::string& config_path, const std::string& key) {
  if (!config_path.empty() && !preset.empty())
    throw ModelChoiceError("give either --config or --preset, not both");
  if (!config_path.empty()) return {models::config_from_file(config_path), "", "", nullptr};
  if (!preset.empty()) return {models::find_preset(preset).config, preset, "", nullptr};
  nlohmann::json metadata_names;  // class names a config-less file's metadata may carry
  io::TensorFile file = io::read_tensor_file(checkpoint);  // parsed once: recognition reuses it
  if (file.metadata.count("arch"))
    return {models::config_from_metadata(file.metadata), "", "", nullptr};
  if (auto it = file.metadata.find("class_names"); it != file.metadata.end())
    metadata_names = nlohmann::json::parse(it->second, nullptr, false);
  // A transformers model folder: its config.json beside the weights.
  const std::filesystem::path hf = std::filesystem::path(checkpoint).parent_path() / "config.json";
  if (std::filesystem::is_regular_file(hf)) {
    nlohmann::json j = nlohmann::json::parse(std::ifstream(hf), nullptr, false);
    if (models::is_hf_config(j))
      return {models::config_from_hf(j), "", "read " + hf.string() + " (transformers config)",
              nullptr};
  }
  auto w = std::make_shared<models::CheckpointWeights>(
      models::read_checkpoint_weights(std::move(file), key));
  const models::Recognition r =
      models::recognise_weights(models::shapes_of(w->tensors), w->architecture, checkpoint);
  // What the reader did is part of what was recognised ("recognised as clip_vit_b16; a
  // whole CLIP model: opened as its image tower ...").
  std::string recognition = r.summary();
  for (const std::string& note : w->notes) recognition += "; " + note;
  CheckpointConfig found{r.config, r.exact ? r.preset : "", recognition, std::move(w)};
  if (metadata_names.is_array()) found.config["class_names"] = metadata_names;
  return found;
}

nlohmann::json config_for_checkpoint(const std::string& checkpoint, const std::string& preset,
                                     const std::string& config_path, const std::string& key) {
  return checkpoint_config(checkpoint, preset, config_path, key).config;
}

namespace {

// The SHA-256 of `path` on a thread of its own at the lowest priority: the forward passes
// keep both cores, and the hash fills the time they leave (at normal priority it competed
// with the first forward pass for a core).
std::shared_future<std::string> hash_in_background(const std::string& path) {
  return std::async(std::launch::async,
                    [path] {
                      ::setpriority(PRIO_PROCESS, pid_t(::syscall(SYS_gettid)), 19);
                      return analysis::sha256_file(path);
                    })
      .share();
}

}  // namespace

std::vector<std::string> split_prompts(const std::string& text, char separator) {
  std::vector<std::string> prompts;
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find(separator, start);
    if (end == std::string::npos) end = text.size();
    std::string piece = text.substr(start, end - start);
    if (!piece.empty() && piece.back() == '\r') piece.pop_back();
    if (piece.find_first_not_of(" \t") != std::string::npos) prompts.push_back(piece);
    start = end + 1;
  }
  return prompts;
}

ModelChoice choose_model(const ModelRequest& request) {
  ModelChoice c;
  c.model_arg = request.model;
  c.preset = request.preset;
  const std::string& config_path = request.config_path;
  c.checkpoint = request.checkpoint;
  c.key = request.key;
  c.random_init = request.random_init;
  if (!c.preset.empty() && !config_path.empty())
    throw ModelChoiceError("give either --preset or --config, not both");
  if (!c.model_arg.empty()) {
    if (models::preset_named(c.model_arg)) {
      if (!c.preset.empty() && c.preset != c.model_arg)
        throw ModelChoiceError("--model " + c.model_arg + " and --preset " + c.preset +
                               " disagree");
      c.preset = c.model_arg;
    } else if (std::filesystem::exists(c.model_arg)) {
      if (!c.checkpoint.empty())
        throw ModelChoiceError("--model already names the checkpoint " + c.model_arg);
      c.checkpoint = c.model_arg;
      if (std::filesystem::is_directory(c.model_arg)) {  // a transformers model folder
        c.checkpoint = models::hf_folder_weights(c.model_arg);
        if (c.checkpoint.empty())
          throw ModelChoiceError("the folder " + c.model_arg +
                                 " holds no model.safetensors or pytorch_model.bin");
      }
    } else {
      throw ModelChoiceError("--model '" + c.model_arg +
                             "' is neither a preset (see attnlab presets) nor an existing file");
    }
  }
  if (c.random_init && !c.checkpoint.empty())
    throw ModelChoiceError("--random-init and a checkpoint exclude each other");
  if (c.preset.empty() && config_path.empty() && c.checkpoint.empty() && !c.random_init)
    throw ModelChoiceError("name a model: --model PRESET|CHECKPOINT");
  if (c.checkpoint.empty() && !c.random_init)
    throw ModelChoiceError(
        "preset " + c.preset +
        " carries a config, not weights: give --checkpoint FILE (or --random-init "
        "to analyse untrained weights)");
  if (c.random_init && c.preset.empty() && config_path.empty())
    throw ModelChoiceError("--random-init needs a config: --model PRESET or --config JSON");
  c.hash_checkpoint = request.hash_checkpoint;
  if (!c.checkpoint.empty()) {
    // Before the file is parsed: the hash runs on the core the parser leaves idle.
    if (c.hash_checkpoint) c.checkpoint_sha256 = hash_in_background(c.checkpoint);
    CheckpointConfig found = checkpoint_config(c.checkpoint, c.preset, config_path, c.key);
    c.config = std::move(found.config);
    c.recognition = found.recognition;
    c.read_weights = std::move(found.weights);
    if (!found.recognition.empty()) c.preset = found.preset;
  } else {
    c.config = config_path.empty() ? models::find_preset(c.preset).config
                                   : models::config_from_file(config_path);
  }
  c.preprocessing = c.preset.empty() ? models::default_preprocessing(c.config)
                                     : models::find_preset(c.preset).preprocessing;
  if (!request.img_size.empty()) {
    if (request.img_size.size() != 2) throw ModelChoiceError("--img-size takes H or H,W");
    const int64_t h = request.img_size[0], w = request.img_size[1];
    c.config = models::config_at_size(c.config, h, w, request.pos_interpolation);
    c.preprocessing = models::preprocessing_at_size(c.config, c.preprocessing, h, w);
    c.input_size = request.img_size;
  }
  // --merge replaces the checkpoint's own r (tome_vit's alias "r" included); make_backbone
  // checks the family.
  if (request.merge >= 0) {
    c.config.erase("r");
    c.config["tome_r"] = request.merge;
  }
  if (!request.class_names_path.empty()) {
    c.class_names_path = request.class_names_path;
    c.class_names = read_class_names(request.class_names_path);
  }
  if (!request.prompts.empty()) {
    if (!request.class_names_path.empty())
      throw ModelChoiceError("--text and --class-names: the prompts are the classes, give one");
    if (!request.prompt_templates.empty())
      throw ModelChoiceError(
          "--prompt-template goes with --class-names; --text is used as written");
    c.class_names = request.prompts;
    c.class_names_path = "the --text prompts";
    c.prompt_templates = {"{}"};
  }
  if (!request.prompt_templates.empty()) {
    if (request.class_names_path.empty())
      throw ModelChoiceError("--prompt-template goes with --class-names (the classes it names)");
    for (const auto& t : request.prompt_templates) {
      try {
        models::format_prompt(t, "x");
      } catch (const models::ModelError& e) {
        throw ModelChoiceError(std::string("--prompt-template: ") + e.what());
      }
    }
    c.prompt_templates = request.prompt_templates;
  }
  c.tag = !c.checkpoint.empty() ? std::filesystem::path(c.checkpoint).stem().string()
          : !c.preset.empty()   ? c.preset + "_random"
                                : std::filesystem::path(config_path).stem().string() + "_random";
  if (std::filesystem::is_directory(c.model_arg)) {  // a transformers folder: its name
    std::filesystem::path folder = std::filesystem::path(c.model_arg).lexically_normal();
    if (!folder.has_filename()) folder = folder.parent_path();  // "dir/"
    c.tag = folder.filename().string();
  }
  return c;
}

std::vector<std::string> model_class_names(const ModelChoice& choice, const nlohmann::json& config,
                                           int64_t classes) {
  if (!choice.class_names.empty())
    return checked_class_names(choice.class_names, classes, choice.class_names_path);
  return class_names(config, classes);
}

ModelChoice model_entry_choice(const std::string& entry, const std::string& preset) {
  return choose_model(model_entry_request(entry, preset));
}

ModelRequest model_entry_request(const std::string& entry, const std::string& preset) {
  ModelRequest r;
  const std::filesystem::path path(entry);
  if (path.extension() == ".json" && std::filesystem::is_regular_file(path)) {
    r.config_path = entry;
    r.random_init = true;
  } else {
    r.model = entry;
  }
  r.preset = preset;
  return r;
}

ModelChoice with_checkpoint(ModelChoice base, const std::string& checkpoint) {
  base.checkpoint = checkpoint;
  base.read_weights.reset();  // another file's tensors
  base.checkpoint_sha256 =
      base.hash_checkpoint ? hash_in_background(checkpoint) : std::shared_future<std::string>();
  base.random_init = false;
  base.tag = std::filesystem::path(checkpoint).stem().string();
  return base;
}

ReadyModel load_chosen_model(const ModelChoice& choice, const runtime::ComputeTarget& target) {
  ReadyModel r;
  if (choice.random_init) {
    at::manual_seed(0);  // the same untrained weights on every run
    r.model = models::make_backbone(choice.config);
    r.config = choice.config;
  } else {
    // The tensors recognition read, once, when they are this file's; else the file.
    const auto& read = choice.read_weights;
    models::LoadedModel m =
        read && read->path == choice.checkpoint && !read->tensors.empty()
            ? models::load_model(choice.config, std::exchange(*read, models::CheckpointWeights{}))
            : models::load_model(choice.config, choice.checkpoint, choice.key);
    r.model = m.model;
    r.config = m.config;
  }
  r.model->eval();
  std::vector<std::string> non_finite;
  {
    at::NoGradGuard no_grad;
    for (const auto& p : r.model->named_parameters())
      if (io::has_non_finite(p.value())) non_finite.push_back(p.key());
    for (const auto& b : r.model->named_buffers())
      if (io::has_non_finite(b.value())) non_finite.push_back(b.key());
  }
  if (!non_finite.empty())
    r.warnings.push_back(std::to_string(non_finite.size()) +
                         " weight tensor(s) hold NaN or Inf (first: " + non_finite.front() +
                         "): the model's outputs will not be finite");
  r.model->to(target.device);
  // A model that reads text, given class names: its zero-shot head, from its text tower at
  // fp32 before a bf16/fp16 cast, and after a float64 one (a float64 run is float64 all
  // through: the cross-world test compares it to 1e-11).
  const auto add_class_head = [&] {
    models::ImageTextModel* text = models::image_text_model(*r.model);
    if (!text || choice.class_names.empty()) return;
    const models::ZeroShotHead head = models::make_zero_shot_head(
        *text, choice.class_names,
        choice.prompt_templates.empty() ? models::default_prompt_templates()
                                        : choice.prompt_templates);
    text->set_class_head(head.weights);
    r.notes.push_back(head.note());
    r.config["num_classes"] = int64_t(choice.class_names.size());  // what every reader asks
  };
  const bool head_at_fp32 = target.dtype != at::kDouble;
  if (head_at_fp32) add_class_head();
  if (target.reduced()) r.model->set_precision(target.dtype);
  if (!head_at_fp32) add_class_head();
  r.describe = {{"arch", models::get_string(r.config, "arch", "model", "")},
                {"config", r.config},
                {"preset", choice.preset},
                {"preprocessing", choice.preprocessing.describe()},
                {"preprocessing_resize_short", choice.preprocessing.resize_short},
                {"preprocessing_crop", choice.preprocessing.crop},
                {"dtype", runtime::dtype_name(target.dtype)}};
  if (target.reduced())
    r.describe["precision_note"] =
        "weights and forward at " + runtime::dtype_name(target.dtype) +
        "; the analyses read its results as float64 on the host, and SVD (rank, map_rank), "
        "FFT (spectra) and CKA run in fp32 or better (ranks then count the forward's "
        "rounding: use fp32 for ranks)";
  if (!choice.recognition.empty()) r.describe["recognised"] = choice.recognition;
  if (!r.warnings.empty()) r.describe["warnings"] = r.warnings;
  if (!r.notes.empty()) r.describe["notes"] = r.notes;
  if (!choice.input_size.empty()) {
    r.describe["input_size"] = choice.input_size;
    r.describe["pos_embed_interpolation"] =
        r.config.value("pos_embed_interpolation", "none (no position embedding to resample)");
  }
  if (choice.random_init) {
    r.describe["checkpoint"] = nullptr;
    r.describe["weights"] = "random initialisation (no checkpoint), at::manual_seed(0)";
  } else {
    r.describe["checkpoint"] = {{"path", std::filesystem::absolute(choice.checkpoint).string()},
                                {"sha256", nullptr},
                                {"bytes", std::filesystem::file_size(choice.checkpoint)},
                                {"container_key", choice.key}};
    r.checkpoint_sha256 = choice.checkpoint_sha256.valid() ? choice.checkpoint_sha256
                                                           : hash_in_background(choice.checkpoint);
  }
  return r;
}

nlohmann::json ReadyModel::description() const {
  nlohmann::json d = describe;
  if (checkpoint_sha256.valid() && d["checkpoint"].is_object())
    d["checkpoint"]["sha256"] = checkpoint_sha256.get();
  return d;
}

}  // namespace attnlab::session
