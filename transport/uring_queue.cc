#include "transport/uring_queue.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <new>

#include "absl/strings/str_format.h"
#include "base/errno_status.h"
#include "protocol/reply_parts.h"
#include "ringfuse/log.h"
#include "ringfuse/notify.h"
#include "ringfuse/protocol/frames.h"
#include "transport/cpus.h"
#include "transport/unique_ranges.h"

namespace ringfuse::internal {
namespace {
constexpr int kRingFileIndex = 0;

// How long a stalled queue (see UringQueue::Stalled) waits for a commit before it makes one.
constexpr long kStallNanoseconds = 1'000'000;

}  // namespace

UringQueue::UringQueue(const Shared& shared, size_t index, int cpu, int session_fd, size_t depth,
                       size_t payload_size, Adopted adopted)
    : RingWorker(shared, index),
      cpu_(cpu),
      session_fd_(session_fd),
      depth_(depth),
      payload_size_(payload_size),
      file_(std::move(adopted.file)),
      blocks_(std::move(adopted.blocks)),
      reserve_(depth),
      limit_(std::max(depth, kMaxEntriesPerQueue)),
      adopted_(std::move(adopted.entries)) {}

absl::Status UringQueue::Setup() {
  // An offline CPU cannot be pinned to; its queue still has to exist, unpinned.
  if (absl::Status pinned = PinCurrentThread(cpu_); !pinned.ok()) {
    Log(LogLevel::kDebug, "queue %u: %s", index(), pinned.ToString());
  }
  const unsigned sqes = static_cast<unsigned>(depth_ + 2);
  // Every entry may have a command in flight, and all may complete at once (at unmount): the
  // completion queue holds them all, so that none waits in the kernel's overflow list.
  const unsigned completions = static_cast<unsigned>(limit_ + 2);
  if (absl::Status status = InitRing(sqes, IORING_SETUP_SQE128, completions); !status.ok()) {
    return status;
  }
  // A registered file spares every command a reference on the shared struct file, a cache line
  // that every CPU's queue would otherwise bounce.
  if (const int result = io_uring_register_files(ring().raw(), &session_fd_, 1); result < 0) {
    return base::ErrnoStatus(-result, "registering /dev/fuse with the ring");
  }
  // A queue taken over serves with the entries handed to it; only one that got none (its CPU
  // was offline, its entries free) registers entries of its own.
  if (!adopted_.empty()) Adopt(std::exchange(adopted_, {}));
  if (!entries_.empty()) {
    ArmWaker();
    return absl::OkStatus();
  }
  if (absl::Status added = AddEntries(depth_); !added.ok()) return added;
  return SubmitRegistration();
}

// New entries and their REGISTER, submitted with the ring's next io_uring_enter. Their buffers
// are reserved, not touched: an entry costs resident memory only for what requests write there.
absl::Status UringQueue::AddEntries(size_t count) {
  const size_t first = entries_.size();
  if (absl::Status made = MakeEntries(count); !made.ok()) return made;
  for (size_t entry = first; entry < entries_.size(); ++entry) {
    Register(static_cast<uint32_t>(entry));
  }
  return absl::OkStatus();
}

// All or nothing, and nothing registered yet: out of memory here is the queue's limit for now
// (said once by KeepReserve), not the end of the daemon.
absl::Status UringQueue::MakeEntries(size_t count) {
  if (file_ == nullptr) {
    absl::StatusOr<std::shared_ptr<EntryFile>> file = EntryFile::Create();
    if (!file.ok()) return file.status();
    file_ = std::move(*file);
  }
  absl::StatusOr<EntryBlock> block =
      EntryBlock::Create(file_, count, EntryBlock::StrideFor(payload_size_));
  if (!block.ok()) return block.status();
  const size_t first_entry = entries_.size();
  try {
    blocks_.reserve(blocks_.size() + 1);
    for (size_t slot = 0; slot < count; ++slot) {
      Entry& entry = entries_.emplace_back();
      entry.header = block->header(slot);
      entry.payload = block->payload(slot);
      entry.iov[0] = {entry.header, sizeof(wire::UringReqHeader)};
      entry.iov[1] = {entry.payload, payload_size_};
      entry.block = static_cast<uint32_t>(blocks_.size());
      entry.slot = static_cast<uint32_t>(slot);
    }
  } catch (const std::bad_alloc&) {
    entries_.erase(entries_.begin() + static_cast<ptrdiff_t>(first_entry), entries_.end());
    return absl::ResourceExhaustedError("out of memory for ring entries");
  }
  blocks_.push_back(std::move(*block));  // no allocation: reserved above
  return absl::OkStatus();
}

absl::Status UringQueue::SubmitRegistration() {
  ArmWaker();
  if (const int result = Submit(0); result < 0) {
    return base::ErrnoStatus(-result, absl::StrFormat("queue %u: submitting REGISTER", index()));
  }
  // A REGISTER the kernel refuses completes at once, and the kernel then quietly serves the
  // whole connection over /dev/fuse: fail loudly instead. Success completes only with a
  // request, which stays in the ring for Run().
  int refused = 0;
  ring().PeekCompletions([&](const io_uring_cqe& cqe) {
    if (DecodeUserData(cqe.user_data).kind == Completion::kCommand && cqe.res < 0) {
      refused = cqe.res;
    }
  });
  if (refused == 0) return absl::OkStatus();
  return base::ErrnoStatus(
      -refused,
      absl::StrFormat("queue %u: the kernel refused FUSE_IO_URING_CMD_REGISTER", index()));
}

// Submits what is queued and waits for `wait` completions: every free entry is the kernel's.
int UringQueue::Submit(unsigned wait) {
  kernel_free_ = free_;
  return ring().SubmitAndWait(wait);
}

// Submit(1), but -ETIME once kStallNanoseconds pass with nothing to do.
int UringQueue::SubmitAndWaitForACommit() {
  kernel_free_ = free_;
  return ring().SubmitAndWaitFor(kStallNanoseconds);
}

// The kernel gives a queue's requests only to its free entries, and a request that finds none
// waits until a COMMIT_AND_FETCH on the queue takes it (REGISTER does not look for waiting
// requests). An entry whose request is answered late (a parked lock wait) is not free until its
// reply is committed, so enough of them would leave every later request of the CPU waiting,
// the one that would end the waits included. Hence new entries, as long as the queue may grow.
void UringQueue::AfterCompletions() {
  ApplyRequestedMode();
  KeepReserve();
}

void UringQueue::KeepReserve() {
  if (free_ >= reserve_) {
    at_limit_ = false;
    return;
  }
  if (at_limit_ || done() || connection_over_ || stopping() || mode_ != Mode::kServing) return;
  const size_t count = std::min(reserve_ - free_, limit_ - entries_.size());
  absl::Status added =
      count == 0 ? absl::ResourceExhaustedError("the queue may have no more") : AddEntries(count);
  if (added.ok()) return;
  // Said once, and not tried again until the reserve is back.
  at_limit_ = true;
  Log(LogLevel::kWarning,
      "queue %u: %u of its %u entries hold requests not answered yet, and no entry can be "
      "added (%s): requests from CPU %d may wait until those are answered",
      index(), entries_.size() - free_, entries_.size(), added.ToString(), cpu_);
}

// Requests that found no free entry wait in the kernel, and only a commit on this queue hands
// them out, one per COMMIT_AND_FETCH; REGISTER does not. A queue whose every held request is
// parked (answered late) commits nothing until a wait ends, which may need a request waiting
// there (the unlock), whatever entries it adds: stalled, once requests came since its last pump.
bool UringQueue::Stalled() const {
  const size_t held = entries_.size() - free_ - finished_;
  return new_requests_ && held > 0 && free_ > 0 && !connection_over_ && !stopping() &&
         mode_ == Mode::kServing;
}

// No commit came within kStallNanoseconds: the queue makes a request of its own, answered at
// once. The kernel gives it a free entry, and its commit hands out the oldest waiting request,
// if any; if that one parks too, the queue is stalled again, and so on until the kernel has
// none left.
void UringQueue::OnStall() {
  new_requests_ = false;
  const int error = Pump();
  if (error == 0 || pump_warned_) return;
  pump_warned_ = true;
  Log(LogLevel::kWarning,
      "queue %u: no RETRIEVE the kernel accepts (%s): requests from CPU %d that wait in the "
      "kernel wait until a request of that CPU is answered",
      index(), std::strerror(error), cpu_);
}

// The queue's own request: a RETRIEVE of no bytes, written from this queue's CPU, which the
// kernel answers with a NOTIFY_REPLY on this CPU's queue. It names the node of a parked
// request, which the kernel keeps cached while its caller waits; the kernel retrieves only from
// regular files (EINVAL for others), so a few parked requests are tried. 0, or the last errno.
int UringQueue::Pump() {
  constexpr int kTries = 4;
  int error = ENOENT;  // nothing parked to name
  int tries = 0;
  for (size_t i = 0; i < entries_.size() && tries < kTries; ++i) {
    const size_t at = (pump_from_ + i) % entries_.size();
    if (entries_[at].state != EntryState::kInHandler) continue;
    ++tries;
    const uint64_t counter = (++pumps_ << 1) & ((uint64_t{1} << kPumpQueueShift) - 1);
    const uint64_t unique = kPumpUniques | (uint64_t{index()} << kPumpQueueShift) | counter;
    const Notification retrieve = Notification::Retrieve(unique, entries_[at].nodeid, 0, 0);
    std::array<std::byte, sizeof(wire::OutHeader) + sizeof(wire::NotifyRetrieveOut)> bytes;
    const size_t size = retrieve.CopyTo(bytes);
    if (::write(session_fd_, bytes.data(), size) == static_cast<ssize_t>(size)) {
      pump_from_ = at;  // a node the kernel took: the first to try next time
      return 0;
    }
    error = errno;
  }
  return error;
}

io_uring_sqe* UringQueue::CommandSqe(uint32_t entry, wire::UringCmd command) {
  io_uring_sqe* sqe = ring().NextSqe();
  if (sqe == nullptr) {
    GiveUp(entry, command);
    return nullptr;
  }
  sqe->opcode = IORING_OP_URING_CMD;
  sqe->fd = kRingFileIndex;  // the /dev/fuse fd, registered with the ring
  sqe->flags |= IOSQE_FIXED_FILE;
  sqe->cmd_op = static_cast<uint32_t>(command);
  io_uring_sqe_set_data64(sqe, EncodeUserData(Completion::kCommand, entry));
  wire::UringCmdReq request{};
  request.qid = static_cast<uint16_t>(index());
  if (command == wire::UringCmd::kCommitAndFetch) request.commit_id = entries_[entry].commit_id;
  std::memcpy(sqe->cmd, &request, sizeof(request));
  return sqe;
}

// The SQ was full and submitting it failed: the command cannot be sent, so its entry ends here.
// A request whose commit is lost stays unanswered until the connection ends.
void UringQueue::GiveUp(uint32_t entry, wire::UringCmd command) {
  Log(LogLevel::kError, "queue %u entry %u: no room in the ring for its %s, entry given up",
      index(), entry, command == wire::UringCmd::kRegister ? "REGISTER" : "COMMIT_AND_FETCH");
  Finish(entry);
}

void UringQueue::Register(uint32_t entry) {
  entries_[entry].state = EntryState::kAwaitingRequest;
  ++free_;
  io_uring_sqe* sqe = CommandSqe(entry, wire::UringCmd::kRegister);
  if (sqe == nullptr) return;
  sqe->addr = reinterpret_cast<uint64_t>(entries_[entry].iov);
  sqe->len = 2;
}

// Serving, the reply goes to the kernel with the ring's next submission. Frozen, it waits in
// its entry for whoever commits it, this process or the next; handed off, the entry is no longer
// this process's to write, and the reply waits aside in case the handover fails.
void UringQueue::Commit(uint32_t entry, uint64_t unique, int32_t error,
                        std::span<const ConstBytes> body) {
  if (mode_ == Mode::kHandedOff) {
    const std::span<const ConstBytes> parts = ReplyParts(error, body);
    LateReply& late = held_back_.emplace_back(
        LateReply{entry, unique, error, std::vector<std::byte>(PartsSize(parts))});
    JoinParts(parts, late.body);
    return;
  }
  WriteReply(entry, unique, error, body);
  if (mode_ == Mode::kFrozen) {
    entries_[entry].state = EntryState::kReplyWritten;
    return;
  }
  SubmitCommit(entry);
}

void UringQueue::WriteReply(uint32_t entry, uint64_t unique, int32_t error,
                            std::span<const ConstBytes> body) {
  Entry& e = entries_[entry];
  size_t size = PartsSize(ReplyParts(error, body));
  if (size > payload_size_) {
    Log(LogLevel::kError, "reply to unique %u has %u bytes, more than the %u-byte payload", unique,
        size, payload_size_);
    error = -EIO;
    size = 0;
  }
  JoinParts(ReplyParts(error, body), MutableBytes(e.payload, size));
  const wire::OutHeader out{static_cast<uint32_t>(sizeof(wire::OutHeader) + size), error, unique};
  std::memcpy(e.header->in_out, &out, sizeof(out));
  e.header->ring_ent_in_out.payload_sz = static_cast<uint32_t>(size);
}

// The reply written in the entry goes with COMMIT_AND_FETCH, and the entry waits for the next.
void UringQueue::SubmitCommit(uint32_t entry) {
  if (CommandSqe(entry, wire::UringCmd::kCommitAndFetch) == nullptr) return;
  entries_[entry].state = EntryState::kAwaitingRequest;
  ++free_;
}

bool UringQueue::OnCompletion(UserData data, int result) {
  if (data.kind != Completion::kCommand) return false;
  OnCommand(data.slot, result);
  return true;
}

void UringQueue::OnCommand(uint32_t entry, int result) {
  if (result == 0) {
    OnRequest(entry);
    return;
  }
  // At unmount or abort every free entry completes so, each lowering free_: entries added then to
  // restore the reserve would only fail at once, round after round up to the queue's limit.
  switch (-result) {
    case ENOTCONN:      // unmounted
    case ECONNABORTED:  // aborted
    case ECANCELED:     // the ring is going away
      connection_over_ = true;
      Finish(entry);
      return;
    case ENOENT:  // after a handover that failed: the other process committed it first
      Log(LogLevel::kDebug, "queue %u entry %u: its commit was another process's to make", index(),
          entry);
      Retire(entry);
      return;
    default: break;
  }
  Log(LogLevel::kError, "queue %u entry %u: FUSE-over-io_uring command failed: %s", index(), entry,
      std::strerror(-result));
  Finish(entry);
}

void UringQueue::OnRequest(uint32_t entry) {
  --free_;
  // The kernel gave out the last free entry it had: a request that came after it waits in the
  // kernel for a commit on this queue. Keep a larger reserve from now on.
  if (kernel_free_ > 0 && --kernel_free_ == 0) {
    reserve_ = std::min(reserve_ * 2, std::max(depth_, kMaxReserve));
  }
  Entry& e = entries_[entry];
  e.commit_id = e.header->ring_ent_in_out.commit_id;
  if (mode_ != Mode::kServing) {
    // Frozen: the request waits in its entry, for this process if it resumes, or the next.
    e.state = EntryState::kHeld;
    PublishUnfilled();
    return;
  }
  Serve(entry);
}

// Hands the request in `entry` to its handler; the queue's own NOTIFY_REPLY only to the kernel.
void UringQueue::Serve(uint32_t entry) {
  Entry& e = entries_[entry];
  e.state = EntryState::kInHandler;
  const size_t payload_size = std::min<size_t>(e.header->ring_ent_in_out.payload_sz, payload_size_);
  const ConstBytes in_out(reinterpret_cast<const std::byte*>(e.header->in_out),
                          sizeof(wire::InHeader));
  wire::InHeader header;
  std::memcpy(&header, in_out.data(), sizeof(header));
  if (header.opcode == static_cast<uint32_t>(Opcode::kNotifyReply) && IsPumpUnique(header.unique)) {
    Commit(entry, header.unique, 0, {});  // the queue's own: its commit is all it is for
    return;
  }
  new_requests_ = true;
  e.nodeid = header.nodeid;

  const ConstBytes op_in(reinterpret_cast<const std::byte*>(e.header->op_in),
                         wire::kUringOpInOutSize);
  const ConstBytes payload(e.payload, payload_size);
  // A queue's thread runs one handler at a time: one inflight slot per queue.
  Handle(entry, index(), header.unique, [&](const Delivery& delivery) {
    dispatcher().DispatchRing(in_out, op_in, payload, delivery);
  });
  if (staged_.present) {
    staged_.present = false;
    const ConstBytes body[] = {ConstBytes(staged_.body.data(), staged_.size)};
    Commit(entry, staged_.unique, staged_.error, body);
  }

  // An operation without a reply (NOTIFY_REPLY) still has to hand its entry back to the kernel.
  const std::optional<OpcodeInfo> info = LookupOpcode(header.opcode);
  if (e.state == EntryState::kInHandler && info && !info->replies) {
    Commit(entry, header.unique, 0, {});
  }
}

void UringQueue::SendReply(const ReplyTarget& target, int32_t error,
                           std::span<const ConstBytes> body) {
  if (InHandlerOf(target.slot) && !staged_.present) {
    Stage(target.unique, error, body);
    return;
  }
  // Answered later, from another thread: the queue thread owns the ring, so hand it over.
  const std::span<const ConstBytes> parts = ReplyParts(error, body);
  LateReply late{static_cast<uint32_t>(target.slot), target.unique, error,
                 std::vector<std::byte>(PartsSize(parts))};
  JoinParts(parts, late.body);
  bool first = false;
  {
    std::lock_guard lock(inbox_mutex_);
    first = inbox_.empty();
    inbox_.push_back(std::move(late));
  }
  if (first) Wake();  // later ones find the queue thread already on its way
}

void UringQueue::Stage(uint64_t unique, int32_t error, std::span<const ConstBytes> body) {
  const std::span<const ConstBytes> parts = ReplyParts(error, body);
  const size_t size = PartsSize(parts);
  if (staged_.body.size() < size) staged_.body.resize(size);
  JoinParts(parts, staged_.body);
  staged_.present = true;
  staged_.unique = unique;
  staged_.error = error;
  staged_.size = size;
}

void UringQueue::CommitLateReplies() {
  std::vector<LateReply> replies;
  {
    std::lock_guard lock(inbox_mutex_);
    replies.swap(inbox_);
  }
  for (const LateReply& late : replies) {
    if (entries_[late.entry].state != EntryState::kInHandler) continue;  // the ring ended first
    const ConstBytes body[] = {late.body};
    Commit(late.entry, late.unique, late.error, body);
  }
}

void UringQueue::Finish(uint32_t entry) {
  const EntryState was = entries_[entry].state;
  if (was == EntryState::kFinished) return;
  if (was == EntryState::kAwaitingRequest) --free_;
  entries_[entry].state = EntryState::kFinished;
  if (mode_ == Mode::kFrozen) PublishUnfilled();
  if (++finished_ == entries_.size()) MarkDone();
}

}  // namespace ringfuse::internal
