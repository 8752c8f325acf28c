// See commands.h.
#include "app/cli/commands.h"

#include <algorithm>
#include <iterator>

#include "app/session/analysis_registry.h"
#include "core/io/text.h"

namespace attnlab::cli {
namespace {

// The global options that take a value, as main() reads them: help_request() skips their
// values, and a command's own help names them.
const std::vector<std::string> kGlobalOptionsWithValue = {"--threads", "--device", "--dtype",
                                                          "--max-memory"};

// The --analyses line of analyze: the registry's names, comma-separated, wrapped under
// the option's description column.
std::string analyses_option_help() {
  const std::string indent(30, ' ');
  std::string out = "      [--analyses LIST]       ", line;
  const auto names = session::analysis_names();
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string word = names[i] + (i + 1 < names.size() ? "," : "");
    if (!line.empty() && line.size() + word.size() > 60) {
      out += line + "\n" + indent;
      line.clear();
    }
    line += word;
  }
  std::string opt_in;
  for (const auto& a : session::analyses())
    if (a.opt_in) opt_in += (opt_in.empty() ? "" : ", ") + a.name;
  out += line + " (default all";
  return out + (opt_in.empty() ? ")\n" : "\n" + indent + "but " + opt_in + ": name them)\n");
}

}  // namespace

const std::vector<CommandSpec>& commands() {
  // clang-format off
  static const std::vector<CommandSpec> all = {
      {"gui", nullptr,
       R"(  gui [IMAGE...] [--model M...]            open the desktop GUI (default command); with
      [--empty] [--script FILE]             no files, the zoo and the demo images; a saved
      [--merge R]                           workspace (FILE.attnlab) opens its models,
                                            images and what-if edits; --merge: token
                                            merging (ToMe) on the models opened
      [--after-frames N] [--screenshot PNG] (tests: quit after N frames, save PNG)
)"},
      {"", nullptr,
       R"(  IMAGE... --model M...                     the same: open these in the GUI
)"},
      {"inspect", cmd_inspect,
       R"(  inspect FILE... [--stats] [--json]        list tensors, dtypes, shapes, metadata and
                                            container keys of safetensors/.pth/.npy/IDX;
                                            --stats: min/max/mean/std, NaN/Inf counts
)"},
      {"info", cmd_info,
       R"(  info                                      LibTorch version, threads, devices
)"},
      {"mechanisms", cmd_mechanisms,
       R"(  mechanisms                                the attention mechanisms and their options
)"},
      {"analyses", cmd_analyses,
       R"(  analyses                                  the analyses: what each needs, writes, draws
)"},
      {"infer", cmd_infer,
       R"(  infer --checkpoint FILE --input IN --out OUT   run a model on IN's tensor `input`; write
      [--config JSON | --preset NAME] [--key K]  logits and every intermediate under the
      [--half] [--merge R]                  fixtures' names (--half: as --dtype fp16;
                                            --merge: ToMe, R tokens merged per block)
)"},
      {"classify", cmd_classify,
       R"(  classify --checkpoint FILE [--preset NAME | --config JSON] [--key K] IMAGE...
      [--class-names FILE]                  preprocess as the model's paper does, print top-5
      [--images FILES|DIR] [--out PREDS.csv] [--top K]   or stream the top-k of every
                                            image to a CSV (a bad image is skipped)
      [--prompt-template T]                 a whole CLIP: --class-names make a zero-shot
                                            head of prompts T ("{}" for the name; default
                                            "a photo of a {}."; repeat T to average them)
)"},
      {"presets", cmd_presets,
       R"(  presets                                   the official model presets
)"},
      {"analyze", cmd_analyze,
       R"(  analyze --model PRESET|CHECKPOINT --images FILES|DIR --out DIR
)" + analyses_option_help() + R"(      [--query y,x]           query cell on the first attention layer's grid (default centre)
      [--query-token N]       or a token index of that layer (prefix first: 0 = cls)
      [--layers LIST]         attention layers by index, e.g. 0,3-5 (default all)
      [--edit OPS]            what-if edits of every image, in tokens of the model's first
                              layer: occlude:y,x,size[,r,g,b] blur:y,x,size
                              paint:y,x,size,r,g,b paste:y,x,size,from_y,from_x,FILE,
                              ';'-separated (quote them), repeatable; edits.txt
)" + session::analysis_options_help() + R"(      [--batch N]             images per forward pass (default 1; on 2 CPU cores a batch
                              is no faster per image: docs/BENCHMARKS.md)
      [--preset P | --config JSON] [--checkpoint FILE] [--key K] [--random-init]
      [--class-names FILE]    one name per line, or JSON list / {"index": name} map; for a
                              whole CLIP, a zero-shot head of these classes
      [--prompt-template T]   its prompts ("{}" for the name; repeatable, averaged)
      [--text "a cat"]...     a whole CLIP: text prompts as its classes (repeatable), for
      [--text-file FILE]      the prompts analysis (each prompt's map, score, Grad-CAM) and
                              every class-specific one; FILE: one prompt per line
      [--merge R]             token merging (ToMe) on a ViT-family model: R tokens merged
                              away per block; maps and rollout carried back to the patches,
                              the merge groups as an analysis of their own
                                            write every statistic (CSV, JSON, LaTeX), map
                                            and spectrum (.npy) and a settings sidecar
)"},
      {"analyze-series", cmd_analyze_series,
       R"(  analyze-series --checkpoints FILES... --images FILES|DIR --out DIR [options as analyze]
                                            the statistics of each checkpoint in order
                                            (default mask,rank,locality: Castling Fig. 6)
)"},
      {"analyze-sizes", cmd_analyze_sizes,
       R"(  analyze-sizes --model M --img-sizes 224,288,384 --images FILES|DIR --out DIR
      [options as analyze]                  the statistics at each input size (default
                                            the series analyses: entropy, map_rank,
                                            locality, rank, outliers, spectra) as
                                            <table>_sizes CSV/JSON and figures against
                                            the size; "sizes": tokens and s/image
)"},
      {"merge", cmd_merge,
       R"(  merge SHARD_DIR... --out DIR             the single run's files from the folders of a
                                            run split with --shard I/N (or a Slurm array:
                                            docs/CLUSTER.md); checks they are one run's and
                                            cover it once, names the shards in merge.json
)"},
      {"report", cmd_report,
       R"(  report --models M1 M2... --images FILES|DIR --out DIR   every paper figure (maps, rollout,
      [--formats svg,pdf,png] [--dpi N]       models side by side, spectra, ranks, anchors,
      [--series CKPT...]                      mask sparsity, locality), the statistics of
      [--colormap NAME] [--alpha A]           analyze and an index.html with captions;
      [--upsample nearest|bilinear]           colormaps: viridis magma inferno plasma cividis
      [analysis options as analyze]           turbo jet gray RdBu coolwarm
      [--class-names FILE]                    every model's class names (figure labels;
                                              a whole CLIP: its zero-shot head)
      [--text T]... [--text-file F]           a whole CLIP's prompts (as analyze)
      [--prompt-template T]                   its zero-shot prompts (as classify)
      [--random-init]                         presets with seeded random weights
      [--merge R]                             ToMe on every ViT-family model (as analyze)
      [--norm minmax|divmax]                  map scale: each map's [min, max] or [0, max]
      [--layer last|N|N/T]                    the layer of the per-head maps and the models
                                              side by side (N/T: layer N of a T-layer model,
                                              other models at the same relative depth)
      [--head N | --head-fusion mean|max|min] what the models side by side show of it
      [--map query|rollout]                   the query's maps or each model's rollout there
      [--compare-scale per-panel|shared]      models side by side: each on its own colour
                                              scale (default), or one scale clipped at the
                                              98th percentile of |w| over all maps
      [--compare-difference A,B]              and model A minus model B (indices into
                                              --models, from 0) as a last panel
      [--figures KIND,...]                    only these figures (head_maps, layers_heads,
                                              prefix_maps, compare, rollout, explanations, ...)
      [--complexity-scales 1,2,3]             MACs of each model at these multiples of its
                                              input size (figure "complexity", on request:
                                              this option or --figures complexity; the
                                              --demo draws it)
      [--bench [--bench-sides 14,28,56]]      measure one layer of each model's mechanism
                                              against softmax (figure "attention_bench")
      [--img-sizes 224,288,384]               a resolution sweep of each model: the
                                              statistics of analyze-sizes, figures against
                                              the input size
      [--embeddings DIR...]                   folders of attnlab embed: "Datasets at a
                                              glance", each projected once (figures by
                                              label, prediction, correct/wrong; with
                                              embed --heads the head extremes; the
                                              coordinates as CSV); alone or with --models;
                                              not with --shard (a usage error)
      [--projection pca|tsne|umap]            their projection (default pca) and
      [--perplexity P] [--neighbors K]        project's options for it
      [--min-dist D] [--iterations N] [--seed S]
      (File > Copy settings as command in the GUI writes these options for the view shown)
  report --embeddings DIR... --out DIR [--projection ...] [--formats ...] [--dpi N]
                                            the datasets at a glance alone
  report --demo [--out DIR] [--images ...]  the zoo's models on four demo images, every
                                            analysis (erf and heads too), and
                                            Castling's checkpoint series
      (report and gui: a model M is a checkpoint, or a config .json = untrained weights)
)"},
      {"train", cmd_train,
       R"(  train --mechanism NAME | --config JSON | --preset NAME --out RUN_DIR [--export FILE]
      [--dataset fashion-mnist:train|folder:DIR] [--epochs E | --steps N] [--batch B]
      [--lr LR] [--warmup N] [--seed S] [--checkpoint-every K] [--series DIR]
      [--threshold EPS] [--sparse-penalty L] [--option NAME=VALUE...] [--resume [CKPT]]
                                            train (AdamW, warm-up + cosine, label smoothing,
                                            light augmentation); docs/TRAINING.md
)"},
      {"eval", cmd_eval,
       R"(  eval --model CHECKPOINT|PRESET --dataset fashion-mnist:test [--limit N]
                                            classification accuracy in percent
)"},
      {"head-importance", cmd_head_importance,
       R"(  head-importance --model M --dataset folder:DIR|fashion-mnist:test --out DIR
      [--limit N] [--batch B]               every head switched off alone on a labelled
                                            set (first N = 100 images, B = 25 a batch):
                                            probability drop, loss rise, accuracy change
                                            per head; tables and layers x heads figures
)"},
      {"probe", cmd_probe,
       R"(  probe --model M --dataset folder:DIR|fashion-mnist:test --out DIR [--layers LIST]
      [--every 5] [--l2 1e-3] [--max-iterations 200] [--limit N] [--batch 32]
                                            a linear probe per block on its readout token
                                            (cls, or the mean of the grid tokens), trained
                                            on 4/5 of each class, tested on every 5th image;
                                            beside it the logit lens's top-1 accuracy (the
                                            model's own head on the block); table, figure
)"},
      {"embed", cmd_embed,
       R"(  embed --model M (--images DIR|FILES | --dataset SPEC) --out DIR [--layer L]
      [--features output|keys|queries] [--pool head|cls|mean|tokens] [--limit N]
      [--batch 32] [--heads]
                                            every image's embedding at a block (the last
                                            by default) as embeddings.npy, with images.csv
                                            (label, prediction, confidence, correct) and
                                            embed.json; --features keys|queries: the
                                            block's attention keys or queries (heads
                                            concatenated; pool mean by default) instead of
                                            its output; --heads: each head's sharpest and
                                            broadest images (head_extremes.csv);
                                            --shard I/N + merge as the others
)"},
      {"retrieve", cmd_retrieve,
       R"(  retrieve EMBED_DIR --image I --patch Y,X [--k 16] [--exclude-self] [--out FILE.csv]
                                            the k patches most similar (cosine) to patch
                                            (Y, X) of image row I in an embed --pool tokens
                                            folder, over every image's every patch (the
                                            file memory-mapped); --exclude-self: none of
                                            image I; --out: the list as CSV
)"},
      {"project", cmd_project,
       R"(  project EMBED_DIR [--method pca|tsne|umap] [--dims 2] [--perplexity 30]
      [--neighbors 15] [--min-dist 0.1] [--iterations N] [--seed 0]
      [--colour label,prediction,...]
                                            an embed folder projected (PCA with explained
                                            variance, Barnes-Hut t-SNE, UMAP): .npy, .json
                                            and figures by label, prediction, correct/wrong
                                            and confidence (docs/ANALYSIS.md)
)"},
      {"faithfulness", cmd_faithfulness,
       R"(  faithfulness --models M1 M2... --images FILES|DIR --out DIR
      (or --dataset folder:DIR|fashion-mnist:test [--limit N]: labels)
      [--maps cls,rollout,gradcam,gradrollout,random,centre]
      [--step 0.05] [--baseline blur|mean|zeros] [--batch 32]
      [--randomisation on|off] [--seed 1]   how faithful each relevance map is: deletion
      [--per-image on|off]                  and insertion curves, positive and negative
                                            perturbation, model randomisation check (off:
                                            no per-image tables, the curves' means only)
)"},
      {"export-samples", cmd_export_samples,
       R"(  export-samples --dataset SPEC --out DIR [--per-class N]
                                            the first N images of each class as PNGs
)"},
      {"complexity", cmd_complexity,
       R"(  complexity --model PRESET|CHECKPOINT [--img-size S...] [--per-layer]   parameters and
      | --mechanism NAME[,NAME...] [--tokens HxW...]   MACs (one multiply-add = one MAC, as
        [--dim C] [--heads H] [--prefix P] [--option [MECH.]NAME=VALUE...]   fvcore) per
      [--out DIR]                           attention layer and op group; --out: CSV,
                                            JSON, LaTeX (defaults: a ViT-B layer, 14x14);
                                            counted on the CPU at fp32 whatever --device
                                            and --dtype say: counts do not depend on either
)"},
      {"bench-attention", cmd_bench_attention,
       R"(  bench-attention [--mechanisms all|A,B,...] [--sides 14,28,56] [--dim 384] [--heads 6]
      [--repeats 5] [--baseline softmax]    latency and peak memory of one layer per
      [--out DIR]                           mechanism and N, as ratios to the baseline, and
                                            its GFLOP/s and GB/s against the device's GEMM and
                                            copy peaks measured in the run; --device cuda on a
                                            GPU, --dtype bf16; --out: table and figures
)"},
      {"zoo", cmd_zoo,
       R"(  zoo [DIR] [--write-index]                 list the trained zoo / rewrite its zoo.json
)"},
      {"completion", cmd_completion,
       R"(  completion bash                           print the bash completion script (commands,
                                            options, presets, mechanisms, analyses,
                                            colormaps); the package installs it
)"},
      {"manpage", cmd_manpage,
       R"(  manpage                                   print the man page (roff) made from this help
)"},
      {"help", cmd_help,
       R"(  help [COMMAND]                            this text, or one command's usage and
                                            options (the same as attnlab COMMAND --help)
)"},
  };
  // clang-format on
  return all;
}

const CommandSpec* find_command(const std::string& name) {
  if (name.empty()) return nullptr;
  for (const auto& c : commands())
    if (c.name == name) return &c;
  return nullptr;
}

std::string usage_text() {
  std::string text = R"(attnlab — look inside efficient-attention vision transformers

usage: attnlab [global options] <command> [args]

commands:
)";
  for (const auto& c : commands()) text += c.usage;
  text += R"(
global options:
  --threads N     LibTorch intra-op threads (default: ATTNLAB_THREADS or all cores)
  --device D      auto | cpu | cuda | cuda:N (default: ATTNLAB_DEVICE or auto)
  --dtype T       fp32 | bf16 | fp16: the precision of the forward pass (default:
                  ATTNLAB_DTYPE or fp32); SVD, FFT and CKA still run in fp32 or better
  --max-memory M  refuse a forward pass whose estimated peak memory exceeds M (8G, 512M;
                  off: no limit); default: ATTNLAB_MAX_MEMORY, else 80% of the RAM
                  available when it starts
  -h, --help      this text; after a command, that command's usage and options
  --version       print the version and the git revision it was built from

long runs over many machines (docs/CLUSTER.md):
  --shard I/N     on analyze, analyze-series, report, faithfulness, head-importance,
                  classify, eval, embed, analyze-sizes: do part I of N (from 0) of the sorted
                  work list and write it with a shard.json manifest; inside a Slurm array
                  job the part comes from SLURM_ARRAY_TASK_ID/_COUNT/_MIN. Then
                  `attnlab merge SHARD_DIR... --out DIR` writes the single run's files.

files:
  demo images, ImageNet class names and the model zoo are read from $ATTNLAB_ASSETS and
  $ATTNLAB_ZOO, else <prefix>/share/attnlab/{assets,zoo} beside the installed binary
  (/usr/share/attnlab from the package), else the source tree of a build folder;
  `attnlab info` says which. The GUI keeps its settings in
  $XDG_CONFIG_HOME/attnlab/settings.json (default ~/.config/attnlab/), or $ATTNLAB_SETTINGS.
)";
  return text;
}

std::string command_help(const std::string& name) {
  const auto& all = commands();
  const auto at = std::find_if(all.begin(), all.end(), [&](const CommandSpec& c) {
    return !name.empty() && c.name == name;
  });
  if (at == all.end()) throw unknown_command(name);
  std::string lines = at->usage;
  // The nameless entries after a command are more of its usage (gui's `attnlab IMAGE...`).
  for (auto next = std::next(at); next != all.end() && next->name.empty(); ++next)
    lines += next->usage;
  std::string text = "usage: attnlab [global options] " + name + " ...\n\n" + lines + "\n";
  // Options described elsewhere: where to read them, so this text need not repeat them.
  if (name != "analyze" && lines.find("options as analyze") != std::string::npos)
    text += "analyze's options: attnlab analyze --help\n";
  text += "global options " + text::join(kGlobalOptionsWithValue) +
          " and every command: attnlab --help\n";
  return text;
}

UsageError unknown_command(const std::string& word) {
  std::vector<std::string> known;
  for (const auto& c : commands())
    if (!c.name.empty()) known.push_back(c.name);
  return UsageError("unknown command '" + word + "' (commands: " + text::join(known) + ")");
}

std::optional<std::string> help_request(const std::vector<std::string>& words) {
  const auto is_help = [](const std::string& w) { return w == "-h" || w == "--help"; };
  if (std::none_of(words.begin(), words.end(), is_help)) return std::nullopt;
  // What main() dispatches on: the first word once the global options (and their values)
  // are taken out, when it is no option.
  std::vector<std::string> rest;
  for (size_t i = 0; i < words.size(); ++i) {
    const bool takes_value =
        std::find(kGlobalOptionsWithValue.begin(), kGlobalOptionsWithValue.end(), words[i]) !=
        kGlobalOptionsWithValue.end();
    if (takes_value)
      ++i;
    else if (!is_help(words[i]) && words[i] != "--version")
      rest.push_back(words[i]);
  }
  if (rest.empty() || rest[0].empty() || rest[0][0] == '-') return std::string();
  return rest[0];
}

}  // namespace attnlab::cli
