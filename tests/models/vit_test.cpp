// The ViT family (models/vit.cpp): parity with the reference fixtures deit_mini and
// anchor_deit_mini (weights from .safetensors and .pth, config from .config.json and from
// the safetensors metadata), the official full-size layouts against the manifests,
// Castling-DeiT's layout, "DeiT with attention X" for every registered mechanism, the
// config key mapping, train/eval behaviour and the refusals.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/attention/castling.h"
#include "core/attention/registry.h"
#include "core/io/tensor_file.h"
#include "core/nn/state_loading.h"
#include "models/checkpoint_loading.h"
#include "models/model_config.h"
#include "models/model_registry.h"
#include "models/vit.h"
#include "tests/support/fixtures.h"
#include "tests/support/float_compare.h"
#include "tests/support/parity_outputs.h"

namespace attnlab::testing {
namespace {

using models::Json;
using Layout = std::vector<std::pair<std::string, std::vector<int64_t>>>;

// Every parameter and buffer of a model with its shape, in registration order.
Layout layout_of(torch::nn::Module& m) {
  Layout out;
  for (const auto& p : m.named_parameters()) out.push_back({p.key(), p.value().sizes().vec()});
  for (const auto& b : m.named_buffers()) out.push_back({b.key(), b.value().sizes().vec()});
  return out;
}

int64_t parameter_count(torch::nn::Module& m) {
  int64_t n = 0;
  for (const auto& p : m.parameters()) n += p.numel();
  return n;
}

// One parity run: build from the chosen config source, load the chosen weight file,
// compare logits and every intermediate tensor of the expected file.
void check_parity(const std::string& name, const std::string& weights_ext, bool from_metadata) {
  const std::string base = parity_dir() + "/" + name;
  const Json config =
      from_metadata
          ? models::config_from_metadata(io::read_tensor_file(base + ".safetensors").metadata)
          : models::config_from_file(base + ".config.json");
  auto model = models::make_backbone(config);
  model->eval();
  models::load_checkpoint(*model, base + weights_ext);
  const auto expected = nn::read_tensor_map(base + ".expected.safetensors");
  models::ForwardOptions options;
  options.record_outputs = true;
  const auto result = model->run(expected.at("input"), options);

  const std::string tag = name + weights_ext + (from_metadata ? " (metadata)" : " (config.json)");
  const int compared = expect_recorded_outputs_match(result, expected, tag);
  EXPECT_GE(compared, 5) << tag;
}

void check_parity_all_sources(const std::string& name) {
  for (const std::string ext : {".safetensors", ".pth"})
    for (bool from_metadata : {false, true}) check_parity(name, ext, from_metadata);
}

TEST(VitParity, DeitMini) {
  check_parity_all_sources("deit_mini");
}

TEST(VitParity, AnchorDeitMini) {
  check_parity_all_sources("anchor_deit_mini");
}

// The anchor fixture agrees bit for bit; show that the comparison still sees the dist
// path: with dist_token zeroed the logits move far beyond the tolerance.
TEST(VitParity, AnchorDeitMiniNegativeControl) {
  const std::string base = parity_dir() + "/anchor_deit_mini";
  auto model = models::make_backbone(models::config_from_file(base + ".config.json"));
  model->eval();
  models::load_checkpoint(*model, base + ".safetensors");
  const auto expected = nn::read_tensor_map(base + ".expected.safetensors");
  at::NoGradGuard no_grad;
  model->named_parameters()["dist_token"].zero_();
  EXPECT_GT(max_abs_diff(model->run(expected.at("input")).logits, expected.at("logits")), 1e-3);
}

// Beyond what the fixtures hold: every block, every attention module, the final norm.
TEST(VitParity, RecordsEveryModuleUnderItsStateDictPath) {
  for (const std::string name : {"deit_mini", "anchor_deit_mini"}) {
    auto model =
        models::make_backbone(models::config_from_file(parity_dir() + "/" + name + ".config.json"));
    model->eval();
    models::ForwardOptions options;
    options.record_outputs = true;
    const auto r = model->run(at::randn({1, 3, 224, 224}), options);
    std::set<std::string> keys;
    for (const auto& kv : r.outputs) keys.insert(kv.first);
    std::set<std::string> want = {"out.patch_embed",   "out.blocks.0.attn", "out.blocks.0",
                                  "out.blocks.1.attn", "out.blocks.1",      "out.norm"};
    if (name == "deit_mini") want.insert({"attn.blocks.0", "attn.blocks.1"});
    EXPECT_EQ(keys, want) << name;
    EXPECT_TRUE(model->run(at::randn({1, 3, 224, 224})).outputs.empty()) << name;
  }
}

Layout manifest_layout(const std::string& name, int64_t* num_params) {
  std::ifstream in(shared_dir() + "/fixtures/manifests/" + name + ".json");
  EXPECT_TRUE(in.good()) << name;
  const Json m = Json::parse(in);
  *num_params = m.at("num_params").get<int64_t>();
  Layout out;
  for (const auto& t : m.at("tensors")) {
    const auto key = t.at(0).get<std::string>();
    if (key.size() >= 19 && key.compare(key.size() - 19, 19, "num_batches_tracked") == 0) continue;
    out.push_back({key, t.at(1).get<std::vector<int64_t>>()});
  }
  return out;
}

// num_params in the manifests is the sum of numel over every state-dict tensor; these
// models have no buffers, so it is also the number of parameters. Both are checked.
TEST(VitManifest, OfficialSizesHaveTheManifestKeysShapesOrderAndCount) {
  for (const std::string name :
       {"deit_tiny_patch16_224", "deit_small_patch16_224", "deit_base_patch16_224",
        "anchor_deit_tiny_distilled_patch16_224", "anchor_deit_small_distilled_patch16_224"}) {
    int64_t manifest_params = 0;
    const Layout want = manifest_layout(name, &manifest_params);
    auto model = models::make_backbone(models::vit_official_config(name));
    const Layout got = layout_of(*model);
    EXPECT_EQ(got, want) << name;
    int64_t manifest_sum = 0;
    for (const auto& [key, shape] : want) {
      int64_t n = 1;
      for (auto s : shape) n *= s;
      manifest_sum += n;
    }
    EXPECT_EQ(manifest_sum, manifest_params) << name;
    EXPECT_EQ(parameter_count(*model), manifest_params) << name;
    EXPECT_TRUE(model->named_buffers().is_empty()) << name;
    std::printf("[manifest] %s: %zu tensors, %lld parameters\n", name.c_str(), got.size(),
                static_cast<long long>(parameter_count(*model)));
  }
}

TEST(VitManifest, CastlingDeitTinyIsDeitTinyWithoutQkvBiasAndWithDconv) {
  int64_t unused = 0;
  std::map<std::string, std::vector<int64_t>> want;
  for (const auto& [key, shape] : manifest_layout("deit_tiny_patch16_224", &unused)) {
    if (key.find(".attn.qkv.bias") == std::string::npos) want[key] = shape;
  }
  for (int i = 0; i < 12; ++i)
    want["blocks." + std::to_string(i) + ".attn.dconv.weight"] = {3, 1, 9, 1};
  auto model = models::make_backbone(models::vit_official_config("castling_deit_tiny"));
  std::map<std::string, std::vector<int64_t>> got;
  for (const auto& [key, shape] : layout_of(*model)) got[key] = shape;
  EXPECT_EQ(got, want);
  EXPECT_EQ(model->arch(), "castling_deit");
  EXPECT_EQ(models::vit_official_config("castling_deit_tiny_patch16_224"),
            models::vit_official_config("castling_deit_tiny"));
}

TEST(VitConfig, OfficialConfigNamesAndRegistry) {
  EXPECT_THROW(models::vit_official_config("deit_huge_patch14_224"), models::ModelError);
  EXPECT_THROW(models::vit_official_config("anchor_deit_base_distilled_patch16_224"),
               models::ModelError);
  const auto archs = models::known_archs();
  for (const std::string a : {"vit", "anchor_deit_distilled", "castling_deit"})
    EXPECT_NE(std::find(archs.begin(), archs.end(), a), archs.end()) << a;
}

Json tiny_config(const std::string& mech) {
  const bool grid_only = attention::mechanism_info(mech).needs_grid;
  return {{"arch", "vit"},    {"img_size", 32},    {"patch_size", 8},
          {"embed_dim", 32},  {"depth", 2},        {"num_heads", 2},
          {"num_classes", 5}, {"attention", mech}, {"class_token", !grid_only}};
}

// "DeiT with attention X": the same skeleton runs every registered mechanism.
TEST(VitAttentionX, EveryMechanismRunsTracedAndRecorded) {
  for (const auto& mech : attention::mechanism_names()) {
    SCOPED_TRACE(mech);
    const bool grid_only = attention::mechanism_info(mech).needs_grid;
    at::manual_seed(3);
    auto model = models::make_backbone(tiny_config(mech));
    model->eval();
    const at::Tensor images = at::randn({2, 3, 32, 32});
    models::ForwardOptions options;
    options.trace_attention = true;
    options.record_outputs = true;
    const auto r = model->run(images, options);
    ASSERT_EQ(r.logits.sizes(), (std::vector<int64_t>{2, 5}));
    EXPECT_TRUE(at::isfinite(r.logits).all().item<bool>());
    EXPECT_LE(max_abs_diff(model->run(images).logits, r.logits), 1e-5);  // traced = untraced
    ASSERT_EQ(r.traces.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(r.traces[i].path, "blocks." + std::to_string(i) + ".attn");
      const auto& l = r.traces[i].trace->layout;
      EXPECT_EQ(r.traces[i].trace->mechanism, mech);
      EXPECT_EQ(l.height, 4);
      EXPECT_EQ(l.width, 4);
      EXPECT_EQ(l.stage, 0);
      EXPECT_EQ(l.prefix, grid_only ? std::vector<std::string>{} : std::vector<std::string>{"cls"});
    }
    std::set<std::string> keys;
    for (const auto& kv : r.outputs) keys.insert(kv.first);
    std::set<std::string> want = {"out.patch_embed", "out.blocks.0.attn",
                                  "out.blocks.0",    "out.blocks.1.attn",
                                  "out.blocks.1",    grid_only ? "out.fc_norm" : "out.norm"};
    // The mechanisms whose traces give the fixtures' "attn" probabilities (Swin: per window).
    if (mech == "softmax" || mech == "swin") want.insert({"attn.blocks.0", "attn.blocks.1"});
    if (mech == "hilo")
      want.insert({"hifi.blocks.0", "lofi.blocks.0", "hifi.blocks.1", "lofi.blocks.1"});
    EXPECT_EQ(keys, want);
    const auto params = model->named_parameters();
    EXPECT_EQ(params.contains("fc_norm.weight"), grid_only);
    EXPECT_EQ(params.contains("norm.weight"), !grid_only);
    EXPECT_EQ(params.contains("cls_token"), !grid_only);
    EXPECT_EQ(params["pos_embed"].size(1), grid_only ? 16 : 17);
  }
}

// class_token false pools like timm's global_pool='avg': mean of the patch tokens, fc_norm.
TEST(VitAttentionX, MeanPoolingThroughFcNorm) {
  auto model = models::make_backbone(tiny_config("hilo"));
  model->eval();
  models::ForwardOptions options;
  options.record_outputs = true;
  const auto r = model->run(at::randn({2, 3, 32, 32}), options);
  auto p = model->named_parameters();
  const at::Tensor pooled = at::layer_norm(r.outputs.at("out.blocks.1").mean(1), {32},
                                           p["fc_norm.weight"], p["fc_norm.bias"], 1e-6);
  EXPECT_LE(max_abs_diff(pooled, r.outputs.at("out.fc_norm")), 1e-6);
  EXPECT_LE(max_abs_diff(at::linear(pooled, p["head.weight"], p["head.bias"]), r.logits), 1e-5);
}

TEST(VitConfig, FamilyKeysReachTheMechanism) {
  Json c = tiny_config("softmax");
  c["arch"] = "castling_deit";
  c.erase("attention");
  c["sparse_threshold"] = 0.05;
  c["res_kernel_size"] = 5;
  auto castling = models::make_backbone(c);
  auto p = castling->named_parameters();
  EXPECT_EQ(p["blocks.0.attn.dconv.weight"].sizes(), (std::vector<int64_t>{2, 1, 5, 1}));
  EXPECT_FALSE(p.contains("blocks.0.attn.qkv.bias"));  // castling_deit: qkv_bias false
  models::ForwardOptions options;
  options.trace_attention = true;
  castling->eval();
  const at::Tensor images = at::randn({1, 3, 32, 32});
  const auto eval = castling->run(images, options);
  EXPECT_DOUBLE_EQ(attention::castling_threshold(*eval.traces[0].trace), 0.05);
  EXPECT_FALSE(attention::castling_sparse_branch_active(*eval.traces[0].trace));
  castling->train();  // Backbone::run follows is_training(): the masked softmax branch
  const auto train = castling->run(images, options);
  EXPECT_TRUE(attention::castling_sparse_branch_active(*train.traces[0].trace));
  EXPECT_GT(max_abs_diff(train.logits, eval.logits), 1e-6);

  c = tiny_config("softmax");
  c["arch"] = "anchor_deit_distilled";
  c.erase("attention");
  c["num_anchors"] = 7;
  auto anchor = models::make_backbone(c);
  EXPECT_EQ(anchor->named_parameters()["blocks.1.attn.dist_anchor_B.weight"].sizes(),
            (std::vector<int64_t>{7, 16}));
  anchor->eval();
  const at::Tensor eval_logits = anchor->run(images).logits;
  anchor->train();  // documented: training returns the same average of head and head_dist
  EXPECT_LE(max_abs_diff(anchor->run(images).logits, eval_logits), 1e-6);

  c = tiny_config("softmax");
  c["qkv_bias"] = false;
  EXPECT_FALSE(models::make_backbone(c)->named_parameters().contains("blocks.0.attn.qkv.bias"));
  c = tiny_config("hilo");
  c["attention_options"] = {{"window", 4}, {"alpha", 0.5}};
  auto hilo = models::make_backbone(c);
  // alpha 0.5 of 2 heads: one Lo-Fi head of d 16 -> l_q (16, 32)
  EXPECT_EQ(hilo->named_parameters()["blocks.0.attn.l_q.weight"].sizes(),
            (std::vector<int64_t>{16, 32}));
}

void expect_refused(const Json& c, const std::string& needle) {
  try {
    models::make_backbone(c);
    ADD_FAILURE() << "accepted: " << c.dump();
  } catch (const models::ModelError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(VitConfig, BadConfigsAreRefusedNamingTheKey) {
  auto with = [](Json c, const std::string& key, const Json& v) {
    c[key] = v;
    return c;
  };
  const Json base = tiny_config("softmax");
  expect_refused(with(tiny_config("hilo"), "class_token", true), "'class_token'");
  expect_refused(with(tiny_config("rala"), "class_token", true), "pure token grid");
  expect_refused(with(base, "attention", "flash"), "'attention'");
  expect_refused(with(base, "attention_options", 2), "'attention_options'");
  expect_refused(with(base, "attention_options", Json{{"window", 2}}), "window");
  expect_refused(with(tiny_config("hilo"), "attention_options", Json{{"window", 0}}),
                 "'attention_options'");
  expect_refused(with(base, "attention_options", Json{{"qkv_bias", "yes"}}), "'attention_options'");
  expect_refused(with(with(base, "qkv_bias", false), "attention_options", Json{{"qkv_bias", 1}}),
                 "'qkv_bias'");
  expect_refused(with(base, "num_heads", 3), "'num_heads'");
  expect_refused(with(base, "patch_size", 5), "'patch_size'");
  expect_refused(with(base, "depth", 0), "'depth'");
  expect_refused(with(base, "mlp_ratio", -1.0), "'mlp_ratio'");
  Json missing = base;
  missing.erase("embed_dim");
  expect_refused(missing, "'embed_dim'");
  expect_refused(with(with(base, "arch", "anchor_deit_distilled"), "attention", "softmax"),
                 "'attention'");
  Json anchor_without_cls = with(base, "arch", "anchor_deit_distilled");
  anchor_without_cls.erase("attention");
  anchor_without_cls["class_token"] = false;
  expect_refused(anchor_without_cls, "'class_token'");
}

// Another size needs input_size (--img-size); the message says so.
TEST(VitConfig, ImagesOfAnotherSizeThanTheInputSizeAreRefused) {
  auto model = models::make_backbone(tiny_config("softmax"));
  for (const auto& shape : std::vector<std::vector<int64_t>>{
           {1, 3, 48, 48}, {1, 3, 32, 40}, {1, 1, 32, 32}, {3, 32, 32}}) {
    try {
      model->run(at::randn(shape));
      ADD_FAILURE() << "accepted " << shape.size();
    } catch (const models::ModelError& e) {
      EXPECT_NE(std::string(e.what()).find("--img-size"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace attnlab::testing
