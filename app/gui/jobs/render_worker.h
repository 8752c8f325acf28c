// RenderWorker: the thread that draws figures and overlays into RGBA buffers (cairo and
// viz code only: no GL, no LibTorch, no GuiState), so the frame loop never spends a frame
// rendering. Each request names a screen slot; a newer request for a slot replaces one
// that has not started, so scrubbing through layers renders only where the user stops.
// Finished images come back through take_finished(), which the main thread calls once a
// frame and uploads as GL textures (texture_cache).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "viz/figure_layout.h"
#include "viz/rgba_image.h"

namespace attnlab::gui {

class RenderWorker {
 public:
  // What a job drew: the image and, for a figure, where its panels are (hover, clicks).
  struct Drawing {
    Drawing(viz::RgbaImage im = {},  // NOLINT: an overlay job returns just the image
            std::shared_ptr<const viz::FigureGeometry> geo = nullptr)
        : image(std::move(im)), geometry(std::move(geo)) {}
    viz::RgbaImage image;
    std::shared_ptr<const viz::FigureGeometry> geometry;
  };
  // Draws the image; throws (the message is kept) when it cannot.
  using Job = std::function<Drawing()>;
  struct Finished {
    std::string slot, key;
    viz::RgbaImage image;  // empty when error is set
    std::shared_ptr<const viz::FigureGeometry> geometry;  // figures only
    std::string error;
  };

  RenderWorker();
  ~RenderWorker();  // drops what has not started and joins
  RenderWorker(const RenderWorker&) = delete;
  RenderWorker& operator=(const RenderWorker&) = delete;

  void submit(const std::string& slot, const std::string& key, Job job);
  std::vector<Finished> take_finished();
  bool idle() const;  // nothing queued, drawing or waiting to be taken

 private:
  struct Request {
    std::string key;
    Job job;
  };
  void thread_main();

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::string> order_;           // slots in the order they were asked for
  std::map<std::string, Request> pending_;  // slot -> its newest request
  std::vector<Finished> finished_;
  bool drawing_ = false, stopping_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace attnlab::gui
