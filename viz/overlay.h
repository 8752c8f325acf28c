// Heatmap overlays: a per-token map over the image it was computed from.
// The map (rows x cols tokens) is normalised, upsampled to the picture's pixels (nearest:
// each token a flat block; bilinear: between token centres), colour-mapped and
// alpha-blended over the image or a greyscale copy of it. Figures then add the patch or
// window grid and the query marker as outlines (add_token_grid, add_query_marker).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "viz/figure.h"

namespace attnlab::viz {

// How a map's values become [0, 1] colour positions.
enum class MapNormalisation {
  MinMax,       // [min, max] of this map
  DivideByMax,  // [0, max] of this map
  Shared,       // a range given by the caller, e.g. shared by all panels of a figure
};
const char* normalisation_name(MapNormalisation n);

struct ValueRange {
  double lo = 0, hi = 1;
};
// The range a map is drawn with; NaN values are ignored. `shared` is used for Shared.
ValueRange map_range(const float* values, size_t n, MapNormalisation norm, ValueRange shared = {});
// The union of several maps' [min, max] (or [0, max] with from_zero): a shared scale.
ValueRange union_range(const std::vector<const std::vector<float>*>& maps, bool from_zero);

// Signed data (e.g. Castling's attention, differences of maps): a range with negative
// values becomes symmetric about 0, to be drawn on a diverging map (signed_colormap: the
// chosen one when it diverges, else coolwarm). A range without negatives is unchanged.
ValueRange symmetric_if_signed(ValueRange r);
Colormap signed_colormap(Colormap chosen);

// rows x cols values to out_h x out_w; bilinear samples at pixel centres with edges clamped
// (PyTorch's interpolate(mode="bilinear", align_corners=False)).
std::vector<float> upsample_map(const float* values, int rows, int cols, int out_h, int out_w,
                                Upsample mode);

// Image upscaled by pixel replication (pixels are data: no smoothing) to `scale` times.
RgbaImage scale_image_nearest(const RgbaImage& image, int scale);
RgbaImage greyscale(const RgbaImage& image);

struct OverlayStyle {
  Colormap cmap = Colormap::Viridis;
  double alpha = 0.6;  // map opacity over the image
  Upsample upsample = Upsample::Bilinear;
  bool grey_background = true;  // blend over a greyscale copy: the map's colours stay readable
};

// The blended picture at the image's size (upscale small images first with
// scale_image_nearest so that a bilinear map has pixels to be smooth on).
RgbaImage overlay_map(const RgbaImage& image, const float* map, int rows, int cols,
                      ValueRange range, const OverlayStyle& style);

// The smallest integer factor that brings the image's longer side to at least `min_side`.
int upscale_factor(const RgbaImage& image, int min_side);

// An image panel showing `picture` over data coordinates [0, w] x [0, h] (pixels of the
// picture), no axes. Panels given the same shared picture draw (and embed) it once.
Panel image_panel(RgbaImage picture, std::string title = "");
Panel image_panel(std::shared_ptr<const RgbaImage> picture, std::string title = "");
// A map over an image panel's whole picture, as a layer: the colour-mapped values with
// the style's colormap, upsampling and alpha, blended when drawn (the same look as
// overlay_map's blended picture, without a blended copy of the picture per panel).
void add_map_layer(Panel& panel, const float* map, int rows, int cols, ValueRange range,
                   const OverlayStyle& style);
// Outlines of a cols x rows token grid over the whole picture of an image panel.
void add_token_grid(Panel& panel, int rows, int cols, Color color = Color{1, 1, 1, 0.3},
                    double width_pt = 0.35);
// The query token (row, col) of a rows x cols grid: a square outline around its cell.
void add_query_marker(Panel& panel, int rows, int cols, int row, int col);

}  // namespace attnlab::viz
