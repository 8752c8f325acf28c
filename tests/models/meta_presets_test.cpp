// Every preset architecture on LibTorch's `meta` device (issue 28; tests/support/
// meta_device.h): the whole forward with traces, recorded outputs and block inputs, and a
// resumed forward, run on meta tensors from a model moved to meta, and every tensor they
// give is a meta tensor. A tensor made on a fixed device anywhere in a backbone (a
// position table, a mask, an index) fails here as it would on CUDA.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <vector>

#include "core/nn/initial_values.h"
#include "models/model_registry.h"
#include "models/presets.h"
#include "tests/support/meta_device.h"
#include "tests/support/preset_names.h"

namespace attnlab::testing {
namespace {

class EveryPresetOnMeta : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryPresetOnMeta, TheTracedForwardRunsOnTheDeviceOfItsInput) {
  const models::Preset& preset = models::find_preset(GetParam());
  std::shared_ptr<models::Backbone> model;
  {
    const nn::WeightsToBeLoaded uninitialised;  // their values never matter on meta
    model = models::make_backbone(preset.config);
  }
  model->eval();
  move_to_meta(*model);
  const int64_t size = preset.preprocessing.crop > 0 ? preset.preprocessing.crop : 224;
  const at::Tensor images = meta_tensor({2, 3, size, size});
  models::ForwardOptions o;
  o.trace_attention = true;
  o.record_outputs = true;
  o.record_block_inputs = true;
  models::ForwardResult r;
  const at::NoGradGuard no_grad;
  const MetaOutcome full = meta_outcome([&] { r = model->run(images, o); });
  ASSERT_TRUE(full.ok()) << GetParam() << ": " << full.describe();
  EXPECT_TRUE(r.logits.is_meta());
  ASSERT_FALSE(r.traces.empty());
  for (const auto& t : r.traces) {
    for (const auto& g : t.trace->groups)
      EXPECT_TRUE(g.q.is_meta() && g.k.is_meta() && g.v.is_meta()) << t.path;
    for (const auto& [name, v] : t.trace->internals)
      EXPECT_TRUE(v.is_meta()) << t.path << " " << name;
  }
  for (const auto& [name, v] : r.outputs) EXPECT_TRUE(v.is_meta()) << name;
  ASSERT_FALSE(r.block_inputs.empty());
  // A forward resumed at the last block (head ablation's).
  models::ForwardOptions resume;
  resume.resume = &r.block_inputs.back();
  const MetaOutcome resumed =
      meta_outcome([&] { EXPECT_TRUE(model->run(images, resume).logits.is_meta()); });
  EXPECT_TRUE(resumed.ok()) << GetParam() << ": " << resumed.describe();
}

INSTANTIATE_TEST_SUITE_P(Presets, EveryPresetOnMeta, ::testing::ValuesIn(preset_names()),
                         [](const auto& p) { return p.param; });

}  // namespace
}  // namespace attnlab::testing
