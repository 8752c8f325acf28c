// See top_k.h. Each thread keeps the k best rows it has seen in a heap whose front is the
// worst of them; the heaps are merged and sorted at the end. The order is total (no two rows
// share image and token), so the k best are the same set whatever chunks each thread took.
#include "core/retrieval/top_k.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

namespace attnlab::retrieval {
namespace {

constexpr int kLanes = 8;

// a·q and a·a over n floats in kLanes fixed lanes, summed in a fixed order.
inline void dot_and_norm(const float* a, const float* q, int64_t n, float& dot, float& norm) {
  float d[kLanes] = {}, s[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) {
      d[j] += a[i + j] * q[i + j];
      s[j] += a[i + j] * a[i + j];
    }
  for (int j = 0; i + j < n; ++j) {
    d[j] += a[i + j] * q[i + j];
    s[j] += a[i + j] * a[i + j];
  }
  dot = ((d[0] + d[1]) + (d[2] + d[3])) + ((d[4] + d[5]) + (d[6] + d[7]));
  norm = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

inline float cosine(float dot, float row_norm2, float query_norm2) {
  if (row_norm2 == 0.0f || query_norm2 == 0.0f) return 0.0f;
  return static_cast<float>(
      static_cast<double>(dot) /
      (std::sqrt(static_cast<double>(row_norm2)) * std::sqrt(static_cast<double>(query_norm2))));
}

float query_norm2(const std::vector<float>& query) {
  float dot = 0, norm = 0;
  dot_and_norm(query.data(), query.data(), int64_t(query.size()), dot, norm);
  return norm;
}

// The k best so far; front() is the worst of them.
class Best {
 public:
  explicit Best(size_t k) : k_(k) {}
  void offer(const Match& m) {
    if (heap_.size() < k_) {
      heap_.push_back(m);
      std::push_heap(heap_.begin(), heap_.end(), ranks_before);
    } else if (ranks_before(m, heap_.front())) {
      std::pop_heap(heap_.begin(), heap_.end(), ranks_before);
      heap_.back() = m;
      std::push_heap(heap_.begin(), heap_.end(), ranks_before);
    }
  }
  std::vector<Match>& matches() { return heap_; }

 private:
  size_t k_;
  std::vector<Match> heap_;
};

// A run of candidate rows.
struct Chunk {
  int64_t begin, end;
};

}  // namespace

float cosine_of_row(const TokenIndex& index, int64_t row, const std::vector<float>& query) {
  if (int64_t(query.size()) != index.features())
    throw std::invalid_argument("cosine_of_row: query of width " + std::to_string(query.size()) +
                                ", index of width " + std::to_string(index.features()));
  if (row < 0 || row >= index.rows()) throw std::out_of_range("cosine_of_row: no such row");
  std::vector<float> scratch(query.size());
  float dot = 0, norm = 0;
  dot_and_norm(index.row_floats(row, scratch.data()), query.data(), index.features(), dot, norm);
  return cosine(dot, norm, query_norm2(query));
}

std::vector<Match> top_k_similar(const TokenIndex& index, const std::vector<float>& query,
                                 int64_t k, const SearchOptions& options) {
  const int64_t n = index.images(), t = index.tokens(), f = index.features();
  if (int64_t(query.size()) != f)
    throw std::invalid_argument("top_k_similar: the query has " + std::to_string(query.size()) +
                                " features but " + index.path() + " has " + std::to_string(f));
  for (float v : query)
    if (!std::isfinite(v))
      throw std::invalid_argument("top_k_similar: the query has a NaN or infinite value");
  if (k < 1)
    throw std::invalid_argument("top_k_similar: k must be at least 1, not " + std::to_string(k));
  if (options.chunk_rows < 1)
    throw std::invalid_argument("top_k_similar: chunk_rows must be at least 1");
  const int64_t first = options.images_begin,
                last = options.images_end < 0 ? n : options.images_end;
  if (first < 0 || first > last || last > n)
    throw std::invalid_argument("top_k_similar: image range [" + std::to_string(first) + ", " +
                                std::to_string(last) + ") is outside the index's " +
                                std::to_string(n) + " images");
  if (options.exclude_image < -1 || options.exclude_image >= n)
    throw std::invalid_argument("top_k_similar: exclude_image " +
                                std::to_string(options.exclude_image) + " is not an image of " +
                                std::to_string(n));

  // Candidate rows: [first·T, last·T) less the excluded image's rows, cut into chunks.
  std::vector<std::pair<int64_t, int64_t>> spans;
  const int64_t ex = options.exclude_image;
  if (ex >= first && ex < last) {
    spans.emplace_back(first * t, ex * t);
    spans.emplace_back((ex + 1) * t, last * t);
  } else {
    spans.emplace_back(first * t, last * t);
  }
  std::vector<Chunk> chunks;
  int64_t total = 0;
  for (const auto& [b, e] : spans)
    for (int64_t r = b; r < e; r += options.chunk_rows) {
      chunks.push_back({r, std::min(e, r + options.chunk_rows)});
      total += chunks.back().end - chunks.back().begin;
    }
  if (total == 0) return {};

  const float qn = query_norm2(query);
  const size_t keep = static_cast<size_t>(std::min(k, total));
  int threads =
      options.threads > 0 ? options.threads : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::max(1, std::min({threads, 16, static_cast<int>(chunks.size())}));

  std::atomic<size_t> next{0};
  std::atomic<int64_t> done{0};
  std::atomic<bool> stop{false};
  std::vector<Best> best(static_cast<size_t>(threads), Best(keep));
  std::exception_ptr failure;
  std::mutex failure_mutex;
  int64_t reported = -1;  // the last count the caller's thread reported

  // Scans chunks until none is left; the caller's thread (index 0) reports and polls.
  const auto scan = [&](int worker) {
    try {
      std::vector<float> scratch(static_cast<size_t>(f));
      Best& mine = best[static_cast<size_t>(worker)];
      for (size_t c = next++; c < chunks.size() && !stop; c = next++) {
        for (int64_t r = chunks[c].begin; r < chunks[c].end; ++r) {
          float dot = 0, norm = 0;
          dot_and_norm(index.row_floats(r, scratch.data()), query.data(), f, dot, norm);
          const float s = cosine(dot, norm, qn);
          if (std::isfinite(s)) mine.offer({r / t, r % t, s});
        }
        const int64_t so_far = done += chunks[c].end - chunks[c].begin;
        if (worker == 0) {
          if (options.on_progress) options.on_progress(reported = so_far, total);
          if (options.cancelled && options.cancelled()) stop = true;
        }
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      stop = true;
    }
  };
  std::vector<std::thread> pool;
  for (int w = 1; w < threads; ++w) pool.emplace_back(scan, w);
  scan(0);
  for (std::thread& th : pool) th.join();
  if (failure) std::rethrow_exception(failure);
  if (stop) throw Cancelled();
  if (options.on_progress && reported != total) options.on_progress(total, total);

  std::vector<Match> out;
  for (Best& b : best) out.insert(out.end(), b.matches().begin(), b.matches().end());
  std::sort(out.begin(), out.end(), ranks_before);
  if (out.size() > keep) out.resize(keep);
  return out;
}

}  // namespace attnlab::retrieval
