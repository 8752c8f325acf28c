// --dtype (issue 28): the names it takes, the probe that refuses a precision this
// LibTorch cannot run (fp16 on the CPU of LibTorch 1.13), and the one place a forward's
// precision is set: Backbone::set_precision casts floating-point weights only, and
// Backbone::run casts its input, so the smallest preset of each backbone family runs at
// bf16 from an fp32 image, with logits close to fp32's.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include "core/runtime/precision.h"
#include "models/model_registry.h"
#include "models/presets.h"
#include "tests/support/bf16_bounds.h"
#include "tests/support/precision_skip.h"

namespace attnlab::testing {
namespace {

TEST(Precision, NamesAndErrors) {
  EXPECT_EQ(runtime::parse_dtype("fp32"), at::kFloat);
  EXPECT_EQ(runtime::parse_dtype("bfloat16"), at::kBFloat16);
  EXPECT_EQ(runtime::parse_dtype("fp16"), at::kHalf);
  EXPECT_EQ(runtime::dtype_name(at::kBFloat16), "bf16");
  try {
    runtime::parse_dtype("int8");
    ADD_FAILURE() << "int8 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown dtype 'int8' (expected fp32, bf16 or fp16)");
  }
  EXPECT_EQ(runtime::precision_unsupported(at::kFloat, c10::Device(c10::kCPU)), "");
  // bf16 on the CPU: Precision.TheBf16ProbeSaysWhatAForwardDoes.
  // fp16 on the CPU: runs, or is refused naming the op that has no kernel.
  const std::string why = runtime::precision_unsupported(at::kHalf, c10::Device(c10::kCPU));
  std::printf("fp16 on the CPU: %s\n", why.empty() ? "supported" : why.c_str());
  if (why.empty()) {
    EXPECT_NO_THROW(runtime::select_target("cpu", "fp16"));
  } else {
    EXPECT_NE(why.find("fails at fp16 on cpu"), std::string::npos) << why;
    try {
      runtime::select_target("cpu", "fp16");
      ADD_FAILURE() << "fp16 accepted on the CPU though " << why;
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), "--dtype fp16 is not supported here: " + why +
                                           "; use --dtype fp32 or bf16, or a CUDA device");
    }
  }
}

models::Json tiny_vit() {
  return {{"arch", "vit"}, {"img_size", 32}, {"patch_size", 8}, {"embed_dim", 32},
          {"depth", 1},    {"num_heads", 2}, {"num_classes", 4}};
}

// A small ViT's forward at bf16, its weights cast directly (not through set_precision, which
// asks the probe): "" when it runs, else the error's first line.
std::string bf16_vit_forward_error() {
  at::manual_seed(0);
  auto model = models::make_backbone(tiny_vit());
  model->eval();
  models::cast_floating(*model, at::kBFloat16);
  const at::NoGradGuard no_grad;
  try {
    model->run(at::randn({1, 3, 32, 32}));
    return "";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    return what.substr(0, what.find('\n'));
  }
}

// The probe against what a bf16 forward really does on this CPU: a forward that fails is
// refused, naming the op; a forward that runs is not refused for an op it runs (a refusal
// of bf16 for a convolution or a pooling the ViT has none of stays possible). Either way
// every path gives the probe's one message: select_target, set_precision (which leaves the
// model as it was), the attention bench. Run as it is and, below, under the AVX2 cap.
TEST(Precision, TheBf16ProbeSaysWhatAForwardDoes) {
  const c10::Device cpu(c10::kCPU);
  const std::string probe = runtime::precision_unsupported(at::kBFloat16, cpu);
  const char* emulated = std::getenv("ATTNLAB_REFUSE_PRECISION");
  const std::string forward = bf16_vit_forward_error();
  std::printf("bf16 on this CPU: a ViT forward %s; the probe: %s\n",
              forward.empty() ? "runs" : ("fails: " + forward).c_str(),
              probe.empty() ? "runs" : probe.c_str());
  if (emulated && std::string(emulated).find("bf16") != std::string::npos) {
    EXPECT_NE(probe.find("by ATTNLAB_REFUSE_PRECISION"), std::string::npos) << probe;
  } else if (!forward.empty()) {
    EXPECT_NE(probe.find(" fails at bf16 on cpu ("), std::string::npos)
        << "the forward fails (" << forward << ") but the probe says: '" << probe << "'";
  } else {
    for (const char* op :
         {"at::linear ", "at::matmul ", "at::softmax ", "at::layer_norm ", "at::gelu "})
      EXPECT_NE(probe.rfind(op, 0), 0u)
          << "the forward runs " << op << "but the probe says: " << probe;
  }
  const std::string refusal = runtime::precision_refusal(at::kBFloat16, cpu);
  EXPECT_EQ(refusal.empty(), probe.empty());
  if (probe.empty()) {
    const runtime::ComputeTarget bf16 = runtime::select_target("cpu", "bf16");
    EXPECT_TRUE(bf16.reduced());
    EXPECT_EQ(bf16.str(), "cpu bf16");
    return;
  }
  EXPECT_EQ(refusal, "--dtype bf16 is not supported here: " + probe +
                         "; use --dtype fp32, or a CUDA device");
  try {
    runtime::select_target("cpu", "bf16");
    ADD_FAILURE() << "select_target accepted bf16 though " << probe;
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), refusal);
  }
  auto model = models::make_backbone(tiny_vit());
  try {
    model->set_precision(at::kBFloat16);
    ADD_FAILURE() << "set_precision accepted bf16 though " << probe;
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), refusal);
  }
  EXPECT_EQ(model->dtype(), at::kFloat) << "a refused precision leaves the model as it was";
}

// The same under ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 (how an HPC site keeps jobs
// off AVX-512, and how the README says to emulate another CPU): read by ATen and oneDNN at
// start, so the test runs again in a child process. On an AVX-512 CPU ATen still hands bf16
// GELU to oneDNN, which, capped, cannot build it: the probe must refuse; on a CPU without
// AVX-512 the cap changes nothing and bf16 runs.
TEST(Precision, TheBf16ProbeSaysWhatAForwardDoesUnderTheAvx2Cap) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string cmd = "ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 '" + self +
                          "' --gtest_filter=Precision.TheBf16ProbeSaysWhatAForwardDoes 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  const int status = pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status)) << out;
  EXPECT_EQ(WEXITSTATUS(status), 0) << out;
  EXPECT_NE(out.find("[  PASSED  ] 1 test"), std::string::npos) << out;
  const size_t line = out.find("bf16 on this CPU:");
  ASSERT_NE(line, std::string::npos) << out;
  std::printf("under the AVX2 cap: %s\n", out.substr(line, out.find('\n', line) - line).c_str());
}

TEST(Precision, FullPrecisionCopiesOnlyReducedTensors) {
  const at::Tensor f = at::ones({2});
  EXPECT_TRUE(runtime::full_precision(f).is_same(f));
  EXPECT_EQ(runtime::full_precision(f.to(at::kBFloat16)).scalar_type(), at::kFloat);
  const at::Tensor d = f.to(at::kDouble);
  EXPECT_TRUE(runtime::full_precision(d).is_same(d));
}

// The smallest preset of each backbone family and of each mechanism a preset runs.
const std::vector<std::string>& smallest_presets() {
  static const std::vector<std::string> names = {"deit_tiny_distilled_patch16_224",
                                                 "litv2_s",
                                                 "ravlt_t",
                                                 "anchor_deit_tiny_distilled_patch16_224",
                                                 "castling_deit_tiny",
                                                 "swin_tiny_patch4_window7_224",
                                                 "dino_vits16",
                                                 "dinov2_vits14",
                                                 "clip_vit_b16",
                                                 "clip_vit_b16_visual"};
  return names;
}

TEST(Precision, TheListBelowCoversEveryPresetFamily) {
  std::set<std::string> covered, all;
  const auto family = [](const models::Preset& p) {
    return p.config.value("arch", "") + "/" + p.config.value("attention", "");
  };
  for (const auto& name : smallest_presets()) covered.insert(family(models::find_preset(name)));
  for (const auto& p : models::presets()) all.insert(family(p));
  EXPECT_EQ(covered, all);
}

class PresetAtBf16 : public ::testing::TestWithParam<std::string> {};

TEST_P(PresetAtBf16, ForwardCastsItsInputAndStaysCloseToFp32) {
  ATTNLAB_SKIP_UNLESS_CPU_RUNS(at::kBFloat16);
  const models::Preset& preset = models::find_preset(GetParam());
  at::manual_seed(0);
  auto model = models::make_backbone(preset.config);
  model->eval();
  const int64_t size = preset.preprocessing.crop > 0 ? preset.preprocessing.crop : 224;
  at::manual_seed(1);
  const at::Tensor image = at::randn({1, 3, size, size});
  models::ForwardOptions o;
  o.trace_attention = true;
  const at::NoGradGuard no_grad;
  const models::ForwardResult fp32 = model->run(image, o);
  // An fp32 model given a bf16 image computes at fp32 (run() casts to the model's dtype).
  EXPECT_EQ(model->run(image.to(at::kBFloat16), o).logits.scalar_type(), at::kFloat);

  std::map<std::string, at::ScalarType> integer_buffers;
  for (const auto& b : model->named_buffers())
    if (!b.value().is_floating_point()) integer_buffers[b.key()] = b.value().scalar_type();
  model->set_precision(at::kBFloat16);
  EXPECT_EQ(model->dtype(), at::kBFloat16);
  for (const auto& p : model->named_parameters())
    EXPECT_EQ(p.value().scalar_type(), at::kBFloat16) << p.key();
  for (const auto& b : model->named_buffers()) {
    const auto it = integer_buffers.find(b.key());
    if (it != integer_buffers.end())  // indices stay indices (Module::to(dtype) casts them)
      EXPECT_EQ(b.value().scalar_type(), it->second) << b.key();
    else
      EXPECT_EQ(b.value().scalar_type(), at::kBFloat16) << b.key();
  }
  const models::ForwardResult bf16 = model->run(image, o);  // an fp32 image, cast by run()
  ASSERT_EQ(bf16.logits.scalar_type(), at::kBFloat16);
  ASSERT_EQ(bf16.traces.size(), fp32.traces.size());
  for (const auto& t : bf16.traces)
    for (const auto& g : t.trace->groups) EXPECT_EQ(g.q.scalar_type(), at::kBFloat16) << t.path;
  // The logits' error against their largest magnitude: within ε, the derived bound of a
  // bf16 forward through this many blocks (tests/support/bf16_bounds.h; each block has one
  // MLP, whose fc2 — CLIP's c_proj — is counted), whatever the CPU. Random weights, so the
  // logits are small and close together: only their scale is compared, not the ranking.
  int blocks = 0;
  const auto ends_with = [](const std::string& key, const std::string& tail) {
    return key.size() > tail.size() &&
           key.compare(key.size() - tail.size(), tail.size(), tail) == 0;
  };
  for (const auto& m : model->named_modules())
    if (ends_with(m.key(), ".fc2") || ends_with(m.key(), ".mlp.c_proj")) ++blocks;
  ASSERT_GT(blocks, 0) << GetParam() << ": no block found";
  const double eps = bf16_forward_error(blocks, 4 * 768);  // fc2's input, the longest sum
  const at::Tensor a = fp32.logits.to(at::kDouble), b = bf16.logits.to(at::kDouble);
  const double scale = a.abs().max().item<double>();
  const double error = (a - b).abs().max().item<double>() / scale;
  std::printf("%-36s bf16 logits max |d| / max |logit| = %.4f, bound %.4f (%d blocks)\n",
              GetParam().c_str(), error, eps, blocks);
  EXPECT_TRUE(at::isfinite(b).all().item<bool>());
  EXPECT_LE(error, eps) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Families, PresetAtBf16, ::testing::ValuesIn(smallest_presets()),
                         [](const auto& p) { return p.param; });

}  // namespace
}  // namespace attnlab::testing
