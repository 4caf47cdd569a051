#include "transport/uring_cmd_transport.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/strings/str_format.h"
#include "base/errno_status.h"
#include "ringfuse/log.h"
#include "ringfuse/protocol/frames.h"
#include "transport/cpus.h"
#include "transport/dev_fuse_reader.h"
#include "transport/pause_signal.h"
#include "transport/retire_channel.h"

namespace ringfuse::internal {
namespace {

constexpr size_t kDefaultEntriesPerQueue = 8;

// How often a pause looks whether the queues have done what it asked: its every step adds to the
// time clients wait.
constexpr absl::Duration kPausePoll = absl::Microseconds(50);
// How long a resume waits for the queues: a queue whose thread is inside a handler resumes once
// it returns.
constexpr absl::Duration kResumeBound = absl::Seconds(5);

// A request of this process's own on `cpu`'s queue: an fstatfs of the mount, from a thread
// pinned there (the kernel queues a request on the caller's CPU). It returns once the entry it
// fills is answered, by this process if it resumes or by the next; the thread ends then.
absl::Status FillOneEntry(std::shared_ptr<const base::UniqueFd> root, int cpu) {
  try {
    std::thread([root = std::move(root), cpu] {
      if (!PinCurrentThread(cpu).ok()) return;
      struct statfs ignored;
      ::fstatfs(root->get(), &ignored);
    }).detach();
  } catch (const std::system_error& error) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("no thread to fill a ring entry of CPU %d with: %s", cpu, error.what()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Transport>> UringCmdTransport::Create(
    const TransportContext& context) {
  if (!context.negotiated.io_uring) {
    return absl::FailedPreconditionError(
        "the uring-cmd transport needs FUSE-over-io_uring, which INIT did not agree on: enable "
        "it with `echo Y > /sys/module/fuse/parameters/enable_uring` (Linux 6.14+)");
  }
  absl::StatusOr<std::vector<int>> cpus = PossibleCpus();
  if (!cpus.ok()) return cpus.status();
  // Queue ids run from 0 to the highest possible CPU, holes included.
  const size_t queue_count = static_cast<size_t>(cpus->back()) + 1;
  std::vector<UringQueue::Adopted> adopted;
  if (context.adopted != nullptr) {
    const size_t payload =
        context.negotiated.MaxPayload(static_cast<uint32_t>(::sysconf(_SC_PAGESIZE)));
    absl::StatusOr<std::vector<UringQueue::Adopted>> mapped =
        MapAdopted(*context.adopted, queue_count, EntryBlock::StrideFor(payload));
    if (!mapped.ok()) return mapped.status();
    adopted = std::move(*mapped);
  }
  return std::unique_ptr<Transport>(
      new UringCmdTransport(context, queue_count, std::move(adopted)));
}

// The old process's blocks, each at its address there.
absl::StatusOr<std::vector<UringQueue::Adopted>> UringCmdTransport::MapAdopted(
    RingsHandover& adopted, size_t queue_count, size_t payload_stride) {
  if (adopted.queues.size() != queue_count || adopted.payload_stride != payload_stride) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "the old process's rings do not fit this one: %u queues of %u-byte payloads handed "
        "over, %u of %u bytes here",
        adopted.queues.size(), adopted.payload_stride, queue_count, payload_stride));
  }
  std::vector<UringQueue::Adopted> plans(queue_count);
  for (size_t q = 0; q < queue_count; ++q) {
    absl::StatusOr<std::shared_ptr<EntryFile>> file = EntryFile::Adopt(std::move(adopted.fds[q]));
    if (!file.ok()) return file.status();
    plans[q].file = *file;
    for (const HandedBlock& block : adopted.queues[q].blocks) {
      absl::StatusOr<EntryBlock> mapped =
          EntryBlock::MapAt(*file, block.offset, block.address, block.count, payload_stride);
      if (!mapped.ok()) return mapped.status();
      plans[q].blocks.push_back(std::move(*mapped));
    }
    plans[q].entries = std::move(adopted.queues[q].entries);
  }
  return plans;
}

UringCmdTransport::UringCmdTransport(const TransportContext& context, size_t queue_count,
                                     std::vector<UringQueue::Adopted> adopted)
    : context_(context),
      queue_count_(queue_count),
      depth_(context.options.queue_depth > 0 ? static_cast<size_t>(context.options.queue_depth)
                                             : kDefaultEntriesPerQueue),
      payload_size_(context.negotiated.MaxPayload(static_cast<uint32_t>(::sysconf(_SC_PAGESIZE)))),
      adopted_(std::move(adopted)),
      inflight_(queue_count + 1),
      dev_channel_(std::make_unique<DevFuseReplyChannel>(context.session_fd)) {
  context_.adopted = nullptr;  // taken
}

// The /dev/fuse reader's channel goes once the reader has ended, with the queues.
UringCmdTransport::~UringCmdTransport() {
  Stop();
  queues_.Shutdown();
  RetireChannel(std::move(dev_channel_));
}

absl::Status UringCmdTransport::Start() {
  InstallPauseSignal();
  const RingWorker::Shared shared{"queue", context_.dispatcher, inflight_, queues_.stopping()};
  for (size_t q = 0; q < queue_count_; ++q) {
    UringQueue::Adopted plan = q < adopted_.size() ? std::move(adopted_[q]) : UringQueue::Adopted{};
    auto queue = std::make_unique<UringQueue>(shared, q, static_cast<int>(q), context_.session_fd,
                                              depth_, payload_size_, std::move(plan));
    queue_list_.push_back(queue.get());
    if (absl::Status added = queues_.Add(std::move(queue)); !added.ok()) return added;
  }
  adopted_.clear();
  return queues_.Start([this] { ReadDevFuse(); });
}

void UringCmdTransport::Stop() {
  queues_.Stop();
  reader_halt_.store(true, std::memory_order_relaxed);
  std::lock_guard lock(reader_mutex_);
  reader_changed_.notify_all();
}

void UringCmdTransport::ReadDevFuse() {
  UnblockPauseSignal();
  reader_thread_.store(pthread_self(), std::memory_order_release);
  const DevFuseReader reader{context_.session_fd,
                             DevFuseReadBufferSize(context_.negotiated),
                             context_.dispatcher,
                             *dev_channel_,
                             0,
                             inflight_,
                             DevFuseSlot()};
  // Halted: by Stop, or by a pause, which parks the reader until it resumes or stops.
  while (reader.Run(reader_halt_)) {
    std::unique_lock lock(reader_mutex_);
    if (queues_.stopping().load()) return;
    reader_parked_ = true;
    reader_changed_.notify_all();
    reader_changed_.wait(lock, [this] { return !reader_paused_ || queues_.stopping().load(); });
    reader_parked_ = false;
  }
  // The connection is over: the rings will only see ENOTCONN from here on.
  Stop();
}

// Signalled again and again: a signal that lands just before the reader enters read() wakes
// nothing.
absl::Status UringCmdTransport::PauseReader(absl::Time deadline) {
  std::unique_lock lock(reader_mutex_);
  reader_paused_ = true;
  reader_halt_.store(true, std::memory_order_relaxed);
  while (!reader_parked_) {
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError("the /dev/fuse reader did not pause in time");
    }
    lock.unlock();
    if (const pthread_t reader = reader_thread_.load(std::memory_order_acquire)) {
      ::pthread_kill(reader, PauseSignal());
    }
    lock.lock();
    reader_changed_.wait_for(lock, std::chrono::microseconds(500));
  }
  return absl::OkStatus();
}

void UringCmdTransport::ResumeReader() {
  std::lock_guard lock(reader_mutex_);
  if (!reader_paused_) return;
  reader_paused_ = false;
  if (!queues_.stopping().load()) reader_halt_.store(false, std::memory_order_relaxed);
  reader_changed_.notify_all();
}

template <typename Done>
absl::Status UringCmdTransport::AwaitQueues(absl::Time deadline, const char* what,
                                            Done&& done) const {
  for (UringQueue* queue : queue_list_) {
    while (!done(*queue)) {
      if (absl::Now() > deadline) {
        return absl::DeadlineExceededError(
            absl::StrFormat("uring-cmd queue %u did not %s in time", queue->queue_id(), what));
      }
      absl::SleepFor(kPausePoll);
    }
  }
  return absl::OkStatus();
}

absl::Status UringCmdTransport::Pause(absl::Duration bound) {
  const absl::Time deadline = absl::Now() + bound;
  absl::Status paused = PauseReader(deadline);
  if (paused.ok()) {
    for (UringQueue* queue : queue_list_) queue->RequestFreeze();
    paused = AwaitQueues(deadline, "freeze",
                         [](const UringQueue& q) { return q.mode() == UringQueue::Mode::kFrozen; });
  }
  if (paused.ok()) paused = FillQueues(deadline);
  if (paused.ok()) {
    for (UringQueue* queue : queue_list_) queue->RequestHandOff();
    paused = AwaitQueues(deadline, "hand off", [](const UringQueue& q) {
      return q.mode() == UringQueue::Mode::kHandedOff;
    });
  }
  if (!paused.ok()) ResumeInPlace();
  return paused;
}

// Every free entry of a frozen queue gets a request, so that none is free when this process's
// rings end: the kernel would cancel it, and a request it was being given then would be lost
// (uring_cmd_handover.h). A CPU that is offline gives its queue no request, so its free entries
// are left free; a CPU this process may not run on fails the pause.
absl::Status UringCmdTransport::FillQueues(absl::Time deadline) {
  absl::StatusOr<std::vector<int>> online = OnlineCpus();
  if (!online.ok()) return online.status();
  cpu_set_t allowed;
  if (::sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
    return base::ErrnoStatus(errno, "sched_getaffinity");
  }
  auto root = std::make_shared<const base::UniqueFd>(
      ::open(context_.mountpoint.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root->valid()) {
    return base::ErrnoStatus(
        errno, absl::StrFormat("opening %s to fill the rings' entries", context_.mountpoint));
  }
  std::vector<UringQueue*> filling;
  for (UringQueue* queue : queue_list_) {
    const int cpu = queue->cpu();
    if (std::find(online->begin(), online->end(), cpu) == online->end()) continue;
    if (!CPU_ISSET(cpu, &allowed)) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "a uring-cmd handover needs a thread on every online CPU, and this process may not "
          "run on CPU %d",
          cpu));
    }
    for (size_t i = queue->unfilled(); i > 0; --i) {
      if (absl::Status started = FillOneEntry(root, cpu); !started.ok()) return started;
    }
    filling.push_back(queue);
  }
  for (UringQueue* queue : filling) {
    while (queue->unfilled() > 0) {
      if (absl::Now() > deadline) {
        return absl::DeadlineExceededError(
            absl::StrFormat("uring-cmd queue %u still had %u free entries at the end of the pause",
                            queue->queue_id(), queue->unfilled()));
      }
      absl::SleepFor(kPausePoll);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<TransportHandover> UringCmdTransport::Handed() {
  RingsHandover rings;
  rings.payload_stride = EntryBlock::StrideFor(payload_size_);
  TransportHandover handover;
  for (UringQueue* queue : queue_list_) rings.queues.push_back(queue->Handed(handover.fds));
  handover.bytes = EncodeRingsHandover(rings);
  return handover;
}

// Returns once every queue serves again (a frozen queue's thread answers at once), so that a
// pause right after this one finds them serving.
bool UringCmdTransport::ResumeInPlace() {
  for (UringQueue* queue : queue_list_) queue->RequestResume();
  ResumeReader();
  const absl::Status resumed =
      AwaitQueues(absl::Now() + kResumeBound, "resume",
                  [](const UringQueue& q) { return q.mode() == UringQueue::Mode::kServing; });
  if (!resumed.ok()) Log(LogLevel::kError, "%s", resumed.ToString());
  return true;
}

std::string UringCmdTransport::Describe() const {
  const double entry_kib = (payload_size_ + sizeof(wire::UringReqHeader)) / 1024.0;
  return absl::StrFormat(
      "%u queues x %u entries x %.1f KiB (%.1f MiB reserved per queue, resident only as used; "
      "up to %u entries while requests are answered late)",
      queue_count_, depth_, entry_kib, depth_ * entry_kib / 1024.0,
      std::max(depth_, kMaxEntriesPerQueue));
}

}  // namespace ringfuse::internal
