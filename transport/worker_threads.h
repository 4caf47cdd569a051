// The threads of a transport: each worker sets itself up on its own thread (rings are created
// by the thread that submits to them), reports, then runs until its loop ends.
#pragma once

#include <pthread.h>
#include <signal.h>

#include <functional>
#include <future>
#include <thread>
#include <vector>

#include "absl/status/status.h"

namespace ringfuse::internal {

class WorkerThreads {
 public:
  ~WorkerThreads() { Join(); }

  // Starts `count` threads; thread i runs setup(i) and, if that succeeded, run(i). Returns once
  // every setup has finished: OK, or the first error (the threads that did start keep running
  // until their loops end: the caller stops them).
  absl::Status Start(size_t count, const std::function<absl::Status(size_t)>& setup,
                     const std::function<void(size_t)>& run) {
    std::vector<std::future<absl::Status>> ready;
    for (size_t i = 0; i < count; ++i) {
      std::promise<absl::Status> promise;
      ready.push_back(promise.get_future());
      threads_.emplace_back([i, setup, run, p = std::move(promise)]() mutable {
        absl::Status status = setup(i);
        const bool ok = status.ok();
        p.set_value(std::move(status));
        if (ok) run(i);
      });
    }
    absl::Status first_error;
    for (auto& future : ready) {
      absl::Status status = future.get();
      if (!status.ok() && first_error.ok()) first_error = status;
    }
    return first_error;
  }

  // Sends `signal` to every thread not yet joined.
  void Signal(int signal) {
    for (std::thread& thread : threads_) {
      if (thread.joinable()) pthread_kill(thread.native_handle(), signal);
    }
  }

  void Join() {
    for (std::thread& thread : threads_) {
      if (thread.joinable()) thread.join();
    }
  }

 private:
  std::vector<std::thread> threads_;
};

}  // namespace ringfuse::internal
