#include "tools/stress_measure.h"

#include <unistd.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "tools/contention.h"
#include "tools/stress_loop.h"

namespace ringfuse::tools {
namespace {

// The threads of one measurement, parked until Release.
class Gang {
 public:
  Gang(StressKernel& kernel, int threads, int files) : results_(threads) {
    for (int i = 0; i < threads; ++i) callers_.push_back(kernel.MakeCaller(i));
    for (int i = 0; i < threads; ++i) {
      threads_.emplace_back([this, i, threads, files] {
        go_.wait(false, std::memory_order_acquire);
        results_[i] = RunStressLoop(*callers_[i], LoopPlan{files, i, threads}, stop_);
      });
    }
  }
  ~Gang() { End(); }

  void Release() {
    go_.store(true, std::memory_order_release);
    go_.notify_all();
  }
  uint64_t Handled() const {
    uint64_t handled = 0;
    for (const std::unique_ptr<StressCaller>& caller : callers_) handled += caller->handled();
    return handled;
  }
  // Ends the loops and joins the threads; the first failure, if one failed.
  absl::Status Stop() {
    End();
    for (const absl::Status& result : results_) {
      if (!result.ok()) return result;
    }
    return absl::OkStatus();
  }

 private:
  void End() {
    stop_.store(true, std::memory_order_relaxed);
    if (!go_.load()) Release();  // threads still parked: let them see stop_
    for (std::thread& thread : threads_) {
      if (thread.joinable()) thread.join();
    }
  }

  std::vector<std::unique_ptr<StressCaller>> callers_;
  std::vector<absl::Status> results_;  // each written by its thread alone, read after the join
  std::atomic<bool> go_{false};
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

}  // namespace

absl::StatusOr<StressMeasurement> MeasureStress(StressKernel& kernel, int threads, int files,
                                                absl::Duration duration) {
  Gang gang(kernel, threads, files);
  // The threads exist now, parked or on their way to it: a thread still on its way makes one
  // futex wait the meter counts, a few against the millions of requests measured.
  absl::StatusOr<ContentionMeter> meter = ContentionMeter::Start(::getpid());
  const absl::Time start = absl::Now();
  gang.Release();
  absl::SleepFor(duration);
  StressMeasurement measurement;
  if (meter.ok()) measurement.sample.contention = meter->Read();
  measurement.sample.requests = gang.Handled();
  measurement.sample.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  measurement.sample.threads = threads;
  measurement.meter = meter.status();
  if (absl::Status stopped = gang.Stop(); !stopped.ok()) return stopped;
  return measurement;
}

}  // namespace ringfuse::tools
