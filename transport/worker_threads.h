// The threads of a transport: each worker sets itself up on its own thread (rings are created
// by the thread that submits to them), reports, then runs until its loop ends.
#pragma once

#include <pthread.h>
#include <signal.h>

#include <functional>
#include <future>
#include <mutex>
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
    {
      std::lock_guard lock(mutex_);
      ending_.resize(threads_.size() + count, false);
    }
    for (size_t i = 0; i < count; ++i) {
      std::promise<absl::Status> promise;
      ready.push_back(promise.get_future());
      const size_t slot = threads_.size();
      threads_.emplace_back([this, i, slot, setup, run, p = std::move(promise)]() mutable {
        absl::Status status = setup(i);
        const bool ok = status.ok();
        p.set_value(std::move(status));
        if (ok) run(i);
        std::lock_guard lock(mutex_);
        ending_[slot] = true;
      });
      std::lock_guard lock(mutex_);
      handles_.push_back(threads_.back().native_handle());
    }
    absl::Status first_error;
    for (auto& future : ready) {
      absl::Status status = future.get();
      if (!status.ok() && first_error.ok()) first_error = status;
    }
    return first_error;
  }

  // Sends `signal` to every thread still running. Safe while another thread joins: a thread
  // marks itself ending under the lock before it can end, so none signalled is joined yet.
  void Signal(int signal) {
    std::lock_guard lock(mutex_);
    for (size_t i = 0; i < handles_.size(); ++i) {
      if (!ending_[i]) pthread_kill(handles_[i], signal);
    }
  }

  // Any number of threads at once (a session's Wait while a handover pauses the transport): one
  // joins, the others return once it has.
  void Join() {
    std::lock_guard joining(join_mutex_);
    for (std::thread& thread : threads_) {
      if (thread.joinable()) thread.join();
    }
  }

 private:
  std::vector<std::thread> threads_;  // changed by Start and, under join_mutex_, by Join
  std::mutex join_mutex_;
  std::mutex mutex_;
  std::vector<pthread_t> handles_;  // of threads_, for Signal, which must not touch threads_
  std::vector<bool> ending_;        // thread i has finished its work and is about to end
};

}  // namespace ringfuse::internal
