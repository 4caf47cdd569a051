// A counter that many threads add to at once without sharing a cache line: each thread adds to
// one of kStripes padded counters, picked once per thread; a read sums them. For statistics
// counted on every request, where one atomic would be a line all queue threads fight over.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace ringfuse::daemon {

class StripedCounter {
 public:
  void Add(uint64_t count = 1) {
    stripes_[StripeOfThisThread()].value.fetch_add(count, std::memory_order_relaxed);
  }
  uint64_t Sum() const {
    uint64_t sum = 0;
    for (const Stripe& stripe : stripes_) sum += stripe.value.load(std::memory_order_relaxed);
    return sum;
  }
  // Sets the sum (a handover's restore, with no thread adding).
  void Reset(uint64_t sum) {
    for (Stripe& stripe : stripes_) stripe.value.store(0, std::memory_order_relaxed);
    stripes_[0].value.store(sum, std::memory_order_relaxed);
  }

 private:
  static constexpr size_t kStripes = 32;
  struct alignas(64) Stripe {
    std::atomic<uint64_t> value{0};
  };
  static size_t StripeOfThisThread() {
    static std::atomic<size_t> next{0};
    thread_local const size_t stripe = next.fetch_add(1, std::memory_order_relaxed) % kStripes;
    return stripe;
  }
  Stripe stripes_[kStripes];
};

}  // namespace ringfuse::daemon
