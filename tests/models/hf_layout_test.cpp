// Hugging Face transformers ViT / DeiT checkpoints (issue 22, "More layouts"): the deit_mini
// parity fixture converted in the test to transformers' layout (query/key/value split,
// their names, config.json with id2label) loads through the same path as any checkpoint
// and gives the logits of the fixture's own layout; layer_norm_eps is honoured; a
// distilled DeiT "with teacher" maps both classifiers; what has no timm equivalent is
// refused with the reason.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/module.h>

#include <filesystem>
#include <fstream>

#include "core/io/safetensors.h"
#include "core/io/torch_bridge.h"
#include "models/backbone.h"
#include "models/checkpoint_loading.h"
#include "models/hf_layout.h"
#include "models/model_registry.h"
#include "models/presets.h"
#include "tests/support/fixtures.h"
#include "tests/support/temp_path.h"

namespace attnlab::testing {
namespace {

using models::Json;

// timm keys → transformers keys (`prefix` "vit." or "deit."), qkv split in three.
nn::TensorMap to_transformers(const nn::TensorMap& timm, const std::string& prefix) {
  const std::map<std::string, std::string> top = {
      {"cls_token", "embeddings.cls_token"},
      {"dist_token", "embeddings.distillation_token"},
      {"pos_embed", "embeddings.position_embeddings"},
      {"patch_embed.proj.weight", "embeddings.patch_embeddings.projection.weight"},
      {"patch_embed.proj.bias", "embeddings.patch_embeddings.projection.bias"},
      {"norm.weight", "layernorm.weight"},
      {"norm.bias", "layernorm.bias"}};
  const std::map<std::string, std::string> block = {{"norm1.", "layernorm_before."},
                                                    {"norm2.", "layernorm_after."},
                                                    {"attn.proj.", "attention.output.dense."},
                                                    {"mlp.fc1.", "intermediate.dense."},
                                                    {"mlp.fc2.", "output.dense."}};
  const bool teacher = timm.count("head_dist.weight") > 0;
  nn::TensorMap out;
  for (const auto& [name, t] : timm) {
    if (auto it = top.find(name); it != top.end()) {
      out[prefix + it->second] = t;
    } else if (name.rfind("head", 0) == 0) {
      const bool dist = name.rfind("head_dist.", 0) == 0;
      const std::string leaf = name.substr(name.find('.') + 1);
      out[(dist      ? "distillation_classifier."
           : teacher ? "cls_classifier."
                     : "classifier.") +
          leaf] = t;
    } else {  // blocks.i.<rest>
      const size_t dot = name.find('.', 7);
      const std::string layer = prefix + "encoder.layer." + name.substr(7, dot - 7) + ".";
      const std::string rest = name.substr(dot + 1);
      if (rest.rfind("attn.qkv.", 0) == 0) {
        const auto parts = t.chunk(3, 0);
        const std::string leaf = rest.substr(9);
        out[layer + "attention.attention.query." + leaf] = parts[0].clone();
        out[layer + "attention.attention.key." + leaf] = parts[1].clone();
        out[layer + "attention.attention.value." + leaf] = parts[2].clone();
        continue;
      }
      for (const auto& [from, to] : block)
        if (rest.rfind(from, 0) == 0) out[layer + to + rest.substr(from.size())] = t;
    }
  }
  return out;
}

void write_safetensors(const std::string& path, const nn::TensorMap& tensors) {
  io::TensorDict dict;
  for (const auto& [name, t] : tensors) dict.add(name, io::from_torch(t.contiguous()));
  io::write_safetensors(path, dict, {});
}

TEST(TransformersLayout, DeitMiniInTransformersLayoutGivesTheSameLogits) {
  const std::string base = parity_dir() + "/deit_mini";
  const Json ours = models::config_from_file(base + ".config.json");
  const auto original = models::read_checkpoint_weights(base + ".safetensors");
  const TempDir dir("attnlab_hf");
  const auto hf = to_transformers(original.tensors, "vit.");
  ASSERT_TRUE(models::is_hf_vit_layout(hf));
  write_safetensors(dir.file("model.safetensors"), hf);
  Json labels = Json::object();
  for (int i = 0; i < 10; ++i) labels[std::to_string(i)] = "class " + std::to_string(i);
  const Json hf_config = {
      {"model_type", "vit"},      {"architectures", {"ViTForImageClassification"}},
      {"hidden_size", 64},        {"num_hidden_layers", 2},
      {"num_attention_heads", 2}, {"intermediate_size", 256},
      {"image_size", 224},        {"patch_size", 16},
      {"hidden_act", "gelu"},     {"layer_norm_eps", ours["ln_eps"]},
      {"qkv_bias", true},         {"id2label", labels}};
  std::ofstream(dir.file("config.json")) << hf_config.dump(2);

  const Json config = models::config_from_file(dir.file("config.json"));
  EXPECT_EQ(config["class_names"][3], "class 3");
  EXPECT_EQ(config["num_classes"], 10);
  const auto loaded = models::load_model(config, dir.file("model.safetensors"));
  EXPECT_EQ(loaded.weights_info.layout, "transformers");
  auto reference = models::make_backbone(ours);
  models::load_checkpoint(*reference, base + ".safetensors");
  reference->eval();
  const at::Tensor input = nn::read_tensor_map(base + ".expected.safetensors").at("input");
  at::NoGradGuard no_grad;
  // The same weights through the same forward: the concatenated qkv is the fixture's qkv
  // element for element, so the logits are the same computation and agree exactly.
  EXPECT_TRUE(loaded.model->run(input).logits.equal(reference->run(input).logits));

  // layer_norm_eps is honoured: transformers' default 1e-12 gives other logits.
  Json other_eps = hf_config;
  other_eps.erase("layer_norm_eps");
  EXPECT_EQ(models::config_from_hf(other_eps)["ln_eps"], 1e-12);
}

TEST(TransformersLayout, DistilledDeitWithTeacherMapsBothClassifiers) {
  Json config = models::find_preset("deit_tiny_distilled_patch16_224").config;
  config["depth"] = 1;
  config["num_classes"] = 7;
  at::manual_seed(5);
  auto model = models::make_backbone(config);
  model->eval();
  nn::TensorMap timm;
  for (const auto& p : model->named_parameters()) timm[p.key()] = p.value().detach();
  const nn::TensorMap back = models::hf_vit_to_timm(to_transformers(timm, "deit."));
  ASSERT_EQ(back.size(), timm.size());
  for (const auto& [name, t] : timm) {
    ASSERT_TRUE(back.count(name)) << name;
    EXPECT_TRUE(back.at(name).equal(t)) << name;
  }
  const Json hf = {{"model_type", "deit"},
                   {"architectures", {"DeiTForImageClassificationWithTeacher"}},
                   {"hidden_size", 192},
                   {"num_hidden_layers", 1},
                   {"num_attention_heads", 3}};
  EXPECT_EQ(models::config_from_hf(hf)["distilled"], true);

  nn::TensorMap one_head = to_transformers(timm, "deit.");
  one_head.erase("distillation_classifier.weight");
  one_head.erase("distillation_classifier.bias");
  one_head["classifier.weight"] = one_head.at("cls_classifier.weight");
  one_head["classifier.bias"] = one_head.at("cls_classifier.bias");
  one_head.erase("cls_classifier.weight");
  one_head.erase("cls_classifier.bias");
  try {
    models::hf_vit_to_timm(one_head);
    FAIL() << "a DeiT with a distillation token and one classifier was accepted";
  } catch (const models::ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("DeiTForImageClassification"), std::string::npos);
  }
  EXPECT_THROW(models::config_from_hf({{"model_type", "vit"}, {"hidden_act", "gelu_new"}}),
               models::ModelError);
}

}  // namespace
}  // namespace attnlab::testing
