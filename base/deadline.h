// Deadlines and measured intervals on the monotonic clock (std::chrono::steady_clock): a change
// of the wall clock moves neither. Durations stay absl::Duration, as the API and options give them.
#pragma once

#include <algorithm>
#include <chrono>

#include "absl/time/time.h"

namespace ringfuse::base {

using MonotonicClock = std::chrono::steady_clock;

// When `timeout` from now is over; an infinite timeout never is.
class Deadline {
 public:
  explicit Deadline(absl::Duration timeout) {
    const MonotonicClock::time_point now = MonotonicClock::now();
    const auto wait = absl::ToChronoNanoseconds(std::max(timeout, absl::ZeroDuration()));
    end_ = wait >= MonotonicClock::time_point::max() - now ? MonotonicClock::time_point::max()
                                                           : now + wait;
  }

  bool passed() const { return MonotonicClock::now() >= end_; }

  // What is left of the wait: zero once it passed, infinite for an infinite timeout.
  absl::Duration left() const {
    const MonotonicClock::time_point now = MonotonicClock::now();
    if (now >= end_) return absl::ZeroDuration();
    if (end_ == MonotonicClock::time_point::max()) return absl::InfiniteDuration();
    return absl::FromChrono(end_ - now);
  }

 private:
  MonotonicClock::time_point end_;
};

// The time since it was made.
class Stopwatch {
 public:
  absl::Duration elapsed() const { return absl::FromChrono(MonotonicClock::now() - start_); }

 private:
  MonotonicClock::time_point start_ = MonotonicClock::now();
};

}  // namespace ringfuse::base
