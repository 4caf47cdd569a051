#include "transport/transport.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <new>

#include "absl/strings/str_format.h"
#include "ringfuse/wire.h"
#include "transport/threads_transport.h"
#include "transport/uring_cmd_transport.h"
#include "transport/uring_transport.h"

namespace ringfuse {

std::string_view TransportName(TransportKind kind) {
  switch (kind) {
    case TransportKind::kAuto: return "auto";
    case TransportKind::kThreads: return "threads";
    case TransportKind::kUring: return "uring";
    case TransportKind::kUringCmd: return "uring-cmd";
  }
  return "unknown";
}

absl::StatusOr<TransportKind> ParseTransportKind(std::string_view name) {
  for (TransportKind kind : {TransportKind::kAuto, TransportKind::kThreads, TransportKind::kUring,
                             TransportKind::kUringCmd}) {
    if (name == TransportName(kind)) return kind;
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("unknown transport \"%s\": choose auto, threads, uring or uring-cmd", name));
}

}  // namespace ringfuse

namespace ringfuse::internal {

size_t WorkerCount(const TransportOptions& options) {
  if (options.workers > 0) return static_cast<size_t>(options.workers);
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<size_t>(online) : 1;
}

size_t DevFuseReadBufferSize(const Negotiated& negotiated) {
  // The largest requests: WRITE (header, write_in, max_write bytes) and SETXATTR (a 64 KiB
  // value after a name of up to 255 bytes).
  constexpr size_t kLargestXattrRequest = kWriteHeaders + 65536 + 4096;
  return std::max(
      {wire::kMinReadBuffer, kWriteHeaders + negotiated.max_write, kLargestXattrRequest});
}

DevFuseReadBuffer::DevFuseReadBuffer(size_t size)
    : memory_(static_cast<std::byte*>(
          std::aligned_alloc(kPage, (kLead + size + kPage - 1) / kPage * kPage))),
      size_(size) {
  if (memory_ == nullptr) throw std::bad_alloc();
}

void DevFuseReadBuffer::Free::operator()(std::byte* memory) const { std::free(memory); }

absl::StatusOr<std::unique_ptr<Transport>> MakeTransport(TransportKind kind,
                                                         const TransportContext& context) {
  switch (kind) {
    case TransportKind::kThreads: return std::make_unique<ThreadsTransport>(context);
    case TransportKind::kUring: return std::make_unique<UringTransport>(context);
    case TransportKind::kUringCmd: return UringCmdTransport::Create(context);
    case TransportKind::kAuto: break;
  }
  return absl::InvalidArgumentError("MakeTransport needs a resolved kind, not auto");
}

}  // namespace ringfuse::internal
