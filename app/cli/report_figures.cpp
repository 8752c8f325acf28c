// write_report_figures: see report_figures.h.
#include "app/cli/report_figures.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>

#include "app/cli/analyze_common.h"
#include "app/cli/output_failure.h"
#include "core/runtime/threads.h"

namespace attnlab::cli {

FigureStageResult write_report_figures(const std::vector<session::FigureJob>& jobs,
                                       size_t parallel_jobs,
                                       const std::vector<viz::FigureFormat>& formats,
                                       const std::string& figures_dir, double dpi) {
  std::vector<std::optional<IndexEntry>> entries(jobs.size());
  std::vector<std::string> job_errors(jobs.size());
  // The first write failure (output_failure.h): no later figure can be written either, so
  // the remaining jobs are not started and it is rethrown after the workers stop.
  std::exception_ptr output_failure;
  std::atomic<bool> stop{false};
  Progress progress("report: figures", int64_t(jobs.size()), "figure");
  std::mutex progress_mutex;
  int64_t done = 0;
  const auto run_job = [&](size_t i) {
    const session::FigureJob& job = jobs[i];
    if (stop) return;
    std::string error;
    try {
      const viz::CaptionedFigure cf = job.build();
      IndexEntry e{job.kind, job.stem, cf.caption, {}};
      for (const auto f : formats) {
        const std::string name = job.stem + "." + viz::figure_format_name(f);
        viz::write_figure(cf.figure, (std::filesystem::path(figures_dir) / name).string(), f, dpi);
        e.formats.push_back(viz::figure_format_name(f));
      }
      entries[i] = std::move(e);
    } catch (const std::exception& e) {
      if (is_output_failure(e)) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        if (!output_failure) output_failure = std::current_exception();
        stop = true;
        return;
      }
      error = e.what();
    }
    std::lock_guard<std::mutex> lock(progress_mutex);
    if (!error.empty()) {
      progress.break_line();
      std::fprintf(stderr, "attnlab: error: figure %s: %s (skipped)\n", job.stem.c_str(),
                   error.c_str());
      job_errors[i] = "figure " + job.stem + ": " + error;
    }
    progress.update(++done, job.stem);
  };

  // Side by side: each worker takes the next job; the cairo drawings share nothing.
  const size_t parallel = std::min(parallel_jobs, jobs.size());
  const size_t workers =
      std::min<size_t>(parallel, size_t(std::max(1, runtime::current_threads())));
  std::atomic<size_t> next{0};
  const auto worker = [&] {
    for (size_t i = next++; i < parallel; i = next++) run_job(i);
  };
  if (workers > 1) {
    std::vector<std::thread> pool;
    for (size_t w = 0; w < workers; ++w) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
  } else {
    worker();
  }
  for (size_t i = parallel; i < jobs.size(); ++i) run_job(i);  // the LibTorch ones, in turn
  progress.finish();
  if (output_failure) std::rethrow_exception(output_failure);

  FigureStageResult out;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (entries[i]) out.written.push_back(std::move(*entries[i]));
    if (!job_errors[i].empty()) out.errors.push_back(job_errors[i]);
  }
  return out;
}

}  // namespace attnlab::cli
