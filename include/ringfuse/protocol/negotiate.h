/// \file
/// INIT negotiation: the kernel's offer and the server's InitWishes -> the fuse_init_out to send
/// and the Negotiated record. A Session does this itself; this is for custom transports and
/// protocol tests.
#pragma once

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "ringfuse/export.h"
#include "ringfuse/init.h"
#include "ringfuse/wire.h"

RINGFUSE_PUBLIC_BEGIN

namespace ringfuse {

/// What Negotiate answers: the reply for the kernel and the record of the agreement.
struct InitResult {
  wire::InitOut reply;  ///< fuse_init_out; send its first InitOutSize() bytes
  Negotiated agreed;    ///< what both sides agreed on
};

/// Fails for a major version other than 7, a kernel older than 7.31, a required flag the kernel
/// does not offer, or wishes out of range; every message names the value and what to do.
absl::StatusOr<InitResult> Negotiate(const wire::InitIn& kernel, const InitWishes& wishes);

/// Bytes of fuse_init_out to send back for a kernel speaking `kernel_minor`.
size_t InitOutSize(uint32_t kernel_minor);

}  // namespace ringfuse

RINGFUSE_PUBLIC_END
