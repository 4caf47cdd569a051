#include "tools/stress_kernel.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "ringfuse/wire.h"

namespace ringfuse::tools {
namespace {

// Uniques as a caller's own range: caller N sends N << 32, N << 32 + 2, ... (the kernel's step).
constexpr int kCallerShift = 32;
constexpr uint64_t kUniqueStep = 2;
// The largest reply the benchmark asks for (a READ of StressTree::kLargestFile) and then some.
constexpr size_t kReplyCapacity = 8192;

std::string Describe(Opcode opcode, uint64_t nodeid, uint64_t unique, absl::string_view name) {
  return absl::StrCat(std::string(OpcodeName(static_cast<uint32_t>(opcode))),
                      name.empty() ? "" : " ", name, " (node ", nodeid, ", unique ", unique, ")");
}

// What a 7.45 kernel (Linux 6.18) offers that a passthrough daemon may take.
wire::InitIn KernelOffer() {
  namespace flag = wire::init_flag;
  const uint64_t flags = flag::kAsyncRead | flag::kPosixLocks | flag::kAtomicOTrunc |
                         flag::kExportSupport | flag::kBigWrites | flag::kDoReaddirplus |
                         flag::kReaddirplusAuto | flag::kAsyncDio | flag::kParallelDirops |
                         flag::kMaxPages | flag::kSetxattrExt | flag::kInitExt;
  wire::InitIn offer{};
  offer.major = 7;
  offer.minor = 45;
  offer.max_readahead = 1 << 17;
  offer.flags = static_cast<uint32_t>(flags);
  offer.flags2 = static_cast<uint32_t>(flags >> 32);
  return offer;
}

}  // namespace

ReplyRecorder::ReplyRecorder() { body_.reserve(kReplyCapacity); }

void ReplyRecorder::SendReply(const ReplyTarget& target, int32_t error,
                              std::span<const ConstBytes> body) {
  ++replies_;
  unique_ = target.unique;
  error_ = error;
  body_.clear();
  for (ConstBytes part : body) body_.insert(body_.end(), part.begin(), part.end());
}

StressCaller::StressCaller(MessageServer& server, size_t worker, uint64_t first_unique)
    : server_(server), worker_(worker), next_unique_(first_unique) {
  message_.reserve(sizeof(wire::InHeader) + 256);
}

absl::StatusOr<uint64_t> StressCaller::Send(Opcode opcode, uint64_t nodeid, ConstBytes args,
                                            absl::string_view name) {
  wire::InHeader header{};
  header.len =
      static_cast<uint32_t>(sizeof(header) + args.size() + (name.empty() ? 0 : name.size() + 1));
  header.opcode = static_cast<uint32_t>(opcode);
  header.unique = next_unique_;
  header.nodeid = nodeid;
  header.pid = 1;  // uid and gid 0: root, as the kernel says of a root caller
  next_unique_ += kUniqueStep;
  message_.resize(header.len);
  std::memcpy(message_.data(), &header, sizeof(header));
  if (!args.empty()) std::memcpy(message_.data() + sizeof(header), args.data(), args.size());
  if (!name.empty()) {
    std::memcpy(message_.data() + sizeof(header) + args.size(), name.data(), name.size());
    message_.back() = std::byte{0};
  }
  replies_.Clear();
  if (absl::Status served = server_.Serve(worker_, message_, replies_); !served.ok()) {
    return served;
  }
  handled_.store(handled_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  return header.unique;
}

absl::StatusOr<ConstBytes> StressCaller::Call(Opcode opcode, uint64_t nodeid, ConstBytes args,
                                              absl::string_view name) {
  const absl::StatusOr<uint64_t> sent = Send(opcode, nodeid, args, name);
  if (!sent.ok()) return sent.status();
  const uint64_t unique = *sent;
  if (replies_.replies() == 1 && replies_.unique() == unique && replies_.error() == 0) {
    return replies_.body();
  }
  // Described only here: the request path makes no string.
  const std::string what = Describe(opcode, nodeid, unique, name);
  if (replies_.replies() != 1) {
    return absl::InternalError(absl::StrCat(what, ": ", replies_.replies(), " replies, not 1"));
  }
  if (replies_.unique() != unique) {
    return absl::InternalError(absl::StrCat(what, ": answered as unique ", replies_.unique()));
  }
  return absl::InternalError(absl::StrCat(what, ": answered error ", replies_.error(), " (",
                                          std::strerror(-replies_.error()), ")"));
}

absl::Status StressCaller::Tell(Opcode opcode, uint64_t nodeid, ConstBytes args) {
  const absl::StatusOr<uint64_t> sent = Send(opcode, nodeid, args, {});
  if (!sent.ok()) return sent.status();
  const uint64_t unique = *sent;
  if (replies_.replies() == 0) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat(Describe(opcode, nodeid, unique, {}), ": answered, though it takes no reply"));
}

StressKernel::StressKernel(Handler& handler, size_t callers) : server_(handler, callers) {}

absl::Status StressKernel::Init() {
  const wire::InitIn offer = KernelOffer();
  absl::StatusOr<ConstBytes> answer =
      MakeCaller(0)->Call(Opcode::kInit, 0, std::as_bytes(std::span(&offer, 1)));
  if (!answer.ok()) return answer.status();
  if (!server_.running()) {
    return absl::InternalError("the server does not serve after its answer to INIT");
  }
  return absl::OkStatus();
}

std::unique_ptr<StressCaller> StressKernel::MakeCaller(size_t index) {
  ++callers_made_;
  return std::make_unique<StressCaller>(server_, index, callers_made_ << kCallerShift);
}

}  // namespace ringfuse::tools
