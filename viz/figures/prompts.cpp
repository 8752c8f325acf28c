// The prompts figure (declared in prompts.h).
#include "viz/figures/prompts.h"

#include <algorithm>
#include <stdexcept>

#include "viz/figures/query_views.h"
#include "viz/overlay.h"

namespace attnlab::viz {
namespace {

const char* kWho = "prompt figure";
const std::string kPrefix = "prompts__";

bool ends_with(const std::string& s, const std::string& end) {
  return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
}

const analysis::Array* find_part(const std::vector<analysis::Array>& arrays, std::string* tag,
                                 const std::string& part) {
  for (const auto& a : arrays) {
    if (a.name.rfind(kPrefix, 0) != 0 || !ends_with(a.name, "__" + part)) continue;
    const std::string t =
        a.name.substr(kPrefix.size(), a.name.size() - kPrefix.size() - part.size() - 2);
    if (tag->empty()) *tag = t;
    if (t == *tag) return &a;
  }
  return nullptr;
}

void add_map(Panel& panel, const float* values, int rows, int cols) {
  OverlayStyle style;
  style.alpha = 0.6;
  style.upsample = Upsample::Nearest;
  const size_t n = size_t(rows) * size_t(cols);
  add_map_layer(panel, values, rows, cols, map_range(values, n, MapNormalisation::MinMax), style);
}

}  // namespace

CaptionedFigure prompt_figure(const std::vector<analysis::Array>& image_arrays,
                              const std::string& image_tag, const RgbaImage& image,
                              const std::vector<std::string>& texts,
                              const PromptFigureOptions& options) {
  std::string tag = image_tag;
  const analysis::Array* cosine = find_part(image_arrays, &tag, "cosine");
  const analysis::Array* scores = find_part(image_arrays, &tag, "scores");
  const analysis::Array* cams = find_part(image_arrays, &tag, "gradcam");
  if (!cosine || !scores)
    throw std::invalid_argument(std::string(kWho) + ": no prompt maps for image \"" + tag + "\"");
  require_axes(*cosine, {"prompt", "y", "x"}, kWho);
  const int prompts = int(cosine->shape[0]), rows = int(cosine->shape[1]),
            cols = int(cosine->shape[2]);
  if (scores->numel() != prompts ||
      (cams && (cams->shape.size() != 3 || cams->shape[0] != prompts)))
    throw std::invalid_argument(std::string(kWho) + ": the prompt arrays disagree");
  const int shown = std::clamp(options.max_prompts, 1, prompts);
  const auto text = [&](int k) {
    return size_t(k) < texts.size() ? "\"" + texts[size_t(k)] + "\""
                                    : "prompt " + std::to_string(k);
  };
  Figure f;
  f.width_in = options.width_in;
  f.font_pt = options.font_pt;
  for (int k = 0; k < shown; ++k) {
    Panel p =
        view_picture(image, text(k) + " " + format_number(100 * scores->data[size_t(k)], 3) + "%");
    add_map(p, &cosine->data[size_t(k) * size_t(rows * cols)], rows, cols);
    f.panels.push_back(p);
  }
  if (cams) {
    const int cr = int(cams->shape[1]), cc = int(cams->shape[2]);
    for (int k = 0; k < shown; ++k) {
      Panel p = view_picture(image, "Grad-CAM of " + text(k));
      add_map(p, &cams->data[size_t(k) * size_t(cr * cc)], cr, cc);
      f.panels.push_back(p);
    }
  }
  f.cols = shown;
  f.height_in = cams ? 4.0 : 2.2;
  fit_height_to_images(f);
  return {f, "Where the model sees each prompt, image \"" + tag +
                 "\": " + (cams ? "top row, " : "") +
                 "each patch's embedding (the class token's readout, ln_post then the "
                 "projection, applied to every patch) against the prompt's text embedding, "
                 "cosine on each panel's own [min, max]" +
                 (cams ? "; bottom row, Grad-CAM of the prompt's image-text logit" : "") +
                 ". The percentage is the prompt's probability over the prompts." +
                 (shown < prompts ? " The first " + std::to_string(shown) + " of " +
                                        std::to_string(prompts) + " prompts are shown."
                                  : std::string())};
}

}  // namespace attnlab::viz
