// The top-activating examples per head (see head_extremes.h).
#include "viz/figures/head_extremes.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>

namespace attnlab::viz {
namespace {

const std::string kHxWho = "head extremes figure";

// Panel data coordinates are in thumbnails: slot s of a group is [s * pitch, s * pitch + 1]
// x [0, 1]; the value's strip is above it (y < 0), the gap between the groups is the
// padding either side of each group's slots.
constexpr double kHxSpacing = 0.1;  // between the thumbnails of a group
constexpr double kHxPitch = 1.0 + kHxSpacing;
constexpr double kHxGroupPad = 0.35;    // left and right of a group's slots
constexpr double kHxValueScale = 0.9;   // value text, relative to the figure font
constexpr double kHxStripLines = 1.45;  // the value's strip, in lines of its text

const Color kHxPatchColor = color_hex(0xff2a2a);
const Color kHxPatchHalo{0, 0, 0, 0.75};

std::string hx_head_name(const HeadExtremes& h) {
  return "L" + std::to_string(h.layer) + " H" + std::to_string(h.head);
}

std::string hx_value_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

bool hx_has_patch(const HeadExample& e) {
  return e.patch_y != -1 || e.patch_x != -1;
}

void hx_check_example(const HeadExtremes& h, const HeadExample& e, const char* group, size_t i) {
  const std::string what = kHxWho + ": the " + group + " example " + std::to_string(i) +
                           (e.name.empty() ? std::string() : " (\"" + e.name + "\")") +
                           " of head " + hx_head_name(h);
  if (!e.picture) throw std::invalid_argument(what + " has no picture (null)");
  const RgbaImage& p = *e.picture;
  if (p.empty())
    throw std::invalid_argument(what + " has a picture of zero size (" + std::to_string(p.width) +
                                "x" + std::to_string(p.height) + ")");
  if (p.rgba.size() != p.pixel_count() * 4)
    throw std::invalid_argument(what + " has a " + std::to_string(p.width) + "x" +
                                std::to_string(p.height) + " picture with " +
                                std::to_string(p.rgba.size()) + " bytes, not width x height x 4");
  if (!std::isfinite(e.value))
    throw std::invalid_argument(what + " has a value that is not finite");
  if (hx_has_patch(e) && (e.grid_h <= 0 || e.grid_w <= 0 || e.patch_y < 0 ||
                          e.patch_y >= e.grid_h || e.patch_x < 0 || e.patch_x >= e.grid_w))
    throw std::invalid_argument(what + ": its patch (y " + std::to_string(e.patch_y) + ", x " +
                                std::to_string(e.patch_x) + ") is outside its " +
                                std::to_string(e.grid_h) + "x" + std::to_string(e.grid_w) +
                                " grid (rows x columns)");
}

void hx_validate(const std::vector<HeadExtremes>& heads) {
  if (heads.empty()) throw std::invalid_argument(kHxWho + ": no heads to draw");
  for (const HeadExtremes& h : heads) {
    if (h.sharpest.empty() && h.broadest.empty())
      throw std::invalid_argument(kHxWho + ": head " + hx_head_name(h) +
                                  " has no examples (its sharpest and broadest lists are empty)");
    for (size_t i = 0; i < h.sharpest.size(); ++i)
      hx_check_example(h, h.sharpest[i], "sharpest", i);
    for (size_t i = 0; i < h.broadest.size(); ++i)
      hx_check_example(h, h.broadest[i], "broadest", i);
  }
}

// The figure's pictures, one shared copy per distinct picture: a file embeds each once
// however many heads show it.
class HxPictures {
 public:
  std::shared_ptr<const RgbaImage> get(const RgbaImage* p) {
    auto& slot = copies_[p];
    if (!slot) slot = std::make_shared<const RgbaImage>(*p);
    return slot;
  }

 private:
  std::map<const RgbaImage*, std::shared_ptr<const RgbaImage>> copies_;
};

// The picture's rectangle in its slot (thumbnail units): fitted into the unit square with
// its aspect, centred.
struct HxBox {
  double x0, y0, x1, y1;
};
HxBox hx_picture_box(const RgbaImage& p, size_t slot) {
  const double w = p.width >= p.height ? 1.0 : double(p.width) / p.height;
  const double h = p.height >= p.width ? 1.0 : double(p.height) / p.width;
  const double x = double(slot) * kHxPitch + (1 - w) / 2, y = (1 - h) / 2;
  return {x, y, x + w, y + h};
}

// One group of a head's row: its thumbnails, their values over them, their patches.
Panel hx_group_panel(const std::vector<HeadExample>& examples, size_t k, double strip,
                     double value_pt, HxPictures& pictures) {
  Panel p;
  p.image = true;
  p.x.show = p.y.show = false;
  p.x.min = -kHxGroupPad;
  p.x.max = double(k) * kHxPitch - kHxSpacing + kHxGroupPad;
  p.y.min = -strip;
  p.y.max = 1;
  for (size_t s = 0; s < examples.size(); ++s) {
    const HeadExample& e = examples[s];
    const HxBox b = hx_picture_box(*e.picture, s);
    ImageLayer im;
    im.image = pictures.get(e.picture);
    im.x0 = b.x0, im.y0 = b.y0, im.x1 = b.x1, im.y1 = b.y1;
    p.items.emplace_back(std::move(im));
    TextLabel t;
    t.x = double(s) * kHxPitch + 0.5;
    t.y = b.y0 - strip / 2;
    t.text = hx_value_text(e.value);
    t.size_pt = value_pt;
    p.items.emplace_back(std::move(t));
    if (hx_has_patch(e)) {
      const double cw = (b.x1 - b.x0) / e.grid_w, ch = (b.y1 - b.y0) / e.grid_h;
      RectOutline r;
      r.x0 = b.x0 + e.patch_x * cw;
      r.x1 = r.x0 + cw;
      r.y0 = b.y0 + e.patch_y * ch;
      r.y1 = r.y0 + ch;
      r.color = kHxPatchHalo;  // a dark halo under the bright line: visible on any picture
      r.width_pt = 1.5;
      p.items.push_back(r);
      r.color = kHxPatchColor;
      r.width_pt = 0.7;
      p.items.push_back(r);
    }
  }
  return p;
}

Figure hx_build(const std::vector<HeadExtremes>& heads, size_t k, double strip, double value_pt,
                const HeadExtremesFigureOptions& o, double width_in, double height_in) {
  Figure f;
  f.font_pt = o.font_pt;
  f.width_in = width_in;
  f.height_in = height_in;
  f.cols = 2;
  f.col_labels = {"sharpest (lowest entropy)", "broadest (highest)"};
  HxPictures pictures;
  for (const HeadExtremes& h : heads) {
    f.row_labels.push_back(hx_head_name(h));
    f.panels.push_back(hx_group_panel(h.sharpest, k, strip, value_pt, pictures));
    f.panels.push_back(hx_group_panel(h.broadest, k, strip, value_pt, pictures));
  }
  return f;
}

}  // namespace

CaptionedFigure head_extremes_figure(const std::vector<HeadExtremes>& heads,
                                     const std::string& model,
                                     const HeadExtremesFigureOptions& options) {
  hx_validate(heads);
  size_t k = 0;
  bool all_k = true;
  for (const HeadExtremes& h : heads) k = std::max({k, h.sharpest.size(), h.broadest.size()});
  for (const HeadExtremes& h : heads)
    all_k = all_k && h.sharpest.size() == k && h.broadest.size() == k;
  const double value_pt = options.font_pt * kHxValueScale;
  const double strip_pt = value_pt * kHxStripLines;
  const double thumb_pt = std::max(1.0, options.thumb_in * 72.0);
  const double group_w = double(k) * kHxPitch - kHxSpacing + 2 * kHxGroupPad;  // thumbnails
  const double rows = double(heads.size());

  // The width at which a thumbnail is thumb_in wide (the layout is linear in the width, so
  // one correction is exact), capped at max_width_in; a generous height keeps the panels'
  // scale set by their width. Then the value strip is sized in points and the height
  // trimmed to the rows.
  const double tall = rows * (2 * thumb_pt / 72.0 + 1.0) + 1.0;
  double width_in = 2 * group_w * thumb_pt / 72.0 + 0.5;
  {
    const Figure f = hx_build(heads, k, strip_pt / thumb_pt, value_pt, options, width_in, tall);
    const FigureLayout L = layout_figure(f);
    width_in += 2 * (group_w * thumb_pt - L.panels[0].plot.w) / 72.0;
  }
  if (options.max_width_in > 0) width_in = std::min(width_in, options.max_width_in);
  double shown_pt = thumb_pt;
  {
    const Figure f = hx_build(heads, k, strip_pt / thumb_pt, value_pt, options, width_in, tall);
    shown_pt = layout_figure(f).panels[0].plot.w / group_w;
  }
  Figure f = hx_build(heads, k, strip_pt / shown_pt, value_pt, options, width_in, tall);
  f.title = (model.empty() ? std::string() : model + " \u2014 ") +
            "attention entropy extremes per head" +
            (options.part.empty() ? std::string() : " (" + options.part + ")");
  f.height_in = fitted_height_in(f);

  const std::string n = std::to_string(heads.size());
  std::string caption =
      "The images on which " + (model.empty() ? std::string("the model") : model) + "'s " + n +
      " attention head" + (heads.size() == 1 ? "" : "s") +
      (options.part.empty() ? std::string() : " (" + options.part + ")") +
      " attend most sharply and most broadly over the dataset, one row per head (L<layer> "
      "H<head>): left, the " +
      (all_k ? std::string() : "up to ") + std::to_string(k) +
      " images with the lowest mean normalised attention entropy over the queries (sharpest "
      "first); right, the " +
      (all_k ? std::string() : "up to ") + std::to_string(k) +
      " with the highest (broadest first). The number over each image is that entropy, "
      "normalised to [0, 1] (0: every query attends to a single token, 1: uniform attention "
      "over all tokens); the red rectangle outlines the query patch on which the head is "
      "sharpest in that image.";
  return {f, caption};
}

std::vector<CaptionedFigure> head_extremes_figures(const std::vector<HeadExtremes>& heads,
                                                   const std::string& model,
                                                   const HeadExtremesFigureOptions& options,
                                                   int rows_per_figure) {
  if (heads.empty()) throw std::invalid_argument(kHxWho + ": no heads to draw");
  const size_t per = size_t(std::max(1, rows_per_figure));
  std::vector<CaptionedFigure> out;
  for (size_t first = 0; first < heads.size(); first += per) {
    const size_t last = std::min(heads.size(), first + per);
    const std::vector<HeadExtremes> part(heads.begin() + std::ptrdiff_t(first),
                                         heads.begin() + std::ptrdiff_t(last));
    HeadExtremesFigureOptions o = options;
    if (heads.size() > per)
      o.part = "heads " + std::to_string(first + 1) + "\u2013" + std::to_string(last) + " of " +
               std::to_string(heads.size());
    out.push_back(head_extremes_figure(part, model, o));
  }
  return out;
}

std::optional<HeadExtremesHit> head_extremes_example_at(const std::vector<HeadExtremes>& heads,
                                                        const FigureHit& hit) {
  if (hit.panel < 0 || size_t(hit.panel) / 2 >= heads.size()) return std::nullopt;
  HeadExtremesHit h;
  h.head = size_t(hit.panel) / 2;
  h.broadest = hit.panel % 2 == 1;
  if (hit.x < 0 || hit.y < 0 || hit.y > 1) return std::nullopt;
  const double slot = std::floor(hit.x / kHxPitch);
  if (hit.x - slot * kHxPitch > 1) return std::nullopt;  // the space between two thumbnails
  const auto& list = h.broadest ? heads[h.head].broadest : heads[h.head].sharpest;
  if (slot >= double(list.size())) return std::nullopt;
  h.example = size_t(slot);
  return h;
}

}  // namespace attnlab::viz
