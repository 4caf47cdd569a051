// The uniques a server makes up itself, beside the kernel's, each in a range of its own: a
// RETRIEVE notification carries one, and the kernel's NOTIFY_REPLY answers with it, so the answer
// must find its sender and never be taken for a request's.
//
// The kernel numbers its requests from 0 in steps of 2 (fs/fuse/dev.c, fuse_get_unique); bit 0
// marks an INTERRUPT (FUSE_INT_REQ_BIT) and bit 63 a resent request (wire::kUniqueResend), so
// every range below keeps both clear and starts far above any count the kernel reaches.
#pragma once

#include <cstdint>

#include "ringfuse/wire.h"

namespace ringfuse::internal {

// The Notifier's RETRIEVEs: from here, in steps of 2 (transport/notifier.cc).
inline constexpr uint64_t kFirstNotifyUnique = uint64_t{1} << 62;

// The uring-cmd queues' own RETRIEVEs (UringQueue::Pump): bits 62 and 61 set, the queue's index
// from bit kPumpQueueShift up, and below it an even counter of the queue's own.
inline constexpr uint64_t kPumpUniques = (uint64_t{1} << 62) | (uint64_t{1} << 61);
inline constexpr int kPumpQueueShift = 40;

// Whether `unique` is a queue's own RETRIEVE's.
constexpr bool IsPumpUnique(uint64_t unique) { return (unique >> 61) == (kPumpUniques >> 61); }

static_assert((kFirstNotifyUnique & (1 | wire::kUniqueResend)) == 0);
static_assert((kPumpUniques & (1 | wire::kUniqueResend)) == 0);
// The Notifier's range, [1 << 62, 1 << 62 | 1 << 61), ends where the queues' begins: 2^60
// RETRIEVEs apart.
static_assert(kFirstNotifyUnique < kPumpUniques && !IsPumpUnique(kFirstNotifyUnique));
// The highest queue index that fits, 2^21 - 1 (no machine has that many CPUs), still makes a
// queue's unique.
static_assert(IsPumpUnique(kPumpUniques | (((uint64_t{1} << 21) - 1) << kPumpQueueShift)));

}  // namespace ringfuse::internal
