/// \file
/// What a server wishes of INIT (InitWishes) and what the kernel and the server agreed on
/// (Negotiated). The negotiation itself is ringfuse/protocol/negotiate.h.
#pragma once

#include <cstdint>
#include <string>

#include "ringfuse/export.h"
#include "ringfuse/wire.h"

RINGFUSE_PUBLIC_BEGIN

namespace ringfuse {

/// What the server would like. Flags the kernel does not offer are dropped, except those listed in
/// `required_flags`, whose absence fails the negotiation with a message naming them.
struct InitWishes {
  /// INIT flags wished for (wire::init_flag).
  /// Not READDIRPLUS: the kernel does not fall back to READDIR when READDIRPLUS fails, so a
  /// handler that overrides Readdirplus adds kDoReaddirplus (and kReaddirplusAuto) itself.
  uint64_t flags = wire::init_flag::kAsyncRead | wire::init_flag::kBigWrites |
                   wire::init_flag::kMaxPages | wire::init_flag::kParallelDirops |
                   wire::init_flag::kAtomicOTrunc | wire::init_flag::kAsyncDio |
                   wire::init_flag::kSetxattrExt;
  uint64_t required_flags = 0;         ///< INIT flags without which the negotiation fails
  uint32_t max_write = 1 << 20;        ///< bytes; rounded down to whole pages, at least one page
  uint32_t max_readahead = 1 << 20;    ///< bytes; never more than the kernel offers
  uint16_t max_background = 64;        ///< background requests (readahead, ...) in flight at most
  uint16_t congestion_threshold = 48;  ///< background requests past which the kernel holds back
  uint32_t time_gran = 1;              ///< nanoseconds; a power of ten from 1 to 1e9
  uint32_t max_stack_depth = 1;        ///< with kPassthrough only
  uint16_t request_timeout = 0;        ///< seconds; with kRequestTimeout only
  uint32_t page_size = 4096;           ///< the machine's page size (a parameter: this code is pure)
};

/// What both sides agreed on; the rest of the library reads only this.
struct Negotiated {
  uint32_t kernel_minor = 0;          ///< what the kernel speaks
  uint32_t minor = 0;                 ///< min(kernel, ours): the protocol both use
  uint64_t kernel_flags = 0;          ///< everything the kernel offered
  uint64_t flags = 0;                 ///< offered and wished
  uint32_t max_write = 0;             ///< bytes
  uint32_t max_pages = 0;             ///< pages per request; the kernel's default without kMaxPages
  uint32_t max_readahead = 0;         ///< bytes
  uint16_t max_background = 0;        ///< as InitWishes::max_background
  uint16_t congestion_threshold = 0;  ///< as InitWishes::congestion_threshold
  uint32_t time_gran = 0;             ///< nanoseconds
  uint32_t max_stack_depth = 0;       ///< 0 without kPassthrough
  uint16_t request_timeout = 0;       ///< seconds; 0 without kRequestTimeout
  bool io_uring = false;              ///< FUSE-over-io_uring agreed

  /// Whether every bit of `flag` was agreed.
  bool Has(uint64_t flag) const { return (flags & flag) == flag; }
  /// The largest request payload the kernel may send, and the largest reply it accepts.
  uint32_t MaxPayload(uint32_t page_size) const;
};

/// "ASYNC_READ|BIG_WRITES|..." for logs and the debug printer.
std::string InitFlagNames(uint64_t flags);

}  // namespace ringfuse

RINGFUSE_PUBLIC_END
