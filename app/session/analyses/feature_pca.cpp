// feature_pca: DINOv2's patch-feature PCA shown as RGB (Oquab et al. 2023;
// core/analysis/feature_pca.h). The step keeps each image's grid of tokens (the final
// norm's output where the model records its tokens, else a block output; prefix tokens
// left out); finish() fits one basis on every kept image together, so one feature has one
// colour across the images, and emits per image the RGB array and the foreground mask.
// Figures: per image the picture, its PCA colours and its foreground (the report, one
// figure per model; the GUI's Feature PCA tab, fitted on the current image alone).
// Its figures (report, series, GUI tab): feature_pca_figures.cpp.
#include <ATen/ATen.h>

#include <cctype>
#include <filesystem>
#include <memory>

#include "app/session/analyses/step_helpers.h"
#include "core/analysis/feature_pca.h"
#include "core/io/npy.h"
#include "core/io/torch_bridge.h"

namespace attnlab::session {
namespace {

// The grids kept for the fit are float32 on the CPU; beyond this many bytes an image is
// left out (the fit itself then works on float64 copies: about twice as much again).
constexpr int64_t kFpcaMaxGridBytes = int64_t(1) << 30;

struct FpcaStore {
  std::vector<std::string> tags;
  std::vector<at::Tensor> grids;  // (H, W, C) float32 CPU
  std::string tokens;             // the recorded output they came from: "out.norm", ...
  int64_t bytes = 0;
  int64_t left_out = 0;  // images refused by the memory limit
};

struct FpcaTokens {
  at::Tensor tokens;  // (N, C) float64, layout order
  attention::TokenLayout layout;
  std::string source;
};

// The tokens `--pca-layer` asks for: "last" is the final norm's output where the model
// records it with every token (ViT with a cls token, DINO, Swin, LITv2, RAVLT), else the
// block output of the last selected layer (global-pool ViTs and CLIP record only pooled
// features there); N is traced layer N's block output, selected or not.
FpcaTokens fpca_tokens(const ImageStep& s) {
  const std::string which = s.settings.options.text("pca-layer");
  const auto& traces = s.result.traces;
  if (which == "last") {
    const auto norm = s.result.outputs.find("out.norm");
    if (norm != s.result.outputs.end() && !traces.empty()) {
      const attention::TokenLayout& layout = traces.back().trace->layout;
      try {
        return {block_tokens(norm->second, s.b, layout), layout, "out.norm"};
      } catch (const attention::TraceQueryError& e) {
        s.session.warn(
            "feature_pca: the final norm's output does not hold the last layer's tokens (" +
            std::string(e.what()) + "); using the last selected layer's block output");
      }
    }
    const SessionLayer& l = s.layers.back();
    return {block_output_tokens(s.result, l.path, l.trace->layout, s.b), l.trace->layout,
            "out." + block_of(l.path)};
  }
  const bool digits =
      !which.empty() && which.size() < 10 && std::all_of(which.begin(), which.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      });
  if (!digits)
    throw attention::TraceQueryError("--pca-layer wants a traced layer index or 'last', not '" +
                                     which + "'");
  const size_t n = std::stoul(which);
  if (n >= traces.size())
    throw attention::TraceQueryError("--pca-layer " + which + ": the model has " +
                                     std::to_string(traces.size()) + " traced layers (0 to " +
                                     std::to_string(int64_t(traces.size()) - 1) + ")");
  const auto& t = traces[n];
  return {block_output_tokens(s.result, t.path, t.trace->layout, s.b), t.trace->layout,
          "out." + block_of(t.path)};
}

FpcaStore& fpca_store(AnalysisSession& session) {
  auto& slot = session.step_cache("feature_pca");
  if (!slot) slot = std::make_shared<FpcaStore>();
  return *std::static_pointer_cast<FpcaStore>(slot);
}

// Keeps an image's grid for the fit, or counts it left out past the memory limit: in the
// images' order, whether they come one by one or from the shards of a run.
void keep_grid(FpcaStore& store, const std::string& tag, const at::Tensor& grid,
               const std::string& source) {
  const int64_t bytes = grid.numel() * int64_t(sizeof(float));
  if (store.bytes + bytes > kFpcaMaxGridBytes) {
    ++store.left_out;
    return;
  }
  if (store.tokens.empty()) store.tokens = source;
  store.tags.push_back(tag);
  store.grids.push_back(grid);
  store.bytes += bytes;
}

void add_feature_pca(ImageStep& s) {
  const FpcaTokens t = fpca_tokens(s);
  const int64_t p = t.layout.num_prefix();
  const at::Tensor grid = t.tokens.slice(0, p)
                              .reshape({t.layout.height, t.layout.width, t.tokens.size(1)})
                              .to(at::kFloat)
                              .contiguous();
  keep_grid(fpca_store(s.session), s.image, grid, t.source);
}

// A shard's kept grids as float32 .npy (the fit reads them back in the list's order), and
// how many the limit left out there. The merge keeps the grids under the limit in the
// list's order, as the single run does; a shard's left-out images are past the limit in the
// whole run too when the grids have one size (one model at one input size, the rule).
nlohmann::json save_feature_pca(AnalysisSession& session, const std::string& dir) {
  FpcaStore& store = fpca_store(session);
  std::filesystem::create_directories(dir);
  nlohmann::json grids = nlohmann::json::array();
  for (size_t i = 0; i < store.grids.size(); ++i) {
    const std::string file = "grid" + std::to_string(i) + ".npy";
    io::write_npy(dir + "/" + file, io::from_torch(store.grids[i]));
    grids.push_back({{"tag", store.tags[i]}, {"file", file}});
  }
  return {{"grids", grids}, {"tokens", store.tokens}, {"left_out", store.left_out}};
}

void absorb_feature_pca(AnalysisSession& session, const nlohmann::json& saved,
                        const std::string& dir) {
  FpcaStore& store = fpca_store(session);
  const std::string tokens = saved.at("tokens").get<std::string>();
  for (const auto& g : saved.at("grids")) {
    const std::string file = g.at("file").get<std::string>();
    if (file.find('/') != std::string::npos)
      throw std::runtime_error(dir + ": a grid file outside its folder");
    const at::Tensor grid = io::to_torch(io::read_npy(dir + "/" + file));
    if (grid.dim() != 3 || grid.scalar_type() != at::kFloat)
      throw std::runtime_error(dir + "/" + file + ": a token grid is (H, W, C) float32");
    keep_grid(store, g.at("tag").get<std::string>(), grid, tokens);
  }
  store.left_out += saved.at("left_out").get<int64_t>();
}

void finish_feature_pca(AnalysisSession& session) {
  auto& slot = session.step_cache("feature_pca");
  if (!slot) return;  // no image reached the step
  const std::shared_ptr<FpcaStore> store = std::static_pointer_cast<FpcaStore>(slot);
  slot.reset();  // the grids go when this fit is done
  const size_t kept = store->grids.size();
  if (store->left_out > 0)
    session.warn(
        "feature_pca: the token grids kept for the fit are limited to 1 GiB (float32); "
        "fitted on the first " +
        std::to_string(kept) + " of " + std::to_string(kept + size_t(store->left_out)) +
        " images, the others have no feature PCA");
  if (kept == 0) return;
  analysis::FeaturePcaOptions o;
  o.threshold = session.settings().options.real("pca-threshold");
  o.foreground = !session.settings().options.flag("pca-no-mask");
  analysis::FeaturePcaFit fit;
  try {
    fit = analysis::fit_feature_pca(store->grids, o);
  } catch (const std::invalid_argument& e) {  // no foreground token at this threshold
    session.warn(std::string("feature_pca: ") + e.what());
    return;
  }
  const analysis::FeaturePcaBasis& basis = fit.basis;
  analysis::Table table = make_table(
      "feature_pca",
      "DINOv2's feature PCA of the grid tokens of " + store->tokens +
          " (prefix tokens left out), fitted on all " + std::to_string(kept) +
          " images together: per image the grid, the foreground (the min-max scaled first "
          "component of a PCA of all tokens above the threshold; every token when masked = 0) "
          "and its share of the grid; the basis: whether the border rule flipped the first "
          "component, and the explained variance ratio of the three components shown as red, "
          "green and blue (of the foreground tokens' total variance)",
      {"image", "tokens", "height", "width", "channels", "foreground_tokens", "foreground_share",
       "threshold", "masked", "flipped", "explained_pc1", "explained_pc2", "explained_pc3",
       "images_fitted"},
      2);
  for (size_t i = 0; i < kept; ++i) {
    const analysis::FeaturePcaImage& im = fit.images[i];
    const std::string& tag = store->tags[i];
    const int64_t h = im.foreground.size(0), w = im.foreground.size(1);
    const int64_t fg = im.foreground.sum().item<int64_t>();
    session.emit(to_array(im.rgb,
                          analysis::format_result_key({"feature_pca", tag, -1, "", "", "rgb"}),
                          {"y", "x", "rgb"},
                          "feature PCA colours of every grid token of " + store->tokens +
                              ": components 1-3 of the foreground tokens of all images, min-max "
                              "scaled to [0, 1]; background tokens black"));
    session.emit(to_array(
        im.foreground.to(at::kFloat),
        analysis::format_result_key({"feature_pca", tag, -1, "", "", "foreground"}), {"y", "x"},
        "1 where the token is foreground: the scaled first component of a PCA of all tokens "
        "above " +
            analysis::Cell(o.threshold).str() + (o.foreground ? "" : " (mask off: every token)")));
    table.add_row({tag, store->tokens, h, w, store->grids[i].size(2), fg,
                   double(fg) / double(h * w), o.threshold, int64_t(o.foreground),
                   int64_t(basis.fg_flipped), basis.explained[0].item<double>(),
                   basis.explained[1].item<double>(), basis.explained[2].item<double>(),
                   int64_t(kept)});
  }
  session.accumulate(table);
}

std::vector<AnalysisOption> feature_pca_options() {
  // Fields assigned one by one: an aggregate initialiser leaving some out warns.
  auto option = [](std::string name, AnalysisOption::Kind kind, std::string value_name,
                   nlohmann::json value, std::string help) {
    AnalysisOption o;
    o.name = std::move(name);
    o.kind = kind;
    o.value_name = std::move(value_name);
    o.default_value = std::move(value);
    o.help = std::move(help);
    return o;
  };
  using Kind = AnalysisOption::Kind;
  AnalysisOption threshold = option("pca-threshold", Kind::Real, "T", 0.5,
                                    "foreground = the min-max scaled first component above T");
  threshold.min = 0;
  threshold.max = 1;
  return {threshold,
          option("pca-no-mask", Kind::Flag, "", false, "no foreground mask: every token coloured"),
          option("pca-layer", Kind::Text, "N|last", "last",
                 "the tokens of traced layer N's block output; last: the final "
                 "norm's output (else the last selected layer's block output)")};
}

}  // namespace

AnalysisInfo feature_pca_analysis() {
  AnalysisInfo info;
  info.name = "feature_pca";
  info.summary =
      "DINOv2's feature PCA: the grid tokens' first three principal components as RGB, fitted "
      "on all images together, the background masked by the first component";
  info.tables = {"feature_pca"};
  info.arrays = {"feature_pca__<image>__rgb", "feature_pca__<image>__foreground"};
  info.key_shape = analysis::ResultKeyShape{true, false, false, false, true};
  info.needs_outputs = true;
  info.in_image_analysis = true;  // the GUI's tab: fitted on the current image alone
  info.add = add_feature_pca;
  info.finish = finish_feature_pca;
  info.save_shard = save_feature_pca;
  info.absorb_shard = absorb_feature_pca;
  info.options = feature_pca_options();
  info.describe = [](const AnalysisSettings& s) {
    return nlohmann::json{
        {"tokens",
         "--pca-layer last: the final norm's output where recorded with every token, else the "
         "last selected layer's block output; N: traced layer N's block output; prefix tokens "
         "(cls, dist, registers) left out"},
        {"fit", "one basis fitted on every image of the run together (core/analysis/feature_pca)"},
        {"foreground",
         s.options.flag("pca-no-mask")
             ? "every token (--pca-no-mask)"
             : "the first component of a PCA of all tokens, min-max scaled over them, above " +
                   analysis::Cell(s.options.real("pca-threshold")).str() +
                   "; oriented so that the border tokens score lower than the interior "
                   "(the table's flipped says whether that changed its sign)"},
        {"colours",
         "components 1-3 of the foreground tokens as red, green, blue, each min-max scaled "
         "over them; largest-magnitude loading positive; background black"},
        {"memory_limit_bytes", kFpcaMaxGridBytes}};
  };
  return info;
}

}  // namespace attnlab::session
