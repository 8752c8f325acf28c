// `attnlab embed` end to end on the shipped zoo (issue 70 goal 1): a class-folder tree's
// labels from its folder names, an unreadable image reported and left out (exit 1), the
// CSV's predictions equal to classify's, the pools agreeing with each other (and a pool the model
// cannot give refused), --layer, the refusals, and a sharded run on Fashion-MNIST merged into the
// single run's files; --features keys|queries against the block's projections computed by hand,
// retrieved, refused where keys are pooled, and kept apart by merge. Every run uses --threads 1
// and no Slurm array variables.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/data/image_dataset.h"
#include "core/io/npy.h"
#include "core/io/tensor_file.h"
#include "core/io/torch_bridge.h"
#include "models/backbone.h"
#include "models/checkpoint_loading.h"
#include "models/embedding_run.h"
#include "models/model_config.h"
#include "tests/support/cli_runner.h"
#include "tests/support/sample_tree.h"
#include "tests/support/temp_path.h"
#include "tests/support/text_file.h"

namespace {

namespace fs = std::filesystem;
using attnlab::testing::CliRun;
using attnlab::testing::copy_sample_tree;
using attnlab::testing::read_csv_cells;
using attnlab::testing::read_text;
using attnlab::testing::run_cli_single;
using attnlab::testing::TempDir;

const std::string kEmbedRoot = ATTNLAB_SOURCE_DIR;
const std::string kEmbedSoftmax = kEmbedRoot + "/models/zoo/softmax.safetensors";
const std::string kEmbedSamples = kEmbedRoot + "/assets/fashion-mnist";

at::Tensor embed_npy(const std::string& path) {
  return attnlab::io::to_torch(attnlab::io::read_npy(path));
}

nlohmann::json embed_json(const std::string& path) {
  return nlohmann::json::parse(read_text(path));
}

TEST(EmbedCli, ClassFolderTreeIsLabelledAndItsPredictionsAreClassifys) {
  TempDir dir("embed_tree");
  copy_sample_tree(dir.path / "data");
  {
    std::ofstream bad(dir.path / "data" / "03-dress" / "03-unreadable.png");
    bad << "not a png";
  }
  const CliRun r = run_cli_single("embed --model " + kEmbedSoftmax + " --images " +
                                  dir.file("data") + " --batch 8 --out " + dir.file("out"));
  // The unreadable image is said and left out; the status says a file was skipped.
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("03-unreadable.png"), std::string::npos) << r.out;
  const auto rows = read_csv_cells(dir.file("out/images.csv"));
  ASSERT_EQ(rows.size(), 31u);  // header + 30 samples
  EXPECT_EQ(rows[0],
            (std::vector<std::string>{"index", "image", "label", "label_name", "prediction",
                                      "prediction_name", "confidence", "correct"}));
  const at::Tensor e = embed_npy(dir.file("out/embeddings.npy"));
  ASSERT_EQ(e.sizes(), (std::vector<int64_t>{30, 128}));
  const nlohmann::json meta = embed_json(dir.file("out/embed.json"));
  EXPECT_EQ(meta.at("skipped"), 1);
  EXPECT_EQ(meta.at("block"), "blocks.3");
  EXPECT_EQ(meta.at("label_names").size(), 10u);
  // Labels are the sorted class folders: 00-t-shirt-top is 0, ..., 09-ankle-boot is 9.
  int correct = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    const std::string folder = fs::path(rows[i][1]).parent_path().filename().string();
    EXPECT_EQ(std::stoi(rows[i][2]), std::stoi(folder.substr(0, 2))) << rows[i][1];
    EXPECT_EQ(rows[i][7], rows[i][2] == rows[i][4] ? "1" : "0");
    correct += rows[i][7] == "1";
    if (i > 6) continue;  // classify is a process per image: six are enough
    // classify's top-1 of the same file: the same class, the same probability up to the
    // rounding of another batch size (float32 GEMMs: 1e-5 is far above it).
    const CliRun c = run_cli_single("classify --model " + kEmbedSoftmax + " --top 1 " + rows[i][1]);
    ASSERT_EQ(c.code, 0) << c.out;
    const size_t line = c.out.find('%');
    ASSERT_NE(line, std::string::npos) << c.out;
    std::istringstream top(c.out.substr(c.out.rfind('\n', line) + 1));
    double percent = 0;
    std::string pct;
    int64_t cls = -1;
    top >> percent >> pct >> cls;
    EXPECT_EQ(std::to_string(cls), rows[i][4]) << c.out;
    // classify prints two decimals of a percent: half of 0.01 % plus the rounding above.
    EXPECT_NEAR(percent, 100.0 * std::stod(rows[i][6]), 0.005 + 1e-3) << c.out;
  }
  EXPECT_EQ(meta.at("correct"), correct);
  EXPECT_EQ(meta.at("judged"), 30);
}

TEST(EmbedCli, PoolsAgreeAndLayersAreTheBlocks) {
  TempDir dir("embed_pools");
  const std::string images = " --images " + kEmbedSamples + " --limit 6 --batch 3";
  const auto run = [&](const std::string& opts, const std::string& out) {
    const CliRun r = run_cli_single("embed --model " + kEmbedSoftmax + images + opts + " --out " +
                                    dir.file(out));
    EXPECT_EQ(r.code, 0) << r.out;
    return embed_npy(dir.file(out + "/embeddings.npy"));
  };
  const at::Tensor head = run("", "head"), mean = run(" --pool mean", "mean");
  const at::Tensor tokens = run(" --pool tokens", "tokens");
  ASSERT_EQ(tokens.sizes(), (std::vector<int64_t>{6, 196, 128}));  // patch 2 on 28: 14×14
  EXPECT_EQ(embed_json(dir.file("tokens/embed.json")).at("grid"),
            (nlohmann::json{{"height", 14}, {"width", 14}, {"prefix", nlohmann::json::array()}}));
  // The mean of the grid tokens, from at::mean over 196 float32 values in each run, whose
  // order of summation may differ (vectorised partial sums): a few ulps of the largest
  // magnitude, far under 1e-5 of it.
  const double scale = tokens.abs().max().item<double>();
  EXPECT_LT((tokens.mean(1) - mean).abs().max().item<double>(), 1e-5 * scale);
  // The zoo's ViTs pool globally (fc_norm, no class token): the head reads that mean...
  EXPECT_LT((head - mean).abs().max().item<double>(), 1e-5 * scale);
  // ...and there is no class token to pool.
  const CliRun cls = run_cli_single("embed --model " + kEmbedSoftmax + images +
                                    " --pool cls --out " + dir.file("cls"));
  EXPECT_EQ(cls.code, 1) << cls.out;
  EXPECT_NE(cls.out.find("blocks.3 has no class token"), std::string::npos) << cls.out;
  const at::Tensor first = run(" --layer 0", "layer0");
  EXPECT_FALSE(at::allclose(first, head));
  EXPECT_EQ(embed_json(dir.file("layer0/embed.json")).at("block"), "blocks.0");
  // Flat folders have no labels: -1, no name, no correct/wrong.
  const auto rows = read_csv_cells(dir.file("head/images.csv"));
  ASSERT_EQ(rows.size(), 7u);
  EXPECT_EQ(rows[1][2], "-1");
  EXPECT_EQ(rows[1][7], "");
}

TEST(EmbedCli, RefusesWhatItCannotDo) {
  TempDir dir("embed_refusals");
  const std::string model = "embed --model " + kEmbedSoftmax + " --images " + kEmbedSamples;
  const CliRun layer = run_cli_single(model + " --layer 9 --out " + dir.file("a"));
  EXPECT_EQ(layer.code, 1) << layer.out;
  EXPECT_NE(layer.out.find("the model has 4 blocks"), std::string::npos) << layer.out;
  EXPECT_FALSE(fs::exists(dir.file("a/embeddings.npy")));
  EXPECT_FALSE(fs::exists(dir.file("a/.embeddings.rows")));
  const CliRun pool = run_cli_single(model + " --pool max --out " + dir.file("b"));
  EXPECT_EQ(pool.code, 2) << pool.out;
  EXPECT_NE(pool.out.find("head, cls, mean or tokens"), std::string::npos) << pool.out;
  const CliRun out = run_cli_single(model);
  EXPECT_EQ(out.code, 2) << out.out;
  const CliRun none = run_cli_single("embed --model " + kEmbedSoftmax + " --out " + dir.file("c"));
  EXPECT_EQ(none.code, 2) << none.out;
}

TEST(EmbedCli, ShardsMergeIntoTheSingleRun) {
  if (attnlab::data::fashion_mnist_dir().empty())
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  TempDir dir("embed_shards");
  const std::string args =
      "embed --model " + kEmbedSoftmax + " --dataset fashion-mnist:test --limit 300 --batch 50";
  const CliRun single = run_cli_single(args + " --out " + dir.file("single"));
  ASSERT_EQ(single.code, 0) << single.out;
  std::string folders;
  for (int i = 0; i < 3; ++i) {
    const std::string d = dir.file("shard_" + std::to_string(i));
    const CliRun r = run_cli_single(args + " --shard " + std::to_string(i) + "/3 --out " + d);
    ASSERT_EQ(r.code, 0) << r.out;
    folders += " " + d;
  }
  const CliRun merge = run_cli_single("merge" + folders + " --out " + dir.file("merged"));
  ASSERT_EQ(merge.code, 0) << merge.out;
  // Whole batches per shard, so every row comes from the same batch as in the single run:
  // the same computation, the same bytes.
  EXPECT_EQ(read_text(dir.file("single/embeddings.npy")),
            read_text(dir.file("merged/embeddings.npy")));
  EXPECT_EQ(read_text(dir.file("single/images.csv")), read_text(dir.file("merged/images.csv")));
  const nlohmann::json a = embed_json(dir.file("single/embed.json"));
  const nlohmann::json b = embed_json(dir.file("merged/embed.json"));
  EXPECT_EQ(a.at("shape"), b.at("shape"));
  EXPECT_EQ(a.at("correct"), b.at("correct"));
  EXPECT_EQ(a.at("shape"), (nlohmann::json{300, 128}));
  // The accuracy is eval's on the same images.
  const CliRun eval =
      run_cli_single("eval --model " + kEmbedSoftmax + " --dataset fashion-mnist:test --limit 300");
  ASSERT_EQ(eval.code, 0) << eval.out;
  EXPECT_NE(eval.out.find("(" + a.at("correct").dump() + "/300)"), std::string::npos)
      << eval.out << a.dump();
}

}  // namespace

namespace {

// --heads: every head's sharpness per image, checked against the entropy analysis of the
// same image (an independent path: the session's analysis over the traced forward of one
// image), and the extremes table against the arrays it is drawn from.
TEST(EmbedCli, HeadStatisticsAreTheEntropyAnalysisPerImage) {
  TempDir dir("embed_heads");
  const std::string first = kEmbedSamples + "/00-t-shirt-top-00019.png";
  const CliRun r = run_cli_single("embed --model " + kEmbedSoftmax + " --images " + kEmbedSamples +
                                  " --batch 8 --heads --head-examples 3 --out " + dir.file("e"));
  ASSERT_EQ(r.code, 0) << r.out;
  const at::Tensor mean = embed_npy(dir.file("e/head_entropy.npy")).to(at::kDouble);
  const at::Tensor patch = embed_npy(dir.file("e/head_sharpest_patch.npy"));
  const at::Tensor sharpest = embed_npy(dir.file("e/head_sharpest_entropy.npy")).to(at::kDouble);
  ASSERT_EQ(mean.sizes(), (std::vector<int64_t>{30, 4, 2}));  // 4 blocks of 2 heads
  EXPECT_TRUE(((mean >= 0) & (mean <= 1)).all().item<bool>());
  // The sharpest row is no broader than the mean row, and lies on the 14×14 grid.
  EXPECT_TRUE((sharpest <= mean + 1e-6).all().item<bool>());
  EXPECT_TRUE(((patch >= 0) & (patch < 196)).all().item<bool>());
  // Row 0 is the first sample (files sorted by name): the entropy analysis of that image.
  const CliRun a = run_cli_single("analyze --model " + kEmbedSoftmax + " --images " + first +
                                  " --analyses entropy --out " + dir.file("a"));
  ASSERT_EQ(a.code, 0) << a.out;
  std::istringstream table(read_text(dir.file("a/softmax__entropy_heads.csv")));
  std::string line;
  std::getline(table, line);  // header: layer,path,mechanism,head,keys,entropy_mean,...
  int compared = 0;
  while (std::getline(table, line)) {
    std::vector<std::string> c;
    std::istringstream l(line);
    for (std::string cell; std::getline(l, cell, ',');) c.push_back(cell);
    const int64_t layer = std::stoll(c[0]), head = std::stoll(c[3]);
    // float32 storage of a float64 mean of the same rows (in another batch: the forward's
    // float32 rounding moves an entropy by ~1e-6): 1e-5 absolute on a value in [0, 1].
    EXPECT_NEAR(mean[0][layer][head].item<double>(), std::stod(c[7]), 1e-5) << line;
    ++compared;
  }
  EXPECT_EQ(compared, 8);
  // Each head's effective output rank: the rank analysis of the same image (its "output"
  // rows, effective_rank_mean of one image). Both are exp(H(σ/Σσ)) of float64 singular
  // values of the same float32 matrix from another batch's forward: the matrices differ by
  // float32 rounding (~1e-6 of σ_max per value), which moves exp(H) by at most
  // exp(H)·Σ_i |ln p_i + 1|·|Δp_i| — with 64 values of |ln p_i| < 25 and |Δp_i| < 1e-6·p_i
  // summed to 1e-6, about 3e-5 relative; 1e-4 relative leaves room for the float32 storage.
  const at::Tensor rank = embed_npy(dir.file("e/head_output_rank.npy")).to(at::kDouble);
  ASSERT_EQ(rank.sizes(), mean.sizes());
  const CliRun ra = run_cli_single("analyze --model " + kEmbedSoftmax + " --images " + first +
                                   " --analyses rank --out " + dir.file("r"));
  ASSERT_EQ(ra.code, 0) << ra.out;
  int ranked = 0;
  for (const auto& c : read_csv_cells(dir.file("r/softmax__rank_heads.csv"))) {
    if (c.size() < 22 || c[3] != "output") continue;
    const double expected = std::stod(c[21]);  // effective_rank_mean
    const int64_t layer = std::stoll(c[0]), head = std::stoll(c[4]);
    EXPECT_NEAR(rank[0][layer][head].item<double>(), expected, 1e-4 * expected) << c[0] << c[4];
    ++ranked;
  }
  EXPECT_EQ(ranked, 8);
  EXPECT_TRUE(((rank >= 1) & (rank <= 64)).all().item<bool>());  // 1 ≤ exp(H) ≤ min(196, 64)
  // The extremes: per layer and head the 3 rows of lowest and highest mean, in order.
  const auto rows = read_csv_cells(dir.file("e/head_extremes.csv"));
  ASSERT_EQ(rows.size(), 1u + 4 * 2 * 2 * 3);
  for (size_t i = 1; i < rows.size(); ++i) {
    const int64_t layer = std::stoll(rows[i][0]), head = std::stoll(rows[i][2]);
    const at::Tensor column = mean.select(1, layer).select(1, head);
    const int64_t rank = std::stoll(rows[i][4]), row = std::stoll(rows[i][5]);
    const at::Tensor sorted = std::get<0>(column.sort(/*dim=*/0, rows[i][3] == "broadest"));
    EXPECT_NEAR(column[row].item<double>(), sorted[rank - 1].item<double>(), 1e-12) << i;
    EXPECT_NEAR(std::stod(rows[i][7]), column[row].item<double>(), 1e-5) << i;
    const int64_t q = patch[row][layer][head].item<int64_t>();
    EXPECT_EQ(rows[i][8], std::to_string(q / 14));
    EXPECT_EQ(rows[i][9], std::to_string(q % 14));
  }
  // Sharded and merged: the single run's arrays and table.
  std::string folders;
  for (int i = 0; i < 2; ++i) {
    const std::string d = dir.file("s" + std::to_string(i));
    const CliRun s = run_cli_single(
        "embed --model " + kEmbedSoftmax + " --images " + kEmbedSamples +
        " --batch 8 --heads --head-examples 3 --shard " + std::to_string(i) + "/2 --out " + d);
    ASSERT_EQ(s.code, 0) << s.out;
    folders += " " + d;
  }
  const CliRun merge = run_cli_single("merge" + folders + " --out " + dir.file("m"));
  ASSERT_EQ(merge.code, 0) << merge.out;
  for (const char* f : {"head_entropy.npy", "head_sharpest_patch.npy", "head_sharpest_entropy.npy",
                        "head_output_rank.npy", "head_extremes.csv", "heads.json"})
    EXPECT_EQ(read_text(dir.file(std::string("e/") + f)),
              read_text(dir.file(std::string("m/") + f)))
        << f;
}

}  // namespace

namespace {

// --features keys|queries (issue 70 goal 4). The vectors are checked against the block's
// projections computed here by hand, in float64, from the block's input as the forward
// records it (record_block_inputs) and the checkpoint's own norm1 and qkv weights — not
// the attention layer's code path, which the embedding reads from the trace.
TEST(EmbedFeatures, KeysAndQueriesAreTheBlocksProjectionsOfItsInput) {
  namespace models = attnlab::models;
  attnlab::io::TensorFile file = attnlab::io::read_tensor_file(kEmbedSoftmax);
  const nlohmann::json config = models::config_from_metadata(file.metadata);
  models::CheckpointWeights weights = models::read_checkpoint_weights(std::move(file));
  const int64_t layer = 1, c = 128, heads = 2;
  const std::string prefix = "blocks." + std::to_string(layer) + ".";
  // The weights as float64 (float16 in the file: exact in either float).
  const at::Tensor gamma = weights.tensors.at(prefix + "norm1.weight").to(at::kDouble);
  const at::Tensor beta = weights.tensors.at(prefix + "norm1.bias").to(at::kDouble);
  const at::Tensor qkv_w = weights.tensors.at(prefix + "attn.qkv.weight").to(at::kDouble);
  const at::Tensor qkv_b = weights.tensors.at(prefix + "attn.qkv.bias").to(at::kDouble);
  ASSERT_EQ(qkv_w.sizes(), (std::vector<int64_t>{3 * c, c}));
  const models::LoadedModel loaded = models::load_model(config, std::move(weights));
  models::Backbone& model = *loaded.model;
  const double eps = loaded.config.value("ln_eps", 1e-6);

  at::manual_seed(0);
  const at::Tensor images = at::randn({3, 3, 28, 28});
  const at::NoGradGuard no_grad;
  models::ForwardOptions record;
  record.record_block_inputs = true;
  const models::ForwardResult r = model.run(images, record);
  ASSERT_GT(r.block_inputs.size(), size_t(layer));
  ASSERT_EQ(r.block_inputs[size_t(layer)].block, "blocks." + std::to_string(layer));
  const at::Tensor x = r.block_inputs[size_t(layer)].input.to(at::kDouble);  // (B, 196, C)
  ASSERT_EQ(x.sizes(), (std::vector<int64_t>{3, 196, c}));
  const at::Tensor mu = x.mean(-1, true);
  const at::Tensor var = (x - mu).pow(2).mean(-1, true);
  const at::Tensor xn = (x - mu) / (var + eps).sqrt() * gamma + beta;

  at::Tensor seen[2];
  for (const auto features :
       {models::EmbeddingFeatures::queries, models::EmbeddingFeatures::keys}) {
    const bool keys = features == models::EmbeddingFeatures::keys;
    SCOPED_TRACE(models::embedding_features_name(features));
    // qkv's rows are [q | k | v], each head-major: head h's feature j is row h·d + j.
    const at::Tensor w = qkv_w.slice(0, keys ? c : 0, keys ? 2 * c : c);
    const at::Tensor b = qkv_b.slice(0, keys ? c : 0, keys ? 2 * c : c);
    const at::Tensor ref = (xn.matmul(w.t()) + b)
                               .reshape({3, 196, heads, c / heads})
                               .flatten(2);  // heads side by side
    // The model computes the same in float32: each entry a LayerNorm (a few roundings of a
    // relative u = 2^-24 on each normalised value) and a sum of C = 128 products plus the
    // bias, whose rounding error is at most about C·u·S with S = |LN(x)|·|W|ᵀ + |b| the sum
    // of the magnitudes (the standard γ_C bound; in practice ~√C·u·S). (C + 16)·u·S covers
    // both with room; the reference's own float64 error is 2^-29 times smaller. A wrong
    // projection (v, or k for q) or a wrong head order is off by O(|K|) ≫ this.
    const at::Tensor bound = double(c + 16) * std::ldexp(1.0, -24) *
                             (xn.abs().matmul(w.abs().t()) + b.abs()).reshape({3, 196, c});
    const models::EmbeddingBatch e =
        models::embed_batch(model, images, layer, models::EmbeddingPool::tokens, false, features);
    EXPECT_EQ(e.attention, "blocks." + std::to_string(layer) + ".attn");
    EXPECT_EQ(e.block, "blocks." + std::to_string(layer));
    EXPECT_EQ(e.layout.height, 14);
    EXPECT_EQ(e.layout.width, 14);
    EXPECT_TRUE(e.traces.empty());  // kept only for the head statistics
    ASSERT_EQ(e.features.sizes(), (std::vector<int64_t>{3, 196, c}));
    const at::Tensor diff = (e.features.to(at::kDouble) - ref).abs();
    EXPECT_TRUE((diff <= bound).all().item<bool>())
        << "worst excess " << (diff - bound).max().item<double>() << ", |ref| max "
        << ref.abs().max().item<double>();
    // The mean pool is the mean of those rows (the same bound, averaged, plus the float32
    // mean's own rounding: 196 additions of a relative u on values ≤ max|ref|).
    const models::EmbeddingBatch m =
        models::embed_batch(model, images, layer, models::EmbeddingPool::mean, false, features);
    ASSERT_EQ(m.features.sizes(), (std::vector<int64_t>{3, c}));
    const at::Tensor mean_bound = bound.mean(1) + 196 * std::ldexp(1.0, -24) * ref.abs().amax(1);
    EXPECT_TRUE(
        ((m.features.to(at::kDouble) - ref.mean(1)).abs() <= mean_bound).all().item<bool>());
    // No class token in the zoo's ViTs.
    EXPECT_THROW(
        models::embed_batch(model, images, layer, models::EmbeddingPool::cls, false, features),
        models::ModelError);
    seen[keys] = ref;
  }
  // Queries and keys are different projections: far apart, so each check above tells them apart.
  EXPECT_GT((seen[0] - seen[1]).abs().max().item<double>(),
            0.1 * seen[1].abs().max().item<double>());
  // The model's head reads the block output, not the keys: refused by name.
  try {
    models::embed_batch(model, images, layer, models::EmbeddingPool::head, false,
                        models::EmbeddingFeatures::keys);
    ADD_FAILURE() << "pool head with keys was accepted";
  } catch (const models::ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("--pool head"), std::string::npos) << e.what();
  }
}

std::string embed_features_first_line(const std::string& out) {
  const size_t from = out.find("retrieve: patch");
  return from == std::string::npos ? std::string() : out.substr(from, out.find('\n', from) - from);
}

TEST(EmbedCli, FeaturesKeysAndQueriesAreRecordedRetrievedAndRefused) {
  TempDir dir("embed_features");
  const std::string images = " --images " + kEmbedSamples + " --limit 6 --batch 3";
  const auto run = [&](const std::string& model, const std::string& opts, const std::string& out) {
    return run_cli_single("embed --model " + model + images + opts + " --out " + dir.file(out));
  };
  const CliRun tokens = run(kEmbedSoftmax, " --features keys --pool tokens", "keys_tokens");
  ASSERT_EQ(tokens.code, 0) << tokens.out;
  const CliRun mean = run(kEmbedSoftmax, " --features keys", "keys_mean");  // pool mean by default
  ASSERT_EQ(mean.code, 0) << mean.out;
  const CliRun queries = run(kEmbedSoftmax, " --features queries --pool tokens", "queries");
  ASSERT_EQ(queries.code, 0) << queries.out;
  const at::Tensor k = embed_npy(dir.file("keys_tokens/embeddings.npy"));
  const at::Tensor km = embed_npy(dir.file("keys_mean/embeddings.npy"));
  const at::Tensor q = embed_npy(dir.file("queries/embeddings.npy"));
  ASSERT_EQ(k.sizes(), (std::vector<int64_t>{6, 196, 128}));  // 2 heads × 64
  ASSERT_EQ(km.sizes(), (std::vector<int64_t>{6, 128}));
  // As in PoolsAgree: two float32 means over 196 values, a few ulps apart.
  const double scale = k.abs().max().item<double>();
  EXPECT_LT((k.mean(1) - km).abs().max().item<double>(), 1e-5 * scale);
  EXPECT_GT((k - q).abs().max().item<double>(), 0.1 * scale);
  const nlohmann::json meta = embed_json(dir.file("keys_tokens/embed.json"));
  EXPECT_EQ(meta.at("features"), "keys");
  EXPECT_EQ(meta.at("attention"), "blocks.3.attn");
  EXPECT_EQ(meta.at("pool"), "tokens");
  EXPECT_EQ(embed_json(dir.file("keys_mean/embed.json")).at("pool"), "mean");
  EXPECT_EQ(embed_json(dir.file("queries/embed.json")).at("features"), "queries");

  // Retrieval on the keys: rows come back, and the first line says what they are.
  const CliRun r =
      run_cli_single("retrieve " + dir.file("keys_tokens") + " --image 0 --patch 3,4 --k 5");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(embed_features_first_line(r.out).find("(keys of blocks.3.attn)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n    5  "), std::string::npos) << r.out;  // the 5th row
  // A folder written before --features (no key) holds the block output.
  const CliRun output = run(kEmbedSoftmax, " --pool tokens", "output");
  ASSERT_EQ(output.code, 0) << output.out;
  nlohmann::json old = embed_json(dir.file("output/embed.json"));
  EXPECT_EQ(old.at("features"), "output");
  old.erase("features");
  {
    std::ofstream f(dir.file("output/embed.json"));
    f << old.dump();
  }
  const CliRun ro =
      run_cli_single("retrieve " + dir.file("output") + " --image 0 --patch 3,4 --k 2");
  ASSERT_EQ(ro.code, 0) << ro.out;
  EXPECT_NE(embed_features_first_line(ro.out).find("(output of blocks.3)"), std::string::npos)
      << ro.out;

  // Refusals: an unknown word (usage, exit 2), the head pool, HiLo's pooled Lo-Fi keys.
  const CliRun word = run(kEmbedSoftmax, " --features values", "bad");
  EXPECT_EQ(word.code, 2) << word.out;
  EXPECT_NE(word.out.find("--features wants output, keys or queries, not 'values'"),
            std::string::npos)
      << word.out;
  const CliRun head = run(kEmbedSoftmax, " --features queries --pool head", "head");
  EXPECT_EQ(head.code, 1) << head.out;
  EXPECT_NE(head.out.find("--pool head"), std::string::npos) << head.out;
  const std::string hilo = kEmbedRoot + "/models/zoo/hilo.safetensors";
  const CliRun lofi = run(hilo, " --features keys", "hilo_keys");
  EXPECT_EQ(lofi.code, 1) << lofi.out;
  EXPECT_NE(lofi.out.find("blocks.3.attn (hilo)"), std::string::npos) << lofi.out;
  EXPECT_NE(lofi.out.find("keys are pooled 2x2"), std::string::npos) << lofi.out;
  EXPECT_FALSE(fs::exists(dir.file("hilo_keys/embeddings.npy")));
  // HiLo's queries are every token's, in both groups.
  const CliRun hq = run(hilo, " --features queries --pool tokens", "hilo_queries");
  ASSERT_EQ(hq.code, 0) << hq.out;
  EXPECT_EQ(embed_npy(dir.file("hilo_queries/embeddings.npy")).size(1), 196);

  // Shards of different features are not one run: merge refuses them.
  for (int i = 0; i < 2; ++i) {
    const CliRun s = run(kEmbedSoftmax,
                         std::string(" --features ") + (i == 0 ? "keys" : "queries") + " --shard " +
                             std::to_string(i) + "/2",
                         "shard" + std::to_string(i));
    ASSERT_EQ(s.code, 0) << s.out;
  }
  const CliRun merge = run_cli_single("merge " + dir.file("shard0") + " " + dir.file("shard1") +
                                      " --out " + dir.file("merged"));
  EXPECT_NE(merge.code, 0) << merge.out;
  EXPECT_NE(merge.out.find("options differ"), std::string::npos) << merge.out;
}

}  // namespace
