// Which request each transport slot is handling, so that INTERRUPT can reach it.
//
// One entry per slot (a worker's buffer, a ring entry), written only by the thread that owns the
// slot: the request path is two relaxed stores, no lock. INTERRUPT, rare, scans the slots. An
// interrupt that finds no slot (it overtook its request, which another thread has read but not
// begun) is parked, and the next Begin of that unique picks it up. The kernel's uniques grow
// monotonically, so a parked unique far below the ones being begun belongs to a request that was
// already answered, and is dropped.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>

#include "protocol/dispatcher.h"

namespace ringfuse::internal {

class InflightTable : public InterruptSink {
 public:
  explicit InflightTable(size_t slots) : slots_(new Slot[slots]), slot_count_(slots) {}

  // The slot now handles `unique`; returns the flag its handler sees as Interrupted().
  const std::atomic<bool>* Begin(size_t slot, uint64_t unique) {
    Slot& s = slots_[slot];
    s.interrupted.store(false, std::memory_order_relaxed);
    s.unique.store(unique, std::memory_order_seq_cst);
    if (parked_count_.load(std::memory_order_seq_cst) != 0) ClaimParked(s, unique);
    return &s.interrupted;
  }

  void End(size_t slot) { slots_[slot].unique.store(0, std::memory_order_release); }

  void MarkInterrupted(uint64_t unique) override {
    if (MarkSlot(unique)) return;
    Park(unique);
    // A Begin between the scan and the park saw nothing parked: look again. (Both sides use
    // seq_cst, so at least one of them sees the other.)
    MarkSlot(unique);
  }

  size_t size() const { return slot_count_; }

 private:
  struct alignas(64) Slot {  // one cache line each: slots belong to different threads
    std::atomic<uint64_t> unique{0};
    std::atomic<bool> interrupted{false};
  };

  static constexpr size_t kParked = 64;

  bool MarkSlot(uint64_t unique) {
    for (size_t i = 0; i < slot_count_; ++i) {
      if (slots_[i].unique.load(std::memory_order_seq_cst) == unique) {
        slots_[i].interrupted.store(true, std::memory_order_relaxed);
        return true;
      }
    }
    return false;
  }

  // How far (in uniques) a parked interrupt may trail the requests being begun.
  static constexpr uint64_t kParkWindow = 1 << 16;

  void Park(uint64_t unique) {
    const size_t at = parked_next_.fetch_add(1, std::memory_order_relaxed) % kParked;
    if (parked_[at].exchange(unique, std::memory_order_seq_cst) == 0) {
      parked_count_.fetch_add(1, std::memory_order_seq_cst);
    }
  }

  void ClaimParked(Slot& slot, uint64_t unique) {
    for (std::atomic<uint64_t>& parked : parked_) {
      const uint64_t value = parked.load(std::memory_order_acquire);
      const bool mine = value == unique;
      const bool stale = value != 0 && value + kParkWindow < unique;
      if (!(mine || stale)) continue;
      uint64_t expected = value;
      if (!parked.compare_exchange_strong(expected, 0, std::memory_order_acq_rel)) continue;
      parked_count_.fetch_sub(1, std::memory_order_release);
      if (mine) slot.interrupted.store(true, std::memory_order_relaxed);
    }
  }

  std::unique_ptr<Slot[]> slots_;
  size_t slot_count_;
  std::array<std::atomic<uint64_t>, kParked> parked_{};
  std::atomic<size_t> parked_next_{0};
  std::atomic<size_t> parked_count_{0};
};

}  // namespace ringfuse::internal
