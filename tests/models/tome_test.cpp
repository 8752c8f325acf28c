// Token merging on the ViT family (models/token_merging.*, TomeBlock, arch "tome_vit", key
// "tome_r"): parity with the fixture tome_vit_mini (logits and every block's merged tokens
// within 1e-4, n_tokens, source and size exactly; .safetensors and .pth, config from the
// .config.json and from the metadata), "DeiT with ToMe r" (a vit with tome_r) on the same
// weights, r = 0 as the plain ViT, the clamp of a large r, batch independence, a
// configuration the fixture does not cover (batch 2, per-block r, with and without
// proportional attention) against the spec's steps written out independently here in
// float64 with plain loops, and the refusals.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "core/attention/capabilities.h"
#include "core/io/tensor_file.h"
#include "core/nn/state_loading.h"
#include "models/checkpoint_loading.h"
#include "models/model_config.h"
#include "models/model_registry.h"
#include "tests/support/fixtures.h"
#include "tests/support/float_compare.h"

namespace attnlab::testing {
namespace {

using models::Json;

std::string tome_base() {
  return parity_dir() + "/tome_vit_mini";
}

models::ForwardResult tome_run(models::Backbone& model, const at::Tensor& input) {
  models::ForwardOptions options;
  options.record_outputs = true;
  at::NoGradGuard no_grad;
  return model.run(input, options);
}

void tome_check_fixture(const Json& config, const std::string& weights, const std::string& tag) {
  auto model = models::make_backbone(config);
  model->eval();
  models::load_checkpoint(*model, weights);
  const auto expected = nn::read_tensor_map(tome_base() + ".expected.safetensors");
  const auto result = tome_run(*model, expected.at("input"));
  const double logits = max_abs_diff(result.logits, expected.at("logits"));
  std::printf("[tome] %s logits max|d| = %.3g\n", tag.c_str(), logits);
  EXPECT_LE(logits, 1e-4) << tag;
  for (const auto& [key, ref] : expected) {
    if (key == "input" || key == "logits") continue;
    const auto it = result.outputs.find(key);
    ASSERT_NE(it, result.outputs.end()) << tag << ": no output " << key;
    ASSERT_EQ(it->second.sizes(), ref.sizes()) << tag << ": " << key;
    if (key == "n_tokens" || key == "source" || key == "size") {
      EXPECT_TRUE(at::equal(it->second.to(at::kDouble), ref.to(at::kDouble)))
          << tag << ": " << key << " differs";
      continue;
    }
    const double d = max_abs_diff(it->second, ref);
    std::printf("[tome] %s %s max|d| = %.3g\n", tag.c_str(), key.c_str(), d);
    EXPECT_LE(d, 1e-4) << tag << ": " << key;
  }
  EXPECT_EQ(result.outputs.at("n_tokens").scalar_type(), at::kLong);
  EXPECT_TRUE(at::equal(result.outputs.at("n_tokens"), at::tensor({61, 57, 53, 49}, at::kLong)));
}

TEST(TomeParity, TomeVitMini) {
  const Json from_json = models::config_from_file(tome_base() + ".config.json");
  const Json from_metadata =
      models::config_from_metadata(io::read_tensor_file(tome_base() + ".safetensors").metadata);
  for (const std::string ext : {".safetensors", ".pth"}) {
    tome_check_fixture(from_json, tome_base() + ext, "tome_vit_mini" + ext + " (config.json)");
    tome_check_fixture(from_metadata, tome_base() + ext, "tome_vit_mini" + ext + " (metadata)");
  }
}

// "DeiT with ToMe r": the plain vit arch with tome_r runs the same model.
TEST(TomeParity, VitWithTomeR) {
  Json config = models::config_from_file(tome_base() + ".config.json");
  config["arch"] = "vit";
  config.erase("r");
  config["tome_r"] = 4;
  tome_check_fixture(config, tome_base() + ".safetensors", "vit + tome_r 4");
}

Json tome_small_config() {
  Json c = models::config_from_file(tome_base() + ".config.json");
  for (const char* k : {"source", "commit", "timm_commit", "init", "seed", "batch"}) c.erase(k);
  return c;
}

std::shared_ptr<models::Backbone> tome_fixture_model(const Json& config) {
  auto model = models::make_backbone(config);
  model->eval();
  models::load_checkpoint(*model, tome_base() + ".safetensors");
  return model;
}

at::Tensor tome_input() {
  return nn::read_tensor_map(tome_base() + ".expected.safetensors").at("input");
}

TEST(TomeModel, RZeroIsThePlainVit) {
  Json plain = tome_small_config();
  plain["arch"] = "vit";
  plain.erase("r");
  Json zero = plain;
  zero["tome_r"] = 0;
  const at::Tensor input = tome_input();
  const auto a = tome_run(*tome_fixture_model(plain), input);
  const auto b = tome_run(*tome_fixture_model(zero), input);
  EXPECT_TRUE(at::equal(a.logits, b.logits));  // the same model, not merely close
  EXPECT_EQ(b.outputs.count("n_tokens"), 0u);
  // tome_vit with r 0: the merging blocks merge nothing; sizes of one add log 1 = 0.
  Json tome_zero = tome_small_config();
  tome_zero["r"] = 0;
  const auto c = tome_run(*tome_fixture_model(tome_zero), input);
  EXPECT_LE(max_abs_diff(c.logits, a.logits), 1e-5);
  EXPECT_TRUE(at::equal(c.outputs.at("n_tokens"), at::tensor({65, 65, 65, 65}, at::kLong)));
  EXPECT_TRUE(at::equal(c.outputs.at("source")[0], at::eye(65)));
}

TEST(TomeModel, LargeRIsClampedPerBlock) {
  Json c = tome_small_config();
  c["r"] = 1000;  // r' = (T − 1)//2: 65 -> 33 -> 17 -> 9 -> 5
  const auto result = tome_run(*tome_fixture_model(c), tome_input());
  EXPECT_TRUE(at::equal(result.outputs.at("n_tokens"), at::tensor({33, 17, 9, 5}, at::kLong)));
  EXPECT_TRUE(at::isfinite(result.logits).all().item<bool>());
  // Every input token is in exactly one final token; the class token alone in the first.
  const at::Tensor source = result.outputs.at("source")[0];
  EXPECT_TRUE(at::equal(source.sum(0), at::ones({65})));
  EXPECT_EQ(source[0][0].item<float>(), 1.0f);
  EXPECT_EQ(source[0].sum().item<float>(), 1.0f);
  EXPECT_TRUE(at::equal(source.sum(1, true), result.outputs.at("size")[0]));
  // Deeper than the tokens allow: 3 tokens leave r' = 1, then 2 and 1 token merge nothing.
  Json deep = tome_small_config();
  deep["depth"] = 8;
  deep["r"] = 1000;
  auto model = models::make_backbone(deep);
  model->eval();
  const auto d = tome_run(*model, tome_input());
  EXPECT_TRUE(
      at::equal(d.outputs.at("n_tokens"), at::tensor({33, 17, 9, 5, 3, 2, 2, 2}, at::kLong)));
}

TEST(TomeModel, BatchIndependence) {
  auto model = tome_fixture_model(tome_small_config());
  at::manual_seed(5);
  const at::Tensor other = at::randn({1, 3, 32, 32});
  const at::Tensor both = at::cat({tome_input(), other});
  const auto together = tome_run(*model, both);
  const auto first = tome_run(*model, tome_input());
  const auto second = tome_run(*model, other);
  EXPECT_LE(max_abs_diff(together.logits[0], first.logits[0]), 1e-5);
  EXPECT_LE(max_abs_diff(together.logits[1], second.logits[0]), 1e-5);
  EXPECT_TRUE(at::equal(together.outputs.at("source")[1], second.outputs.at("source")[0]));
  EXPECT_EQ(together.outputs.count("source.blocks.0"), 1u);  // per block, for analyses
}

// Gradients reach every parameter through the merges (the decisions themselves carry none),
// and the merging runs at another input size (resampled positions, 48×40: 121 tokens).
TEST(TomeModel, GradientsAndOtherSizes) {
  auto model = tome_fixture_model(tome_small_config());
  model->train();
  model->run(tome_input()).logits.pow(2).sum().backward();
  for (const auto& kv : model->named_parameters()) {
    ASSERT_TRUE(kv.value().grad().defined()) << kv.key();
    EXPECT_GT(kv.value().grad().abs().sum().item<double>(), 0.0) << kv.key();
  }
  Json c = tome_small_config();
  c["input_size"] = {48, 40};
  auto resized = tome_fixture_model(c);
  at::manual_seed(3);
  const auto r = tome_run(*resized, at::randn({2, 3, 48, 40}));
  EXPECT_TRUE(at::equal(r.outputs.at("n_tokens"), at::tensor({117, 113, 109, 105}, at::kLong)));
  EXPECT_TRUE(at::isfinite(r.logits).all().item<bool>());
}

// ---- The spec's steps, written out again in float64 with loops (one image at a time). ----

struct TomeRefTokens {
  std::vector<at::Tensor> x;                  // (C,) each
  std::vector<double> size;                   // tokens per token
  std::vector<std::vector<int64_t>> members;  // input tokens in each
};

at::Tensor tome_ref_ln(const at::Tensor& x, const std::map<std::string, at::Tensor>& p,
                       const std::string& name) {
  const at::Tensor mean = x.mean(-1, true);
  const at::Tensor var = (x - mean).pow(2).mean(-1, true);
  return (x - mean) / (var + 1e-6).sqrt() * p.at(name + ".weight") + p.at(name + ".bias");
}

at::Tensor tome_ref_linear(const at::Tensor& x, const std::map<std::string, at::Tensor>& p,
                           const std::string& name) {
  return x.matmul(p.at(name + ".weight").t()) + p.at(name + ".bias");
}

// What one block's attention saw: its tokens' members and sizes, and each head's (T, T)
// softmax over the merged tokens.
struct TomeRefBlock {
  std::vector<std::vector<int64_t>> members;
  std::vector<double> size;
  std::vector<at::Tensor> attn;
};

// One image (3, H, W) through the spec's model; returns the logits and the final tokens
// (and, when `blocks` is given, what each block's attention saw).
std::pair<at::Tensor, TomeRefTokens> tome_reference(const at::Tensor& image,
                                                    const std::map<std::string, at::Tensor>& p,
                                                    const std::vector<int64_t>& rs, int64_t heads,
                                                    bool prop_attn,
                                                    std::vector<TomeRefBlock>* blocks = nullptr) {
  const at::Tensor w = p.at("patch_embed.proj.weight");
  const int64_t c = w.size(0), patch = w.size(2), g = image.size(1) / patch;
  TomeRefTokens t;
  t.x.push_back(p.at("cls_token").reshape({c}) + p.at("pos_embed")[0][0]);
  for (int64_t i = 0; i < g; ++i)
    for (int64_t j = 0; j < g; ++j) {
      const at::Tensor piece =
          image.slice(1, i * patch, (i + 1) * patch).slice(2, j * patch, (j + 1) * patch);
      t.x.push_back((w * piece).sum({1, 2, 3}) + p.at("patch_embed.proj.bias") +
                    p.at("pos_embed")[0][1 + i * g + j]);
    }
  for (int64_t n = 0; n < static_cast<int64_t>(t.x.size()); ++n) {
    t.size.push_back(1.0);
    t.members.push_back({n});
  }
  const int64_t d = c / heads;
  for (size_t blk = 0; blk < rs.size(); ++blk) {
    const std::string b = "blocks." + std::to_string(blk);
    const at::Tensor x = at::stack(t.x);  // (T, C)
    const int64_t tokens = x.size(0);
    const at::Tensor qkv = tome_ref_linear(tome_ref_ln(x, p, b + ".norm1"), p, b + ".attn.qkv");
    std::vector<at::Tensor> outs;
    TomeRefBlock seen{t.members, t.size, {}};
    at::Tensor metric = at::zeros({tokens, d}, at::kDouble);
    for (int64_t h = 0; h < heads; ++h) {
      const at::Tensor q = qkv.slice(1, h * d, (h + 1) * d);
      const at::Tensor k = qkv.slice(1, c + h * d, c + (h + 1) * d);
      const at::Tensor v = qkv.slice(1, 2 * c + h * d, 2 * c + (h + 1) * d);
      at::Tensor logits = q.matmul(k.t()) / std::sqrt(static_cast<double>(d));
      if (prop_attn)
        for (int64_t j = 0; j < tokens; ++j)
          logits.select(1, j).add_(std::log(t.size[static_cast<size_t>(j)]));
      seen.attn.push_back(logits.softmax(1));
      outs.push_back(seen.attn.back().matmul(v));
      metric = metric + k / static_cast<double>(heads);
    }
    if (blocks) blocks->push_back(seen);
    const at::Tensor y = x + tome_ref_linear(at::cat(outs, 1), p, b + ".attn.proj");
    // Step 3: A = even positions, B = odd; cosine scores; A[0] never merges.
    const int64_t r = std::min(rs[blk], (tokens - 1) / 2);
    std::vector<int64_t> a_pos, b_pos;
    for (int64_t i = 0; i < tokens; ++i) (i % 2 == 0 ? a_pos : b_pos).push_back(i);
    std::vector<double> best(a_pos.size(), -INFINITY);
    std::vector<size_t> partner(a_pos.size(), 0);
    for (size_t ai = 1; ai < a_pos.size(); ++ai)
      for (size_t bi = 0; bi < b_pos.size(); ++bi) {
        const at::Tensor u = metric[a_pos[ai]], v = metric[b_pos[bi]];
        const double cos = (u.dot(v) / (u.norm() * v.norm())).item<double>();
        if (cos > best[ai]) {
          best[ai] = cos;
          partner[ai] = bi;
        }
      }
    std::vector<size_t> order(a_pos.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t l, size_t m) { return best[l] > best[m]; });
    std::vector<bool> merged(a_pos.size(), false);
    for (int64_t i = 0; i < std::max<int64_t>(r, 0); ++i)
      merged[order[static_cast<size_t>(i)]] = true;
    // Steps 4-5: [unmerged A in position order, then B], size-weighted averages.
    TomeRefTokens next;
    std::vector<at::Tensor> weighted;
    auto add = [&](int64_t pos) {
      weighted.push_back(y[pos] * t.size[static_cast<size_t>(pos)]);
      next.size.push_back(t.size[static_cast<size_t>(pos)]);
      next.members.push_back(t.members[static_cast<size_t>(pos)]);
    };
    for (size_t ai = 0; ai < a_pos.size(); ++ai)
      if (!merged[ai]) add(a_pos[ai]);
    const size_t first_b = weighted.size();
    for (int64_t pos : b_pos) add(pos);
    for (size_t ai = 0; ai < a_pos.size(); ++ai) {
      if (!merged[ai]) continue;
      const size_t dst = first_b + partner[ai];
      const auto pos = static_cast<size_t>(a_pos[ai]);
      weighted[dst] = weighted[dst] + y[a_pos[ai]] * t.size[pos];
      next.size[dst] += t.size[pos];
      for (int64_t m : t.members[pos]) next.members[dst].push_back(m);
    }
    for (size_t i = 0; i < weighted.size(); ++i) next.x.push_back(weighted[i] / next.size[i]);
    // Step 6 on the merged tokens.
    const at::Tensor z = at::stack(next.x);
    const at::Tensor hidden = tome_ref_linear(tome_ref_ln(z, p, b + ".norm2"), p, b + ".mlp.fc1");
    const at::Tensor out =
        z +
        tome_ref_linear(0.5 * hidden * (1 + at::erf(hidden / std::sqrt(2.0))), p, b + ".mlp.fc2");
    for (size_t i = 0; i < next.x.size(); ++i) next.x[i] = out[static_cast<int64_t>(i)];
    t = std::move(next);
  }
  const at::Tensor cls = tome_ref_ln(t.x[0], p, "norm");
  return {tome_ref_linear(cls, p, "head"), t};
}

TEST(TomeModel, MatchesTheSpecWrittenOutOnAnotherConfiguration) {
  for (bool prop : {true, false}) {
    Json c = tome_small_config();
    c["r"] = Json::array({3, 7, 40, 2});  // 65 -> 62 -> 55 -> 28 -> 26
    c["prop_attn"] = prop;
    c["num_heads"] = 4;
    at::manual_seed(11);
    auto model = models::make_backbone(c);
    model->eval();
    model->to(at::kDouble);  // float64 both sides: the discrete decisions cannot flip
    std::map<std::string, at::Tensor> params;
    for (const auto& kv : model->named_parameters()) params[kv.key()] = kv.value().detach();
    // Random weights start near-uniform; larger positions make the tokens distinct.
    params.at("pos_embed").normal_(0, 0.5);
    at::manual_seed(12);
    const at::Tensor images = at::randn({2, 3, 32, 32}, at::kDouble);
    const auto result = tome_run(*model, images);
    EXPECT_TRUE(at::equal(result.outputs.at("n_tokens"), at::tensor({62, 55, 28, 26}, at::kLong)));
    for (int64_t b = 0; b < 2; ++b) {
      const auto [logits, tokens] = tome_reference(images[b], params, {3, 7, 40, 2}, 4, prop);
      EXPECT_LE(max_abs_diff(result.logits[b], logits), 1e-9) << "prop " << prop;
      EXPECT_LE(max_abs_diff(result.outputs.at("out.blocks.3")[b], at::stack(tokens.x)), 1e-9);
      at::Tensor source = at::zeros({26, 65}, at::kDouble);
      for (size_t i = 0; i < tokens.members.size(); ++i)
        for (int64_t m : tokens.members[i]) source[static_cast<int64_t>(i)][m] = 1.0;
      EXPECT_TRUE(at::equal(result.outputs.at("source")[b], source)) << "image " << b;
      EXPECT_TRUE(
          at::equal(result.outputs.at("size")[b].squeeze(1), at::tensor(tokens.size, at::kDouble)));
    }
  }
}

void tome_expect_refused(const Json& c, const std::string& fragment) {
  try {
    models::make_backbone(c);
    ADD_FAILURE() << "accepted: " << c.dump();
  } catch (const models::ModelError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(TomeModel, Refusals) {
  Json c = tome_small_config();
  c["r"] = -1;
  tome_expect_refused(c, "must not be negative");
  c["r"] = Json::array({1, 2});
  tome_expect_refused(c, "list of 4 integers");
  c["r"] = 4;
  c["tome_r"] = 5;
  tome_expect_refused(c, "disagrees with 'r'");
  Json plain = tome_small_config();
  plain["arch"] = "vit";
  plain.erase("r");
  plain["tome_r"] = 2;
  plain["attention"] = "linear";
  plain["class_token"] = false;
  tome_expect_refused(plain, "needs softmax attention");
  plain.erase("attention");
  tome_expect_refused(plain, "class_token must be true");
  plain.erase("class_token");
  plain["distilled"] = true;
  tome_expect_refused(plain, "dist token");
  Json dino = tome_small_config();
  dino["arch"] = "dino_vit";
  dino.erase("r");
  dino["tome_r"] = 2;
  tome_expect_refused(dino, "vit and tome_vit only");
  // Traces without proportional attention (the carried-back rows would not be a softmax
  // over the input tokens) are refused with a message, not run wrongly.
  Json plain_attn = tome_small_config();
  plain_attn["prop_attn"] = false;
  auto model = tome_fixture_model(plain_attn);
  models::ForwardOptions traced;
  traced.trace_attention = true;
  EXPECT_THROW(model->run(tome_input(), traced), models::ModelError);
}

// The traced forward's view (TomeAttention::trace_on_inputs): every block's trace, on the
// input tokens, holds the merged attention carried back — input p's row gives input q the
// weight A[t(p), t(q)] / s_t(q) of the spec's merged attention written out above (t: the
// merged token holding it) — and its owners are the spec's members. Tolerance: the traced
// rows are float32 softmaxes of the same logits, against float64 (1e-5 covers float32's
// 6e-8 relative rounding through LN, two products and exp on ~50 tokens many times over).
TEST(TomeTraces, RowsAreTheMergedAttentionCarriedBackToTheInputs) {
  const Json c = tome_small_config();
  auto model = tome_fixture_model(c);
  const auto params = nn::read_tensor_map(tome_base() + ".safetensors");
  std::map<std::string, at::Tensor> p64;
  for (const auto& [k, v] : params) p64[k] = v.to(at::kDouble);
  const at::Tensor input = tome_input();
  models::ForwardOptions options;
  options.trace_attention = true;
  options.record_outputs = true;
  at::NoGradGuard no_grad;
  const auto result = model->run(input, options);
  const int64_t heads = c.at("num_heads").get<int64_t>();
  std::vector<int64_t> rs(static_cast<size_t>(c.at("depth").get<int64_t>()),
                          c.at("r").get<int64_t>());
  for (int64_t b = 0; b < input.size(0); ++b) {
    std::vector<TomeRefBlock> blocks;
    tome_reference(input[b].to(at::kDouble), p64, rs, heads, true, &blocks);
    ASSERT_EQ(result.traces.size(), blocks.size());
    for (size_t i = 0; i < blocks.size(); ++i) {
      const auto& trace = *result.traces[i].trace;
      EXPECT_EQ(result.traces[i].path, "blocks." + std::to_string(i) + ".attn");
      EXPECT_TRUE(trace.offers(attention::capability::kMergedTokens));
      const TomeRefBlock& ref = blocks[i];
      const int64_t n = trace.layout.tokens();
      std::vector<int64_t> owner(static_cast<size_t>(n), -1);
      for (size_t t = 0; t < ref.members.size(); ++t)
        for (int64_t m : ref.members[t]) owner[static_cast<size_t>(m)] = static_cast<int64_t>(t);
      const at::Tensor got_owner = trace.internal("tome.owner")[b];
      for (int64_t q = 0; q < n; ++q)
        ASSERT_EQ(got_owner[q].item<int64_t>(), owner[static_cast<size_t>(q)]) << "block " << i;
      for (int64_t h = 0; h < heads; ++h) {
        at::Tensor expected = at::empty({n, n}, at::kDouble);
        const at::Tensor a = ref.attn[static_cast<size_t>(h)];
        for (int64_t pi = 0; pi < n; ++pi)
          for (int64_t qi = 0; qi < n; ++qi) {
            const auto tq = static_cast<size_t>(owner[static_cast<size_t>(qi)]);
            expected[pi][qi] =
                a[owner[static_cast<size_t>(pi)]][static_cast<int64_t>(tq)].item<double>() /
                ref.size[tq];
          }
        const double d = max_abs_diff(trace.matrix(b, h), expected);
        EXPECT_LE(d, 1e-5) << "block " << i << " head " << h;
      }
    }
  }
  // What block outputs the analyses read: the merged tokens carried back the same way.
  const at::Tensor owner = result.traces.back().trace->internal("tome.merged_owner");
  const at::Tensor last = result.outputs.at("out.blocks." + std::to_string(rs.size() - 1));
  EXPECT_EQ(owner.size(1), result.traces.back().trace->layout.tokens());
  EXPECT_LT(owner.max().item<int64_t>(), last.size(1));
}

}  // namespace
}  // namespace attnlab::testing
