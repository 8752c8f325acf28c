// The mean attention map of a group of images; see group_maps.h.
#include "app/gui/jobs/group_maps.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <stdexcept>

#include "app/gui/jobs/loaded_model.h"
#include "app/session/analysis_session.h"
#include "app/session/edited_input.h"
#include "app/session/query.h"
#include "core/io/image_io.h"

namespace attnlab::gui {

MeanAttentionMap mean_attention_map(LoadedModel& model, const std::vector<std::string>& files,
                                    const std::function<bool()>& cancelled,
                                    const std::function<void(int64_t)>& progress) {
  MeanAttentionMap out;
  std::vector<double> sum;
  models::ForwardOptions fo;
  fo.trace_attention = true;
  at::NoGradGuard no_grad;
  int64_t done = 0;
  for (const std::string& file : files) {
    if (cancelled && cancelled()) break;
    try {
      const at::Tensor x = session::edited_input(
          io::load_rgb_image(file), model.choice.preprocessing, *model.ready.model, {});
      const models::ForwardResult forward = model.ready.model->run(x.to(model.device), fo);
      if (forward.traces.empty()) throw std::runtime_error("the model has no attention layer");
      const attention::AttentionTrace& last = *forward.traces.back().trace;
      const session::Query q = session::rollout_query(
          session::AnalysisSettings{}, forward.traces.front().trace->layout, last.layout);
      const int64_t token = q.token_in(last.layout);
      if (token < 0) throw std::runtime_error("the last layer has no " + q.prefix + " token");
      const session::LayerQueryMaps maps = session::layer_query_maps(last, 0, token);
      const at::Tensor mean = maps.fused[0].to(at::kCPU, at::kFloat).contiguous();  // (H, W)
      const int rows = int(mean.size(0)), cols = int(mean.size(1));
      if (sum.empty()) {
        out.rows = rows;
        out.cols = cols;
        out.query = q.tag;
        out.layer = forward.traces.back().path;
        sum.assign(size_t(rows) * size_t(cols), 0.0);
      }
      if (rows != out.rows || cols != out.cols)
        throw std::runtime_error("a " + std::to_string(rows) + "x" + std::to_string(cols) +
                                 " grid, not the first image's");
      const float* v = mean.data_ptr<float>();
      for (size_t k = 0; k < sum.size(); ++k) sum[k] += double(v[k]);
      ++out.images;
    } catch (const std::exception& e) {
      out.failed.push_back(file + ": " + e.what());
    }
    if (progress) progress(++done);
  }
  out.map.resize(sum.size());
  for (size_t k = 0; k < sum.size(); ++k) out.map[k] = float(sum[k] / std::max(1, out.images));
  return out;
}

}  // namespace attnlab::gui
