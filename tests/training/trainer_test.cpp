// The trainer: optimiser and schedule by hand, a 20-step smoke run on a tiny model whose
// loss goes down, checkpoints that resume to exactly the uninterrupted state, refusals,
// and Castling's training-only branch with its penalty.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <filesystem>

#include "core/attention/castling.h"
#include "models/checkpoint_loading.h"
#include "models/model_registry.h"
#include "models/training/adamw.h"
#include "models/training/trainer.h"
#include "models/training/training_checkpoint.h"
#include "models/training/zoo_skeleton.h"
#include "tests/support/temp_path.h"

namespace attnlab::training {
namespace {

// 8×8 grey images: class 0 bright on the left half, class 1 on the right, plus noise.
data::ImageDataset left_right_set(int64_t n) {
  at::manual_seed(123);
  data::ImageDataset d;
  d.class_names = {"left", "right"};
  d.labels = at::arange(n, at::kLong) % 2;
  at::Tensor img = at::randint(0, 60, {n, 1, 8, 8}, at::kLong);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t x0 = d.labels[i].item<int64_t>() == 0 ? 0 : 4;
    img[i].slice(2, x0, x0 + 4) += 180;
  }
  d.images = img.to(at::kByte);
  d.name = "left-right";
  return d;
}

TrainSettings tiny_settings(const std::string& mechanism = "softmax") {
  SkeletonShape shape;
  shape.img_size = 8;
  shape.width = 32;
  shape.depth = 1;
  shape.heads = 2;
  TrainSettings s;
  s.model = zoo_skeleton_config(mechanism, {"left", "right"}, shape);
  s.train_set = "left-right";
  s.test_set = "";
  s.steps = 20;
  s.batch = 32;
  s.lr = 3e-3;
  s.warmup = 2;
  s.augment.hflip = false;  // a flip would swap the classes
  s.augment.max_shift = 1;
  s.seed = 5;
  s.keep_last = 10;
  return s;
}

double mean_loss(const std::vector<StepRecord>& h, size_t from, size_t to) {
  double sum = 0;
  for (size_t i = from; i < to; ++i) sum += h[i].loss;
  return sum / static_cast<double>(to - from);
}

TEST(AdamW, OneStepMatchesTheUpdateRuleByHand) {
  at::Tensor w = at::tensor({1.0, -2.0}, at::kDouble).reshape({1, 2}).requires_grad_(true);
  at::Tensor b = at::tensor({0.5}, at::kDouble).requires_grad_(true);
  AdamWOptions o;
  o.weight_decay = 0.1;
  AdamW opt({{"w", w}, {"b", b}}, o);
  EXPECT_TRUE(opt.decays("w"));
  EXPECT_FALSE(opt.decays("b"));  // 1-d: no decay
  (w.sum() * 3.0 + b.sum() * -1.0).backward();
  opt.step(0.01);
  // First step: m̂ = g, v̂ = g², so the move is lr·g/(|g|+eps) = ±lr; decay first.
  EXPECT_NEAR(w[0][0].item<double>(), 1.0 * (1 - 0.001) - 0.01, 1e-9);
  EXPECT_NEAR(w[0][1].item<double>(), -2.0 * (1 - 0.001) - 0.01, 1e-9);
  EXPECT_NEAR(b[0].item<double>(), 0.5 + 0.01, 1e-9);
  EXPECT_EQ(opt.steps(), 1);
  const auto state = opt.state();
  EXPECT_EQ(state.size(), 4u);
  EXPECT_NEAR(state.at("exp_avg.w")[0][0].item<double>(), 0.1 * 3.0, 1e-12);
  EXPECT_NEAR(state.at("exp_avg_sq.b")[0].item<double>(), 0.001 * 1.0, 1e-12);
  EXPECT_THROW(opt.load_state({{"exp_avg.w", state.at("exp_avg.w")}}, 1), std::runtime_error);
}

TEST(Schedule, WarmupThenCosineToTheFloor) {
  EXPECT_DOUBLE_EQ(warmup_cosine_lr(0, 100, 10, 1.0, 0.0), 0.1);
  EXPECT_DOUBLE_EQ(warmup_cosine_lr(9, 100, 10, 1.0, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(warmup_cosine_lr(10, 100, 10, 1.0, 0.0), 1.0);
  EXPECT_NEAR(warmup_cosine_lr(55, 100, 10, 1.0, 0.0), 0.5, 1e-12);
  EXPECT_NEAR(warmup_cosine_lr(100, 100, 10, 1.0, 0.1), 0.1, 1e-12);
}

TEST(Loss, LabelSmoothedCrossEntropyMatchesItsDefinition) {
  const at::Tensor logits =
      at::tensor({2.0, 0.0, -1.0, 0.5, 0.5, 3.0}, at::kDouble).reshape({2, 3});
  const at::Tensor labels = at::tensor({0, 1}, at::kLong);
  const at::Tensor logp = at::log_softmax(logits, 1);
  const double eps = 0.1;
  double expected = 0;
  for (int i = 0; i < 2; ++i) {
    const int y = labels[i].item<int>();
    expected += -(1 - eps) * logp[i][y].item<double>() - eps * logp[i].mean().item<double>();
  }
  EXPECT_NEAR(smoothed_cross_entropy(logits, labels, eps).item<double>(), expected / 2, 1e-12);
  EXPECT_NEAR(smoothed_cross_entropy(logits, labels, 0).item<double>(),
              -(logp[0][0] + logp[1][1]).item<double>() / 2, 1e-12);
}

TEST(Trainer, TwentyStepsOnATinyModelLowerTheLoss) {
  testing::TempDir dir("smoke");
  Trainer t(tiny_settings(), left_right_set(256), dir.path.string());
  t.run();
  ASSERT_EQ(t.step(), 20);
  ASSERT_EQ(t.history().size(), 20u);
  EXPECT_LT(mean_loss(t.history(), 15, 20), mean_loss(t.history(), 0, 5) - 0.1);
  for (const auto& r : t.history()) EXPECT_TRUE(std::isfinite(r.loss));
  EXPECT_FALSE(t.model().is_training());  // left in eval mode
  // step 0 (untrained) and step 20 were checkpointed.
  EXPECT_TRUE(std::filesystem::exists(dir.path / "checkpoints" / "step_000000.safetensors"));
  EXPECT_EQ(Trainer::latest_checkpoint(dir.path.string()),
            (dir.path / "checkpoints" / "step_000020.safetensors").string());
}

TEST(Trainer, ResumingFromACheckpointReachesTheUninterruptedState) {
  testing::TempDir a("straight"), b("resumed");
  TrainSettings s = tiny_settings();
  s.checkpoint_every = 10;
  Trainer straight(s, left_right_set(256), a.path.string());
  straight.run();

  // The same run, stopped after step 7 (cancel writes a checkpoint), then resumed by a
  // fresh trainer — a new process in real life.
  {
    Trainer first(s, left_right_set(256), b.path.string());
    std::atomic<bool> cancel{false};
    first.run([&](const StepRecord& r) { cancel = r.step >= 7; }, &cancel);
    EXPECT_EQ(first.step(), 7);
  }
  Trainer second(s, left_right_set(256), b.path.string());
  const std::string ckpt = Trainer::latest_checkpoint(b.path.string());
  EXPECT_NE(ckpt.find("step_000007"), std::string::npos);
  second.resume(ckpt);
  EXPECT_EQ(second.step(), 7);
  second.run();

  // Exact: the resumed run repeats the straight run's computation step for step (same ops,
  // shapes, seeds and thread count, one process), which is what resuming promises. It
  // relies on the kernels repeating themselves run to run on a fixed thread count, which
  // scripts/test_portability.sh checks under each OpenBLAS kernel and thread count.
  const auto sa = module_state(straight.model()), sb = module_state(second.model());
  ASSERT_EQ(sa.size(), sb.size());
  for (const auto& [name, t] : sa) EXPECT_TRUE(t.equal(sb.at(name))) << name;
  ASSERT_EQ(second.history().size(), 20u);
  for (size_t i = 0; i < 20; ++i)
    EXPECT_EQ(second.history()[i].loss, straight.history()[i].loss) << "step " << i + 1;

  // The checkpoint holds exactly the in-memory state (a copy, no arithmetic), and opens as a model
  // (its weights come from the "model" container) with the config in its metadata.
  const TrainingCheckpoint c =
      read_training_checkpoint(Trainer::latest_checkpoint(a.path.string()));
  EXPECT_EQ(c.step, 20);
  for (const auto& [name, t] : sa) EXPECT_TRUE(t.equal(c.model.at(name))) << name;
  const auto loaded = models::load_model(s.model, Trainer::latest_checkpoint(a.path.string()));
  EXPECT_EQ(loaded.weights_info.source_key, "model");
}

TEST(Trainer, ResumeRefusesACheckpointOfOtherSettings) {
  testing::TempDir dir("other");
  TrainSettings s = tiny_settings();
  s.steps = 2;
  Trainer t(s, left_right_set(64), dir.path.string());
  t.run();
  s.lr = 1e-2;
  Trainer other(s, left_right_set(64), dir.path.string());
  try {
    other.resume(Trainer::latest_checkpoint(dir.path.string()));
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("'lr'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_training_checkpoint("/nonexistent.safetensors"), std::exception);
}

TEST(Trainer, CastlingTrainsWithItsMaskedBranchAndEvaluatesWithout) {
  testing::TempDir dir("castling");
  TrainSettings s = tiny_settings("castling");
  s.steps = 3;
  s.sparse_penalty = 0.5;
  Trainer t(s, left_right_set(96), dir.path.string(), (dir.path / "series").string());
  t.run();
  for (const auto& r : t.history()) EXPECT_GT(r.penalty, 0.0);  // the branch ran in training
  // Eval: the branch is off, as the trace says.
  models::ForwardOptions o;
  o.trace_attention = true;
  const auto out = t.model().run(at::zeros({1, 3, 8, 8}), o);
  ASSERT_EQ(out.traces.size(), 1u);
  EXPECT_FALSE(attention::castling_sparse_branch_active(*out.traces[0].trace));
  // The fp16 series has every checkpoint, step 0 to the end.
  for (const char* f : {"step_000000.safetensors", "step_000003.safetensors"})
    EXPECT_TRUE(std::filesystem::exists(dir.path / "series" / f)) << f;
}

// The small-model options come from each mechanism's registry entry; the caller's win.
TEST(ZooSkeleton, AttentionOptionsAreTheMechanismsSmallModelOptions) {
  EXPECT_EQ(zoo_skeleton_config("hilo", {"a", "b"})["attention_options"],
            nlohmann::json({{"alpha", 0.5}, {"window", 2}}));
  EXPECT_TRUE(
      zoo_skeleton_config("hilo", {"a", "b"})["attention_options"]["window"].is_number_integer());
  EXPECT_EQ(zoo_skeleton_config("anchor", {"a", "b"})["attention_options"],
            nlohmann::json({{"anchors", 16}}));
  EXPECT_EQ(zoo_skeleton_config("softmax", {"a", "b"})["attention_options"],
            nlohmann::json::object());
  EXPECT_EQ(zoo_skeleton_config("anchor", {"a", "b"}, {}, {{"anchors", 8}})["attention_options"],
            nlohmann::json({{"anchors", 8}}));
}

TEST(ZooSkeleton, StartsFromSinCosPositions) {
  const auto config = zoo_skeleton_config("softmax", {"a", "b"});
  EXPECT_EQ(config["pos_embed_init"], "sincos");
  at::manual_seed(0);
  auto model = models::make_backbone(config);
  at::Tensor pos;
  for (const auto& p : model->named_parameters())
    if (p.key() == "pos_embed") pos = p.value().detach();
  ASSERT_EQ(pos.sizes(), (std::vector<int64_t>{1, 196, 128}));
  // Token 0 is (y, x) = (0, 0): sin 0 = 0 and cos 0 = 1 in each quarter.
  EXPECT_EQ(pos[0][0][0].item<float>(), 0.0f);
  EXPECT_EQ(pos[0][0][32].item<float>(), 1.0f);
  // Token 15 is (1, 1): the first frequency is 1, so sin(1) in channels 0 and 64.
  EXPECT_NEAR(pos[0][15][0].item<float>(), std::sin(1.0), 1e-6);
  EXPECT_NEAR(pos[0][15][64].item<float>(), std::sin(1.0), 1e-6);
  EXPECT_NEAR(pos[0][14][64].item<float>(), 0.0, 1e-6);  // (1, 0): x = 0
  auto bad = config;
  bad["pos_embed_init"] = "zeros";
  EXPECT_THROW(models::make_backbone(bad), models::ModelError);
}

TEST(Trainer, RefusesABatchLargerThanTheSetAndTooFewClasses) {
  testing::TempDir dir("refuse");
  TrainSettings s = tiny_settings();
  s.batch = 1000;
  EXPECT_THROW(Trainer(s, left_right_set(64), dir.path.string()), std::invalid_argument);
  s = tiny_settings();
  s.model["num_classes"] = 1;
  EXPECT_THROW(Trainer(s, left_right_set(64), dir.path.string()), std::invalid_argument);
  s = tiny_settings();
  s.model["img_size"] = 16;  // the set is 8×8
  try {
    Trainer(s, left_right_set(64), dir.path.string());
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("8×8"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace attnlab::training
