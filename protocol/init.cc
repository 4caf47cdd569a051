#include "ringfuse/init.h"

#include <algorithm>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ringfuse/protocol/negotiate.h"

namespace ringfuse {
namespace {

namespace f = wire::init_flag;

// The kernel's default when FUSE_MAX_PAGES is not agreed (FUSE_DEFAULT_MAX_PAGES_PER_REQ).
constexpr uint32_t kDefaultMaxPages = 32;
// The deepest stacking the kernel accepts for passthrough (FILESYSTEM_MAX_STACK_DEPTH).
constexpr uint32_t kMaxStackDepth = 2;

constexpr std::string_view kFlagNames[] = {
    "ASYNC_READ",
    "POSIX_LOCKS",
    "FILE_OPS",
    "ATOMIC_O_TRUNC",
    "EXPORT_SUPPORT",
    "BIG_WRITES",
    "DONT_MASK",
    "SPLICE_WRITE",
    "SPLICE_MOVE",
    "SPLICE_READ",
    "FLOCK_LOCKS",
    "HAS_IOCTL_DIR",
    "AUTO_INVAL_DATA",
    "DO_READDIRPLUS",
    "READDIRPLUS_AUTO",
    "ASYNC_DIO",
    "WRITEBACK_CACHE",
    "NO_OPEN_SUPPORT",
    "PARALLEL_DIROPS",
    "HANDLE_KILLPRIV",
    "POSIX_ACL",
    "ABORT_ERROR",
    "MAX_PAGES",
    "CACHE_SYMLINKS",
    "NO_OPENDIR_SUPPORT",
    "EXPLICIT_INVAL_DATA",
    "MAP_ALIGNMENT",
    "SUBMOUNTS",
    "HANDLE_KILLPRIV_V2",
    "SETXATTR_EXT",
    "INIT_EXT",
    "INIT_RESERVED",
    "SECURITY_CTX",
    "HAS_INODE_DAX",
    "CREATE_SUPP_GROUP",
    "HAS_EXPIRE_ONLY",
    "DIRECT_IO_ALLOW_MMAP",
    "PASSTHROUGH",
    "NO_EXPORT_SUPPORT",
    "HAS_RESEND",
    "ALLOW_IDMAP",
    "OVER_IO_URING",
    "REQUEST_TIMEOUT",
};

bool IsPowerOfTenUpToOneSecond(uint32_t value) {
  for (uint32_t p = 1; p <= 1'000'000'000u; p *= 10) {
    if (value == p) return true;
    if (p == 1'000'000'000u) break;
  }
  return false;
}

absl::Status CheckWishes(const InitWishes& wishes) {
  if (wishes.page_size == 0 || (wishes.page_size & (wishes.page_size - 1)) != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("page size %u is not a power of two", wishes.page_size));
  }
  if (wishes.max_write < wishes.page_size) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "max_write %u is smaller than one page (%u bytes)", wishes.max_write, wishes.page_size));
  }
  if (!IsPowerOfTenUpToOneSecond(wishes.time_gran)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "time_gran %u ns must be a power of ten between 1 and 1000000000", wishes.time_gran));
  }
  if (wishes.max_stack_depth > kMaxStackDepth) {
    return absl::InvalidArgumentError(
        absl::StrFormat("max_stack_depth %u exceeds the kernel's limit of %u",
                        wishes.max_stack_depth, kMaxStackDepth));
  }
  return absl::OkStatus();
}

uint64_t OfferedFlags(const wire::InitIn& kernel) {
  uint64_t flags = kernel.flags;
  if (flags & f::kInitExt) flags |= uint64_t{kernel.flags2} << 32;
  return flags;
}

}  // namespace

uint32_t Negotiated::MaxPayload(uint32_t page_size) const {
  return std::max({uint32_t{wire::kMinReadBuffer}, max_write, max_pages * page_size});
}

size_t InitOutSize(uint32_t kernel_minor) {
  if (kernel_minor < 5) return 8;    // FUSE_COMPAT_INIT_OUT_SIZE
  if (kernel_minor < 23) return 24;  // FUSE_COMPAT_22_INIT_OUT_SIZE
  return sizeof(wire::InitOut);
}

std::string InitFlagNames(uint64_t flags) {
  std::string names;
  for (size_t bit = 0; bit < 64; ++bit) {
    if (!(flags & (uint64_t{1} << bit))) continue;
    if (!names.empty()) names += '|';
    if (bit < std::size(kFlagNames)) {
      names += kFlagNames[bit];
    } else {
      absl::StrAppend(&names, "BIT", bit);
    }
  }
  return names.empty() ? "0" : names;
}

absl::StatusOr<InitResult> Negotiate(const wire::InitIn& kernel, const InitWishes& wishes) {
  if (kernel.major != wire::kKernelMajor) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "the kernel speaks FUSE protocol %u.%u; ringfuse speaks only major version %u",
        kernel.major, kernel.minor, wire::kKernelMajor));
  }
  if (kernel.minor < wire::kOldestSupportedMinor) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "the kernel speaks FUSE protocol 7.%u; ringfuse needs 7.%u or newer (Linux 5.10+)",
        kernel.minor, wire::kOldestSupportedMinor));
  }
  if (absl::Status status = CheckWishes(wishes); !status.ok()) return status;

  const uint64_t offered = OfferedFlags(kernel);
  if (const uint64_t missing = wishes.required_flags & ~offered; missing != 0) {
    return absl::FailedPreconditionError(
        absl::StrFormat("the kernel (FUSE 7.%u) does not offer %s, which this server requires",
                        kernel.minor, InitFlagNames(missing)));
  }

  Negotiated agreed;
  agreed.kernel_minor = kernel.minor;
  agreed.minor = std::min(kernel.minor, wire::kKernelMinor);
  agreed.kernel_flags = offered;
  agreed.flags = (wishes.flags | wishes.required_flags) & offered;
  // INIT_EXT is what makes flags2 count; always answer it when the kernel offers it.
  if (offered & f::kInitExt) agreed.flags |= f::kInitExt;
  agreed.max_write = wishes.max_write / wishes.page_size * wishes.page_size;
  agreed.max_pages = agreed.Has(f::kMaxPages)
                         ? std::min<uint32_t>(agreed.max_write / wishes.page_size, 0xffff)
                         : kDefaultMaxPages;
  agreed.max_readahead = std::min(kernel.max_readahead, wishes.max_readahead);
  agreed.max_background = wishes.max_background;
  agreed.congestion_threshold = wishes.congestion_threshold;
  agreed.time_gran = wishes.time_gran;
  agreed.max_stack_depth = agreed.Has(f::kPassthrough) ? wishes.max_stack_depth : 0;
  agreed.request_timeout = agreed.Has(f::kRequestTimeout) ? wishes.request_timeout : 0;
  agreed.io_uring = agreed.Has(f::kOverIoUring);

  wire::InitOut reply{};
  reply.major = wire::kKernelMajor;
  reply.minor = wire::kKernelMinor;
  reply.max_readahead = agreed.max_readahead;
  reply.flags = static_cast<uint32_t>(agreed.flags);
  reply.flags2 = static_cast<uint32_t>(agreed.flags >> 32);
  reply.max_background = agreed.max_background;
  reply.congestion_threshold = agreed.congestion_threshold;
  reply.max_write = agreed.max_write;
  reply.time_gran = agreed.time_gran;
  reply.max_pages = agreed.Has(f::kMaxPages) ? static_cast<uint16_t>(agreed.max_pages) : 0;
  reply.max_stack_depth = agreed.max_stack_depth;
  reply.request_timeout = agreed.request_timeout;
  return InitResult{reply, agreed};
}

}  // namespace ringfuse
