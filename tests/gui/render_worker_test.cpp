// The GUI's render worker (app/gui/jobs/render_worker): drawings run off the calling thread,
// a newer request for a slot replaces one that has not started, and a drawing that
// throws comes back as an error.
#include "app/gui/jobs/render_worker.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

using attnlab::gui::RenderWorker;
using attnlab::viz::RgbaImage;

namespace {

RgbaImage image_of_width(int w) {
  RgbaImage img;
  img.width = w;
  img.height = 1;
  img.rgba.assign(size_t(w) * 4, 255);
  return img;
}

// Everything the worker finishes until it is idle (at most 10 s).
std::vector<RenderWorker::Finished> drain(RenderWorker& worker) {
  std::vector<RenderWorker::Finished> all;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    for (auto& f : worker.take_finished()) all.push_back(std::move(f));
    if (worker.idle()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return all;
}

// A drawing that waits until released: holds the worker busy.
struct Gate {
  std::mutex m;
  std::condition_variable cv;
  bool open = false, entered = false;
  RenderWorker::Job job() {
    return [this] {
      std::unique_lock<std::mutex> lock(m);
      entered = true;
      cv.notify_all();
      cv.wait(lock, [this] { return open; });
      return image_of_width(1);
    };
  }
  void wait_entered() {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [this] { return entered; });
  }
  void release() {
    std::lock_guard<std::mutex> lock(m);
    open = true;
    cv.notify_all();
  }
};

}  // namespace

TEST(RenderWorker, DrawsOffTheCallingThreadAndHandsTheImageBack) {
  RenderWorker worker;
  const auto caller = std::this_thread::get_id();
  std::thread::id drew_on;
  worker.submit("single", "k1", [&] {
    drew_on = std::this_thread::get_id();
    return image_of_width(3);
  });
  const auto done = drain(worker);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].slot, "single");
  EXPECT_EQ(done[0].key, "k1");
  EXPECT_EQ(done[0].image.width, 3);
  EXPECT_TRUE(done[0].error.empty());
  EXPECT_NE(drew_on, caller);
  EXPECT_TRUE(worker.idle());
}

TEST(RenderWorker, ANewerRequestForASlotReplacesOneNotStarted) {
  RenderWorker worker;
  Gate gate;
  worker.submit("busy", "gate", gate.job());
  gate.wait_entered();  // the worker is now drawing the gate
  std::atomic<int> old_runs{0};
  worker.submit("map", "layer 1", [&] {
    ++old_runs;
    return image_of_width(1);
  });
  worker.submit("map", "layer 2", [] { return image_of_width(2); });
  worker.submit("tab", "rank", [] { return image_of_width(4); });
  EXPECT_FALSE(worker.idle());
  gate.release();
  const auto done = drain(worker);
  ASSERT_EQ(done.size(), 3u);
  EXPECT_EQ(done[0].key, "gate");
  EXPECT_EQ(done[1].slot, "map");  // slots keep the order they were first asked for
  EXPECT_EQ(done[1].key, "layer 2");
  EXPECT_EQ(done[1].image.width, 2);
  EXPECT_EQ(done[2].slot, "tab");
  EXPECT_EQ(old_runs.load(), 0);
}

TEST(RenderWorker, ADrawingThatThrowsComesBackAsItsError) {
  RenderWorker worker;
  worker.submit("tab|rank", "k",
                []() -> RgbaImage { throw std::runtime_error("this model has no RALA layer"); });
  const auto done = drain(worker);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].error, "this model has no RALA layer");
  EXPECT_TRUE(done[0].image.empty());
}

TEST(RenderWorker, StoppingDropsWhatHasNotStarted) {
  std::atomic<int> runs{0};
  Gate gate;
  std::thread releaser;
  {
    RenderWorker worker;
    worker.submit("busy", "gate", gate.job());
    gate.wait_entered();
    worker.submit("later", "k", [&] {
      ++runs;
      return image_of_width(1);
    });
    releaser = std::thread([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      gate.release();
    });
  }  // the destructor waits for the running drawing only
  releaser.join();
  EXPECT_EQ(runs.load(), 0);
}
