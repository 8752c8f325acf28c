// Loading checkpoints into backbones: the container rules, fp16 weights widened to float32,
// and strict refusals that name every missing, unexpected and mis-shaped key — and say
// when the keys belong to another architecture than the model's.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdio>

#include "core/io/safetensors.h"
#include "core/io/torch_bridge.h"
#include "models/checkpoint_loading.h"
#include "models/model_registry.h"
#include "tests/support/fixtures.h"
#include "tests/support/float_compare.h"
#include "tests/support/temp_path.h"

namespace attnlab::testing {
namespace {

std::string fixture(const std::string& file) {
  return parity_dir() + "/" + file;
}

// Writes `tensors` as a flat safetensors file and returns its path.
std::string write_weights(const nn::TensorMap& tensors, const std::string& name) {
  io::TensorDict dict;
  for (const auto& [k, v] : tensors) dict.add(k, io::from_torch(v));
  const std::string path = unique_temp_path(name);
  io::write_safetensors(path, dict);
  return path;
}

std::string refusal(const std::string& path, const std::string& config_name) {
  auto model = models::make_backbone(models::config_from_file(fixture(config_name)));
  try {
    models::load_checkpoint(*model, path);
  } catch (const nn::StateLoadError& e) {
    return e.what();
  }
  return "";
}

TEST(CheckpointLoading, PthAndSafetensorsGiveTheSameWeights) {
  const auto pth = models::read_checkpoint_weights(fixture("ravlt_mini.pth"));
  const auto st = models::read_checkpoint_weights(fixture("ravlt_mini.safetensors"));
  EXPECT_EQ(pth.source_key, "model");
  EXPECT_EQ(st.source_key, "");
  EXPECT_EQ(pth.architecture, "ravlt");
  ASSERT_EQ(pth.tensors.size(), st.tensors.size());
  for (const auto& [k, v] : st.tensors) EXPECT_TRUE(at::equal(pth.tensors.at(k), v)) << k;
}

TEST(CheckpointLoading, HalfPrecisionWeightsLoadIntoFloat32) {
  auto weights = models::read_checkpoint_weights(fixture("deit_mini.safetensors")).tensors;
  nn::TensorMap half;
  for (const auto& [k, v] : weights) half[k] = v.to(at::kHalf);
  const std::string path = write_weights(half, "deit_mini_fp16.safetensors");
  const auto loaded = models::read_checkpoint_weights(path);
  std::remove(path.c_str());
  for (const auto& [k, v] : loaded.tensors) {
    EXPECT_EQ(v.scalar_type(), at::kFloat) << k;
    EXPECT_TRUE(at::equal(v, half.at(k).to(at::kFloat))) << k;
  }
}

// Loading from a map that is handed over: each parameter takes over its tensor's memory
// instead of a copy (the weights exist once), except where it cannot — a non-contiguous
// tensor, or a storage already taken by another parameter (tying the two would let one's
// training change the other) — where it copies. The model computes what a copying load
// gives, and the map is left empty.
TEST(CheckpointLoading, AHandedOverMapIsAdoptedWhereItCanBeAndCopiedElsewhere) {
  const nn::TensorMap weights = models::read_checkpoint_weights(fixture("deit_mini.pth")).tensors;
  const auto config = models::config_from_file(fixture("deit_mini.config.json"));
  nn::TensorMap handed;
  for (const auto& [k, v] : weights) handed[k] = v.clone();
  const std::string transposed = "head.weight", tied = "blocks.0.attn.proj.bias",
                    tied_to = "blocks.0.mlp.fc2.bias";
  handed[transposed] = weights.at(transposed).t().contiguous().t();  // not contiguous
  ASSERT_FALSE(handed[transposed].is_contiguous());
  handed[tied_to] = handed[tied];  // two keys, one storage (both biases of dim)
  std::map<std::string, const void*> memory;
  for (const auto& [k, v] : handed) memory[k] = v.data_ptr();

  auto copied = models::make_backbone(config);
  nn::load_state(*copied, handed);  // a const map: copies
  auto adopted = models::make_backbone(config);
  nn::load_state(*adopted, std::move(handed));
  EXPECT_TRUE(handed.empty());
  int shared = 0;
  for (const auto& p : adopted->named_parameters()) {
    const bool same_memory = p.value().data_ptr() == memory.at(p.key());
    if (p.key() == transposed) {
      EXPECT_FALSE(same_memory) << p.key();
    }
    shared += same_memory;
    EXPECT_TRUE(at::equal(p.value(), copied->named_parameters()[p.key()])) << p.key();
  }
  EXPECT_NE(adopted->named_parameters()[tied].data_ptr(),
            adopted->named_parameters()[tied_to].data_ptr());
  EXPECT_EQ(shared, int(adopted->named_parameters().size()) - 2);
  const at::Tensor x = at::randn({1, 3, 224, 224});
  adopted->eval(), copied->eval();
  at::NoGradGuard no_grad;
  EXPECT_TRUE(at::equal(adopted->run(x).logits, copied->run(x).logits));
}

TEST(CheckpointLoading, RefusalsNameEveryMissingUnexpectedAndMisShapedKey) {
  auto weights = models::read_checkpoint_weights(fixture("deit_mini.safetensors")).tensors;
  weights.erase("blocks.1.norm2.bias");
  weights["blocks.1.extra.weight"] = at::zeros({3});
  weights["head.weight"] = at::zeros({11, 64});
  const std::string path = write_weights(weights, "deit_mini_broken.safetensors");
  const std::string msg = refusal(path, "deit_mini.config.json");
  std::remove(path.c_str());
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("1 missing:\n    blocks.1.norm2.bias"), std::string::npos) << msg;
  EXPECT_NE(msg.find("1 unexpected:\n    blocks.1.extra.weight"), std::string::npos) << msg;
  EXPECT_NE(msg.find("head.weight: checkpoint (11, 64), model (10, 64)"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("look like"), std::string::npos) << "same family: no family remark";
}

TEST(CheckpointLoading, AnotherArchitecturesWeightsAreRefusedAsSuch) {
  const std::string msg = refusal(fixture("deit_mini.pth"), "ravlt_mini.config.json");
  EXPECT_NE(msg.find("its keys look like a vit checkpoint, the model is ravlt"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("layers.0.blocks.0.attn.qkvo.weight"), std::string::npos) << msg;
  EXPECT_NE(msg.find("cls_token"), std::string::npos) << msg;
}

TEST(CheckpointLoading, AnAlphaAblationLitv2LoadsWithTheHeadSplitOfItsWeights) {
  // A LITv2 whose stage-3 HiLo has 0 Lo-Fi heads (all Hi-Fi) although its config's alpha
  // says floor(2 · 0.9) = 1: load_model reads the split from the l_q / h_qkv shapes.
  auto config = models::config_from_file(fixture("litv2_mini.config.json"));
  auto ablation = config;
  ablation["lofi_heads"] = {-1, -1, 0, -1};
  auto trained = models::make_backbone(ablation);
  nn::TensorMap tensors;
  for (const auto& p : trained->named_parameters()) tensors[p.key()] = p.value().detach();
  for (const auto& b : trained->named_buffers()) tensors[b.key()] = b.value().detach();
  ASSERT_FALSE(tensors.count("layers.2.blocks.0.attn.l_q.weight"));
  const std::string path = write_weights(tensors, "litv2_ablation.safetensors");
  EXPECT_THROW(models::load_checkpoint(*models::make_backbone(config), path), nn::StateLoadError);
  const auto loaded = models::load_model(config, path);
  std::remove(path.c_str());
  EXPECT_EQ(loaded.config["lofi_heads"][2], 0);
  trained->eval();
  at::NoGradGuard no_grad;
  const at::Tensor x = at::randn({1, 3, 224, 224});
  // Two instances with the same weights, two runs: equal up to reordering (float_compare.h).
  EXPECT_TRUE(agree_up_to_reordering(loaded.model->run(x).logits, trained->run(x).logits));
}

}  // namespace
}  // namespace attnlab::testing
