// The ViT / DeiT family (SPEC §2.1, §2.4, §2.5), one skeleton for three archs:
//   "vit"                    timm VisionTransformer (DeiT) with any registered mechanism as
//                            the blocks' attention ("DeiT with attention X")
//   "anchor_deit_distilled"  AnchorFormer's distilled DeiT: cls + dist tokens, anchor
//                            attention, head and head_dist averaged (timm's softmax
//                            deit_*_distilled_* is "vit" with distilled true)
//   "castling_deit"          our Castling-DeiT: the DeiT skeleton with castling attention
//   "dino_vit"               DINO's VisionTransformer (facebookresearch/dino): the timm
//                            layout, softmax; forward returns the final norm's cls token
//                            (a head, present when num_classes > 0, is never applied)
//   "dinov2_vit"             DINOv2's DinoVisionTransformer: LayerScale (ls1/ls2.gamma),
//                            register tokens after cls (no position embedding), an unused
//                            mask_token, the final norm's cls token as its output
//   "tome_vit"               timm 0.4.12's ViT with token merging (ToMe, below); the plain
//                            ViT's state dict
// Forward (timm): patch_embed.proj → tokens; prepend cls (, dist); + pos_embed;
// blocks.i: x += attn(norm1(x)); x += mlp(norm2(x)); then either norm and the head on the
// cls token, or (class_token false, as timm's global_pool='avg') the mean of the patch
// tokens, fc_norm and the head. The state-dict keys are the reference ones, in the
// reference order, so official checkpoints load strictly. The blocks are in vit_blocks.*.
//
// Config keys (defaults): img_size (224), patch_size (16), embed_dim, depth, num_heads,
// mlp_ratio (4.0), class_token (true; false for grid-only mechanisms), num_classes (1000),
// ln_eps (1e-6), pos_embed_init ("normal": timm's 0.02 normal; "sincos": 2-D sin-cos, for
// training from scratch), attention ("softmax"; fixed "anchor" / "castling" for the other archs),
// attention_options ({}), and, for mechanisms with the matching option, qkv_bias (true;
// castling_deit false) -> qkv_bias, num_anchors (30) -> anchors, sparse_threshold (0.02)
// -> threshold, res_kernel_size (9) -> kernel. A key given beside a different value of its
// option in attention_options is refused; otherwise attention_options wins over a default.
// distilled (false): a dist token after cls and a head_dist, averaged with head at eval
// (timm's VisionTransformerDistilled). input_size ([img_size, img_size]): the [H, W] the
// model runs at; another size than img_size resamples the grid part of pos_embed at each
// forward, prefix tokens kept, with pos_embed_interpolation "bicubic" (default:
// align_corners false, no antialiasing — DeiT's fine-tuning code) or "bicubic_antialias"
// (timm's resample_abs_pos_embed). The checkpoint keeps its trained pos_embed shape.
// DINO and DINOv2 resample as their interpolate_pos_encoding does: with interpolate_offset
// o > 0 (DINO: always 0.1) bicubic with the scale factor (n + o)/M passed to the kernel
// (it samples at ratio M/(n + o), not M/n), antialiased where interpolate_antialias; with
// o = 0 by output size (the _reg releases: antialiased). Keys of dino_vit: img_size,
// patch_size, embed_dim, depth, num_heads, mlp_ratio, qkv_bias (true), num_classes (0),
// interpolate_offset (0.1), ln_eps (1e-6); of dinov2_vit also init_values (LayerScale's
// initial gamma; null: no LayerScale), num_register_tokens (0), interpolate_antialias
// (false), ffn_layer ("mlp" only), proj_bias and ffn_bias (true only), block_chunks (0 only).
// Token merging (ToMe; SPEC_COMPARISON "Token merging"; models/token_merging.h): tome_r
// on a "vit" ("DeiT with ToMe r"), or r (alias tome_r) on "tome_vit": an int r merged away
// in every block, or a list of depth ints (one per block); r' = min(r, (T − 1)//2) per
// block, so a large r or few tokens left are clamped, never refused. ToMe's (r,
// inflection) schedule is not built (refused). tome_prop_attn / prop_attn (true): log
// sizes added to every key column; tome_trace_source / trace_source (true): the source
// matrices are recorded. Needs softmax attention (the qkv/proj layout, the metric is its
// k) and the class token (protected), no dist token. On "vit" an all-zero r is the plain
// model itself; "tome_vit" always runs the merging blocks. Recorded beside "out.blocks.i":
// "source.blocks.i" (B, T_i, T₀) after each block, and after the last "n_tokens" (depth,)
// int64, "source" (B, T, T₀) and "size" (B, T, 1) (the fixture's names). A traced forward
// (prop_attn only) traces each block's attention carried back to the input tokens
// (TomeAttention::trace_on_inputs, capability "merged tokens"); merged forwards are not
// resumed.
// The family's presets, recognition, preprocessing and sizes: vit_family.cpp.
#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/attention/layers.h"
#include "core/attention/registry.h"
#include "core/nn/initial_values.h"
#include "core/nn/state_loading.h"
#include "models/backbone.h"
#include "models/model_config.h"
#include "models/token_merging.h"
#include "models/vit.h"
#include "models/vit_blocks.h"

namespace attnlab::models {
namespace {

using attention::LinearLayer;
using vit::Block;
using vit::PatchEmbed;
using vit::TomeBlock;

const std::string kVitFamily = "vit";

[[noreturn]] void refuse(const std::string& key, const std::string& what) {
  throw ModelError(kVitFamily + " config: '" + key + "' " + what);
}

// The resolved configuration.
struct VitSpec {
  std::string arch;
  int64_t img_size = 224, patch_size = 16, embed_dim = 0, depth = 0, num_heads = 0;
  int64_t num_classes = 1000, mlp_hidden = 0;
  double ln_eps = 1e-6;
  bool sincos_positions = false;  // pos_embed_init "sincos": start from 2-D sin-cos positions
  bool class_token = true, distilled = false;  // distilled: a dist token and head_dist
  int64_t input_h = 224, input_w = 224;        // the size the model runs at
  bool antialias_positions = false;            // pos_embed_interpolation bicubic_antialias
  // DINO / DINOv2 ("dino_vit", "dinov2_vit"):
  bool dino = false;             // forward returns norm(x)[:, 0], the head never applied
  bool dinov2 = false;           // records prepare_tokens_with_masks, x_norm_patchtokens
  bool head = true;              // a head (DINO: num_classes > 0; DINOv2: none)
  bool layerscale = false;       // ls1/ls2.gamma in every block
  double layerscale_init = 1.0;  // their initial value (init_values)
  bool mask_token = false;       // DINOv2's unused mask_token parameter
  int64_t registers = 0;         // register tokens after cls, without positions
  double interp_offset = 0.0;    // DINO's +0.1 in interpolate_pos_encoding's scale factor
  std::string attention;
  std::map<std::string, double> attention_options;
  // Token merging (tome_vit, or tome_r on a vit): r per block.
  bool tome = false;
  std::vector<int64_t> tome_r;
  bool tome_prop_attn = true, tome_trace_source = true;

  int64_t grid() const { return img_size / patch_size; }  // the trained (pos_embed) grid
  bool resampled() const { return input_h != img_size || input_w != img_size; }
  // At the trained size (`trained`) or at the input size.
  attention::TokenLayout layout(bool trained = false) const {
    attention::TokenLayout l =
        trained ? attention::grid_layout(grid(), grid(), /*stage=*/0)
                : attention::grid_layout(input_h / patch_size, input_w / patch_size, /*stage=*/0);
    if (class_token) l.prefix.push_back("cls");
    if (distilled) l.prefix.push_back("dist");
    if (!trained)  // registers carry no position: they are not in pos_embed's layout
      for (int64_t r = 0; r < registers; ++r) l.prefix.push_back("reg" + std::to_string(r));
    return l;
  }
};

int64_t positive(const Json& c, const std::string& key, int64_t fallback) {
  const int64_t v =
      fallback > 0 ? get_int(c, key, kVitFamily, fallback) : get_int(c, key, kVitFamily);
  if (v < 1) refuse(key, "must be at least 1 (got " + std::to_string(v) + ")");
  return v;
}

// Sets mechanism option `option` from config key `key` when the mechanism has that option.
// An explicit key must agree with attention_options; a default yields to it.
void map_option(const Json& c, const attention::MechanismInfo& info, const std::string& key,
                const std::string& option, double value, std::map<std::string, double>& options) {
  bool known = false;
  for (const auto& spec : info.options) known = known || spec.name == option;
  if (!known) return;
  const auto it = options.find(option);
  if (it == options.end()) {
    options[option] = value;
  } else if (c.contains(key) && it->second != value) {
    refuse(key, "disagrees with attention_options." + option + " (" + std::to_string(value) +
                    " vs " + std::to_string(it->second) + ")");
  }
}

// The attention an arch fixes: AnchorFormer's and Castling's DeiTs; "" for a plain ViT,
// which runs its config's "attention" (softmax by default).
const char* const kDefaultAttention = "softmax";

std::string fixed_attention(const std::string& arch) {
  if (arch == "dino_vit" || arch == "dinov2_vit" || arch == "tome_vit") return kDefaultAttention;
  return arch == "anchor_deit_distilled" ? "anchor" : arch == "castling_deit" ? "castling" : "";
}

// DINO's and DINOv2's own keys (their factories' names); `s` has the common ones.
void parse_dino_keys(const Json& c, VitSpec& s) {
  s.dino = true;
  s.dinov2 = s.arch == "dinov2_vit";
  s.interp_offset = get_real(c, "interpolate_offset", kVitFamily, 0.1);
  if (!(s.interp_offset >= 0 && s.interp_offset < 1))
    refuse("interpolate_offset", "must be in [0, 1) (DINO: 0.1; DINOv2 _reg: 0)");
  if (!s.dinov2) {
    // DINO's factories build num_classes 0 (no head); a head, when present, is unused.
    s.head = get_int(c, "num_classes", kVitFamily, 0) > 0;
    return;
  }
  s.head = false;
  s.mask_token = true;
  if (c.contains("init_values") && !c["init_values"].is_null()) {
    s.layerscale = true;
    s.layerscale_init = get_real(c, "init_values", kVitFamily, 1.0);
  }
  s.registers = get_int(c, "num_register_tokens", kVitFamily, 0);
  if (s.registers < 0 || s.registers > 64)
    refuse("num_register_tokens", "must be between 0 and 64");
  s.antialias_positions = get_bool(c, "interpolate_antialias", kVitFamily, false);
  const std::string ffn = get_string(c, "ffn_layer", kVitFamily, "mlp");
  if (ffn != "mlp")
    refuse("ffn_layer", "'" + ffn +
                            "' is not built here (only 'mlp', as every released "
                            "DINOv2 but the giant, whose SwiGLU is not supported)");
  for (const char* key : {"proj_bias", "ffn_bias"})
    if (!get_bool(c, key, kVitFamily, true))
      refuse(key, "must be true (every released DINOv2 has these biases)");
  if (get_int(c, "block_chunks", kVitFamily, 0) != 0)
    refuse("block_chunks", "must be 0: chunked blocks (blocks.<chunk>.<i>) are not built here");
}

// One of two spellings of a key (tome_vit takes the reference config's names, r and
// prop_attn, beside the tome_ ones): the one given, refused when both disagree.
std::string tome_key(const Json& c, const std::string& plain, const std::string& prefixed,
                     bool alias) {
  if (alias && c.contains(plain)) {
    if (c.contains(prefixed) && c.at(plain) != c.at(prefixed))
      refuse(prefixed, "disagrees with '" + plain + "' (give one of them)");
    return plain;
  }
  return prefixed;
}

// The ToMe keys (see the top comment); `s` has the rest of the spec parsed.
void parse_tome_keys(const Json& c, VitSpec& s) {
  const bool tome_arch = s.arch == "tome_vit";
  const std::string r_key = tome_key(c, "r", "tome_r", tome_arch);
  if (!tome_arch && s.arch != "vit") {
    if (c.contains(r_key))
      refuse(r_key, "token merging is built for arch vit and tome_vit only, not " + s.arch);
    return;
  }
  if (!tome_arch && !c.contains(r_key)) return;
  const Json r = c.contains(r_key) ? c.at(r_key) : Json(0);
  if (r.is_number_integer()) {
    s.tome_r.assign(static_cast<size_t>(s.depth), r.get<int64_t>());
  } else if (r.is_array() && r.size() == static_cast<size_t>(s.depth)) {
    for (const auto& v : r) {
      if (!v.is_number_integer()) refuse(r_key, "must hold integers (tokens merged per block)");
      s.tome_r.push_back(v.get<int64_t>());
    }
  } else {
    refuse(r_key, "must be an integer r or a list of " + std::to_string(s.depth) +
                      " integers, one per block (ToMe's (r, inflection) schedule is not built)");
  }
  for (int64_t v : s.tome_r)
    if (v < 0) refuse(r_key, "must not be negative (got " + std::to_string(v) + ")");
  s.tome_prop_attn =
      get_bool(c, tome_key(c, "prop_attn", "tome_prop_attn", tome_arch), kVitFamily, true);
  s.tome_trace_source =
      get_bool(c, tome_key(c, "trace_source", "tome_trace_source", tome_arch), kVitFamily, true);
  bool any = tome_arch;
  for (int64_t v : s.tome_r) any = any || v > 0;
  if (!any) return;  // r = 0 on a vit: the plain model, exactly
  s.tome = true;
  if (s.attention != kDefaultAttention)
    refuse(r_key, "token merging needs softmax attention (its metric is the keys), not '" +
                      s.attention + "'");
  for (const auto& [k, v] : s.attention_options)
    if (k != "qkv_bias" && v != 0)
      refuse(r_key, "token merging runs timm's attention: attention_options." + k +
                        " is not supported with it");
  if (!s.class_token)
    refuse(r_key, "token merging protects the class token: class_token must be true");
  if (s.distilled) refuse(r_key, "token merging with a dist token (distilled) is not built");
}

VitSpec parse_vit_spec(const Json& c) {
  if (!c.is_object()) throw ModelError(kVitFamily + " config must be a JSON object");
  VitSpec s;
  s.arch = get_string(c, "arch", kVitFamily, "");
  const bool anchor = s.arch == "anchor_deit_distilled";
  const bool castling = s.arch == "castling_deit";
  const bool dino = s.arch == "dino_vit" || s.arch == "dinov2_vit";
  if (!anchor && !castling && !dino && s.arch != "vit" && s.arch != "tome_vit")
    refuse("arch",
           "must be vit, anchor_deit_distilled, castling_deit, dino_vit, dinov2_vit or tome_vit "
           "(got '" +
               s.arch + "')");
  s.img_size = positive(c, "img_size", 224);
  s.patch_size = positive(c, "patch_size", 16);
  if (s.img_size % s.patch_size != 0)
    refuse("patch_size", "must divide img_size (" + std::to_string(s.patch_size) + " vs " +
                             std::to_string(s.img_size) + ")");
  s.embed_dim = positive(c, "embed_dim", 0);
  s.depth = positive(c, "depth", 0);
  s.num_heads = positive(c, "num_heads", 0);
  if (s.embed_dim % s.num_heads != 0)
    refuse("num_heads", "must divide embed_dim (" + std::to_string(s.num_heads) + " vs " +
                            std::to_string(s.embed_dim) + ")");
  const double ratio = get_real(c, "mlp_ratio", kVitFamily, 4.0);
  s.mlp_hidden = static_cast<int64_t>(static_cast<double>(s.embed_dim) * ratio);  // timm: int()
  if (!(ratio > 0) || s.mlp_hidden < 1) refuse("mlp_ratio", "must give a hidden width >= 1");
  if (dino) {
    parse_dino_keys(c, s);
    s.num_classes = s.head ? positive(c, "num_classes", 1000) : 0;
  } else {
    s.num_classes = positive(c, "num_classes", 1000);
  }
  s.ln_eps = get_real(c, "ln_eps", kVitFamily, 1e-6);
  const std::string pos_init = get_string(c, "pos_embed_init", kVitFamily, "normal");
  if (pos_init != "normal" && pos_init != "sincos")
    refuse("pos_embed_init", "must be normal or sincos (got '" + pos_init + "')");
  s.sincos_positions = pos_init == "sincos";
  if (!(s.ln_eps > 0)) refuse("ln_eps", "must be positive");

  const std::string fixed = fixed_attention(s.arch);
  s.attention = get_string(c, "attention", kVitFamily, fixed.empty() ? kDefaultAttention : fixed);
  if (!fixed.empty() && s.attention != fixed)
    refuse("attention",
           "must be '" + fixed + "' for arch " + s.arch + " (got '" + s.attention + "')");
  const attention::MechanismInfo* info = nullptr;
  try {
    info = &attention::mechanism_info(s.attention);
  } catch (const attention::AttentionError& e) {
    refuse("attention", e.what());
  }
  s.class_token = get_bool(c, "class_token", kVitFamily, !info->needs_grid);
  if (s.class_token && info->needs_grid)
    refuse("class_token", "must be false with attention '" + s.attention +
                              "': it needs a pure token grid (no cls token); the model then " +
                              "pools the mean of the patch tokens through fc_norm");
  if (anchor && !s.class_token)
    refuse("class_token", "must be true for anchor_deit_distilled (cls and dist tokens)");
  if (dino && !s.class_token)
    refuse("class_token", "must be true for " + s.arch + " (its output is the cls token)");
  s.distilled = anchor || (!dino && get_bool(c, "distilled", kVitFamily, false));
  if (s.distilled && !s.class_token)
    refuse("distilled", "needs the cls token (class_token true): the dist token follows it");
  s.input_h = s.input_w = s.img_size;
  if (c.contains("input_size")) {
    const std::vector<int64_t> hw = get_ints(c, "input_size", kVitFamily);
    if (hw.size() != 2 || hw[0] < 1 || hw[1] < 1 || hw[0] > 8192 || hw[1] > 8192)
      refuse("input_size", "must be [H, W] with sizes from 1 to 8192");
    if (hw[0] % s.patch_size != 0 || hw[1] % s.patch_size != 0)
      refuse("input_size", "must be a multiple of patch_size " + std::to_string(s.patch_size) +
                               " in both sides (got " + std::to_string(hw[0]) + "x" +
                               std::to_string(hw[1]) + ")");
    s.input_h = hw[0];
    s.input_w = hw[1];
  }
  if (!dino || c.contains("pos_embed_interpolation")) {
    const std::string interp = get_string(c, "pos_embed_interpolation", kVitFamily, "bicubic");
    if (interp != "bicubic" && interp != "bicubic_antialias")
      refuse("pos_embed_interpolation",
             "must be bicubic or bicubic_antialias (got '" + interp + "')");
    s.antialias_positions = interp == "bicubic_antialias";
  }

  s.attention_options = get_attention_options(c, info->name, kVitFamily);
  auto& opts = s.attention_options;
  map_option(c, *info, "qkv_bias", "qkv_bias",
             get_bool(c, "qkv_bias", kVitFamily, !castling) ? 1.0 : 0.0, opts);
  map_option(c, *info, "num_anchors", "anchors",
             static_cast<double>(get_int(c, "num_anchors", kVitFamily, 30)), opts);
  map_option(c, *info, "sparse_threshold", "threshold",
             get_real(c, "sparse_threshold", kVitFamily, 0.02), opts);
  map_option(c, *info, "res_kernel_size", "kernel",
             static_cast<double>(get_int(c, "res_kernel_size", kVitFamily, 9)), opts);
  parse_tome_keys(c, s);
  return s;
}

std::shared_ptr<attention::AttentionMechanism> make_vit_attention(const VitSpec& s) {
  attention::MechanismConfig mc;
  mc.dim = s.embed_dim;
  mc.heads = s.num_heads;
  mc.options = s.attention_options;
  try {
    return attention::make_mechanism(s.attention, mc);
  } catch (const attention::AttentionError& e) {
    refuse("attention_options", std::string("rejected by the mechanism: ") + e.what());
  }
}

// 2-D sin-cos position embeddings (as MAE initialises them): a quarter of the channels each
// for sin(y·ω), cos(y·ω), sin(x·ω), cos(x·ω), ω_k = 10000^(-k/(C/4)); prefix tokens get 0.
// Training from scratch on small images needs the positions to be visible from the first
// step: with 2×2 patches the content of one token says little, and 0.02-scale random
// positions take hundreds of steps to grow (the zoo's models learned ~10 points slower).
at::Tensor sincos_positions(const VitSpec& s) {
  const int64_t c = s.embed_dim, g = s.grid(), quarter = s.embed_dim / 4;
  const at::Tensor omega =
      at::pow(10000.0, -at::arange(quarter, at::kDouble) / static_cast<double>(quarter));
  const at::Tensor pos = at::arange(g, at::kDouble);
  const at::Tensor ys = pos.repeat_interleave(g).unsqueeze(1) * omega;  // token y·W + x
  const at::Tensor xs = pos.repeat({g}).unsqueeze(1) * omega;
  at::Tensor grid = at::cat({ys.sin(), ys.cos(), xs.sin(), xs.cos()}, 1);  // (g², 4·quarter)
  const attention::TokenLayout trained = s.layout(/*trained=*/true);
  at::Tensor out = at::zeros({trained.tokens(), c}, at::kDouble);
  out.slice(0, trained.num_prefix(), trained.tokens()).slice(1, 0, 4 * quarter).copy_(grid);
  return out.to(at::kFloat).unsqueeze(0);
}

class VisionTransformer : public Backbone {
 public:
  explicit VisionTransformer(VitSpec spec) : spec_(std::move(spec)) {
    const int64_t c = spec_.embed_dim;
    const auto eps = spec_.ln_eps;
    // Own parameters first, in the reference order (timm: cls_token, pos_embed;
    // AnchorDeiT: cls_token, pos_embed, dist_token). Initialised like timm (cls ~1e-6,
    // positions and dist ~0.02); checkpoints overwrite them.
    if (spec_.class_token)
      cls_token_ = register_parameter("cls_token", nn::initial_normal({1, 1, c}, 1e-6));
    pos_embed_ = register_parameter(
        "pos_embed", spec_.sincos_positions
                         ? sincos_positions(spec_)
                         : nn::initial_normal({1, spec_.layout(true).tokens(), c}, 0.02));
    if (spec_.distilled)
      dist_token_ = register_parameter("dist_token", nn::initial_normal({1, 1, c}, 0.02));
    // DINOv2: cls_token, pos_embed, register_tokens, mask_token (unused at inference).
    if (spec_.registers > 0)
      register_tokens_ =
          register_parameter("register_tokens", nn::initial_normal({1, spec_.registers, c}, 1e-6));
    if (spec_.mask_token) register_parameter("mask_token", at::zeros({1, c}));
    patch_embed_ =
        register_module("patch_embed", std::make_shared<PatchEmbed>(spec_.patch_size, c));
    auto blocks = std::make_shared<torch::nn::Module>();
    for (int64_t i = 0; spec_.tome && i < spec_.depth; ++i) {
      const auto bias = spec_.attention_options.find("qkv_bias");
      tome_blocks_.push_back(blocks->register_module(
          std::to_string(i), std::make_shared<TomeBlock>(
                                 spec_.embed_dim, spec_.num_heads, spec_.mlp_hidden, spec_.ln_eps,
                                 bias == spec_.attention_options.end() || bias->second != 0)));
    }
    for (int64_t i = 0; !spec_.tome && i < spec_.depth; ++i) {
      auto block = std::make_shared<Block>(spec_.embed_dim, spec_.mlp_hidden, spec_.ln_eps,
                                           make_vit_attention(spec_),
                                           spec_.layerscale ? spec_.layerscale_init : 0.0);
      blocks_.push_back(blocks->register_module(std::to_string(i), block));
    }
    const char* norm_name = spec_.class_token ? "norm" : "fc_norm";
    if (spec_.distilled && spec_.arch == "anchor_deit_distilled") {
      // AnchorDeiT registers norm and head before the blocks, head_dist after them.
      norm_ = register_module(norm_name, std::make_shared<LayerNormLayer>(c, eps));
      head_ = register_module("head", std::make_shared<LinearLayer>(c, spec_.num_classes, true));
      register_module("blocks", blocks);
      head_dist_ =
          register_module("head_dist", std::make_shared<LinearLayer>(c, spec_.num_classes, true));
    } else {
      register_module("blocks", blocks);
      norm_ = register_module(norm_name, std::make_shared<LayerNormLayer>(c, eps));
      if (spec_.head)  // DINOv2's head is an Identity (no keys); DINO's only with classes
        head_ = register_module("head", std::make_shared<LinearLayer>(c, spec_.num_classes, true));
      if (spec_.distilled)  // timm's VisionTransformerDistilled: head_dist after head
        head_dist_ =
            register_module("head_dist", std::make_shared<LinearLayer>(c, spec_.num_classes, true));
    }
  }

  std::string arch() const override { return spec_.arch; }
  OutputKind output_kind() const override {
    return spec_.dino ? OutputKind::embedding : OutputKind::classes;
  }
  // Built for one input size (check_images): its layout, whatever the size asked about.
  std::vector<StageShape> stage_shapes(int64_t, int64_t) const override {
    return {{spec_.layout(), spec_.embed_dim}};
  }

  ForwardResult forward_images(const at::Tensor& images, const ForwardOptions& options) override {
    check_images(images);
    ForwardResult result;
    if (spec_.tome) return forward_merging(images, options, result);
    ForwardRecorder recorder(options, result);
    at::Tensor x;
    if (!recorder.skipping()) x = embed(images, recorder);
    const attention::TokenLayout layout = spec_.layout();
    for (size_t i = 0; i < blocks_.size(); ++i) {
      const std::string path = "blocks." + std::to_string(i);
      if (recorder.enter_block(path, x)) x = blocks_[i]->forward(x, layout, path, recorder);
    }
    recorder.check_resumed();
    if (spec_.dino) {
      // DINO / DINOv2 forward(): the final norm's cls token; a DINO head is never applied.
      x = (*norm_)(x);
      recorder.output("out", "norm", x);
      const int64_t prefix = layout.num_prefix();
      if (spec_.dinov2) {
        recorder.output("out", "x_norm_patchtokens", x.slice(1, prefix));
        if (spec_.registers > 0)
          recorder.output("out", "x_norm_regtokens", x.slice(1, 1, 1 + spec_.registers));
      }
      result.logits = x.select(1, 0);
    } else {
      result.logits = head_logits(x, &recorder);
    }
    return result;
  }

  at::Tensor readout_features(const at::Tensor& tokens) const override {
    check_block_output(tokens);
    if (!spec_.class_token) return tokens.slice(1, spec_.layout().num_prefix()).mean(1);
    if (spec_.distilled) return at::cat({tokens.select(1, 0), tokens.select(1, 1)}, 1);
    return tokens.select(1, 0);  // DINO's and DINOv2's too: the token their output normalises
  }

  at::Tensor readout_logits(const at::Tensor& tokens) const override {
    if (spec_.dino)
      throw ModelError(
          embedding_output_note("reading a block out through the classifier", 0, spec_.arch));
    check_block_output(tokens);
    return head_logits(tokens, nullptr);
  }

 private:
  // The forward with token merging: the merging blocks carry sizes and source from block to
  // block, and the token count falls, so neither the grid traces nor a resume apply.
  ForwardResult forward_merging(const at::Tensor& images, const ForwardOptions& options,
                                ForwardResult& result) {
    if (options.trace_attention && !spec_.tome_prop_attn)
      throw ModelError(spec_.arch +
                       " with token merging: attention traces are built for proportional "
                       "attention (prop_attn true), where the merged rows carried back to the "
                       "input tokens are a softmax over them; this model has prop_attn false");
    if (options.resume)
      throw ModelError(spec_.arch +
                       " with token merging: a forward cannot resume part-way "
                       "(the merges before the block are not recorded)");
    ForwardRecorder recorder(options, result);
    at::Tensor x = embed(images, recorder);
    // Traces need the source matrices (which input tokens each merged token holds).
    tome::TomeState state = tome::tome_initial_state(
        x, (spec_.tome_trace_source && recorder.recording()) || recorder.tracing());
    std::vector<int64_t> counts;
    for (size_t i = 0; i < tome_blocks_.size(); ++i) {
      const std::string path = "blocks." + std::to_string(i);
      recorder.enter_block(path, x);
      x = tome_blocks_[i]->forward(x, state, spec_.tome_r[i], spec_.tome_prop_attn, spec_.layout(),
                                   path, recorder);
      counts.push_back(x.size(1));
    }
    if (recorder.recording()) {  // the fixture's names
      result.outputs["n_tokens"] = at::tensor(counts, at::kLong);
      result.outputs["size"] = state.size.detach();
      if (state.source.defined()) result.outputs["source"] = state.source.detach();
    }
    result.logits = head_logits(x, &recorder);
    return result;
  }

  // The eval forward's tail on the last block's output, which readout_logits runs on any
  // block's: the same code, so the last block read out is the model's logits.
  at::Tensor head_logits(const at::Tensor& x, ForwardRecorder* recorder) const {
    if (!spec_.class_token) {
      const at::Tensor pooled = (*norm_)(x.slice(1, spec_.layout().num_prefix()).mean(1));
      if (recorder) recorder->output("out", "fc_norm", pooled);
      return (*head_)(pooled);
    }
    const at::Tensor normed = (*norm_)(x);
    if (recorder) recorder->output("out", "norm", normed);
    const at::Tensor logits = (*head_)(normed.select(1, 0));
    // AnchorDeiT returns (head, head_dist) separately in training; we return their
    // average in both modes so run() has one meaning (distillation losses need the pair:
    // head(out.norm[:, 0]) and head_dist(out.norm[:, 1])).
    return spec_.distilled ? (logits + (*head_dist_)(normed.select(1, 1))) / 2 : logits;
  }

  // A block output of this model: (B, N, C) with its layout's N tokens and its width.
  void check_block_output(const at::Tensor& tokens) const {
    const attention::TokenLayout layout = spec_.layout();
    // Merged tokens: any count from the class token up.
    const bool count_ok =
        spec_.tome ? tokens.dim() == 3 && tokens.size(1) >= 1 && tokens.size(1) <= layout.tokens()
                   : tokens.dim() == 3 && tokens.size(1) == layout.tokens();
    if (!count_ok || tokens.size(2) != spec_.embed_dim)
      throw ModelError(spec_.arch + ": a block output is (B, " + std::to_string(layout.tokens()) +
                       ", " + std::to_string(spec_.embed_dim) + "), got " +
                       nn::shape_string(tokens.sizes()));
  }

  // Patch embedding, prefix tokens and positions: the first block's input.
  at::Tensor embed(const at::Tensor& images, ForwardRecorder& recorder) {
    const int64_t batch = images.size(0);
    at::Tensor x = (*patch_embed_)(images);
    recorder.output("out", "patch_embed", x);
    std::vector<at::Tensor> parts;
    if (spec_.class_token) parts.push_back(cls_token_.expand({batch, -1, -1}));
    if (spec_.distilled) parts.push_back(dist_token_.expand({batch, -1, -1}));
    parts.push_back(x);
    const at::Tensor pos = positions();
    if (spec_.dino) recorder.output("out", "interpolate_pos_encoding", pos);
    x = at::cat(parts, 1) + pos;
    if (spec_.registers > 0)  // after cls, with no position (DINOv2)
      x = at::cat({x.slice(1, 0, 1), register_tokens_.expand({batch, -1, -1}), x.slice(1, 1)}, 1);
    if (spec_.dinov2) recorder.output("out", "prepare_tokens_with_masks", x);
    return x;
  }

  void check_images(const at::Tensor& images) const {
    if (images.dim() != 4 || images.size(1) != 3 || images.size(2) != spec_.input_h ||
        images.size(3) != spec_.input_w) {
      std::string got;
      for (auto s : images.sizes()) got += (got.empty() ? "" : ", ") + std::to_string(s);
      throw ModelError(spec_.arch + ": expected images (B, 3, " + std::to_string(spec_.input_h) +
                       ", " + std::to_string(spec_.input_w) +
                       ") (its input size; run at another with --img-size H[,W]), got (" + got +
                       ")");
    }
  }

  // pos_embed at the input size: the trained one, or its grid part resampled (bicubic,
  // align_corners false) to the input grid with the prefix tokens kept as they are.
  at::Tensor positions() const {
    if (!spec_.resampled()) return pos_embed_;
    const int64_t prefix = spec_.layout(true).num_prefix(), g = spec_.grid(), c = spec_.embed_dim;
    const at::Tensor grid = pos_embed_.slice(1, prefix).reshape({1, g, g, c}).permute({0, 3, 1, 2});
    const std::vector<int64_t> size = {spec_.input_h / spec_.patch_size,
                                       spec_.input_w / spec_.patch_size};
    // DINO's offset: the kernel is given the scale factor (n + o)/M and samples at its
    // inverse, M/(n + o); without it, the ratio of the sizes.
    c10::optional<double> scale_h, scale_w;
    if (spec_.interp_offset > 0) {
      scale_h = (static_cast<double>(size[0]) + spec_.interp_offset) / static_cast<double>(g);
      scale_w = (static_cast<double>(size[1]) + spec_.interp_offset) / static_cast<double>(g);
    }
    const at::Tensor resized =
        spec_.antialias_positions
            ? at::_upsample_bicubic2d_aa(grid, size, /*align_corners=*/false, scale_h, scale_w)
            : at::upsample_bicubic2d(grid, size, /*align_corners=*/false, scale_h, scale_w);
    return at::cat({pos_embed_.slice(1, 0, prefix), resized.permute({0, 2, 3, 1}).flatten(1, 2)},
                   1);
  }

  VitSpec spec_;
  at::Tensor cls_token_, dist_token_, pos_embed_, register_tokens_;
  std::shared_ptr<PatchEmbed> patch_embed_;
  std::vector<std::shared_ptr<Block>> blocks_;
  std::vector<std::shared_ptr<TomeBlock>> tome_blocks_;  // instead of blocks_ with merging
  std::shared_ptr<LayerNormLayer> norm_;  // "norm" (cls pooling) or "fc_norm" (mean pooling)
  std::shared_ptr<LinearLayer> head_, head_dist_;
};

}  // namespace

std::string vit_mechanism(const Json& c) {
  const std::string fixed = fixed_attention(c.value("arch", std::string()));
  if (!fixed.empty()) return fixed;
  return c.contains("attention") && c["attention"].is_string() ? c["attention"].get<std::string>()
                                                               : kDefaultAttention;
}

std::shared_ptr<Backbone> make_vit(const Json& config) {
  return std::make_shared<VisionTransformer>(parse_vit_spec(config));
}

}  // namespace attnlab::models
