// One queue of the uring-cmd transport (uring_cmd_transport.h): a CPU's ring, its entries, and
// the thread that owns both. Everything runs on that thread except SendReply from other threads,
// which hands the reply over through the inbox, and the handover controls, which ask through
// atomics and a wake-up.
//
// For a handover (uring_cmd_handover.h) a queue freezes: it commits nothing more, so every free
// entry stays the kernel's until a request fills it, and a reply made meanwhile is written into
// its entry for whoever commits it. It then hands off: it lists the entries that hold requests,
// for the new process, and touches their buffers no more. Until the handover is over it can
// resume instead, answering what it holds, as long as each entry still holds what it left there.
// A queue built from a handover adopts the listed entries: it commits the replies written there
// and handles the requests, from its own ring, and so makes those entries its own.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "protocol/dispatcher.h"
#include "ringfuse/protocol/frames.h"
#include "ringfuse/wire.h"
#include "transport/ring_entry_block.h"
#include "transport/ring_worker.h"
#include "transport/uring_cmd_handover.h"

namespace ringfuse::internal {

class UringQueue : public RingWorker {
 public:
  static constexpr size_t kMaxEntriesPerQueue = 1024;
  static constexpr size_t kMaxReserve = 64;

  // What a queue taking over from another process's starts with: its memfd, its blocks (mapped
  // at their addresses), and the entries of theirs that hold requests.
  struct Adopted {
    std::shared_ptr<EntryFile> file;
    std::vector<EntryBlock> blocks;
    std::vector<HandedEntry> entries;
  };

  UringQueue(const Shared& shared, size_t index, int cpu, int session_fd, size_t depth,
             size_t payload_size, Adopted adopted = {});
  // The ring goes first: its commands still point at the entries' buffers.
  ~UringQueue() override { ring().Exit(); }

  absl::Status Setup() override;
  void SendReply(const ReplyTarget& target, int32_t error,
                 std::span<const ConstBytes> body) override;

  int cpu() const { return cpu_; }
  size_t queue_id() const { return index(); }

  // The handover controls, from any thread; each takes effect on the queue's thread soon after.
  enum class Mode { kServing, kFrozen, kHandedOff };
  void RequestFreeze() { Request(Mode::kFrozen); }
  void RequestHandOff() { Request(Mode::kHandedOff); }
  void RequestResume() { Request(Mode::kServing); }
  Mode mode() const { return published_mode_.load(std::memory_order_acquire); }
  // While frozen: how many entries the kernel has still free, that is, wait for a request.
  size_t unfilled() const { return unfilled_.load(std::memory_order_acquire); }
  // Once handed off: the entries that hold requests, and the blocks they are in.
  HandedQueue Handed(std::vector<int>& fds) const;

 private:
  // kHeld and kReplyWritten only while frozen or handed off, and in an adopted queue's Setup.
  enum class EntryState { kAwaitingRequest, kInHandler, kHeld, kReplyWritten, kFinished };

  struct Entry {
    wire::UringReqHeader* header = nullptr;
    std::byte* payload = nullptr;
    iovec iov[2];
    uint32_t block = 0;  // where its buffers are: blocks_[block], at `slot`
    uint32_t slot = 0;
    uint64_t commit_id = 0;
    EntryState state = EntryState::kAwaitingRequest;
    uint64_t nodeid = 0;  // of its request
  };

  // A reply made while its handler runs waits here until the handler returns: the payload it
  // will be copied into still holds the request's arguments, which the handler may read until
  // then. The buffer only grows, so steady state allocates nothing.
  struct StagedReply {
    bool present = false;
    uint64_t unique = 0;
    int32_t error = 0;
    size_t size = 0;
    std::vector<std::byte> body;
  };

  // A reply made on another thread, waiting to be committed by the queue thread.
  struct LateReply {
    uint32_t entry;
    uint64_t unique;
    int32_t error;
    std::vector<std::byte> body;
  };

  absl::Status AddEntries(size_t count);
  absl::Status MakeEntries(size_t count);
  absl::Status SubmitRegistration();
  int Submit(unsigned wait);
  int SubmitAndWaitForACommit();
  int Wait() override { return Stalled() ? SubmitAndWaitForACommit() : Submit(1); }
  void OnWaitTimeout() override { OnStall(); }
  void AfterCompletions() override;
  void KeepReserve();
  bool Stalled() const;
  void OnStall();
  int Pump();
  io_uring_sqe* CommandSqe(uint32_t entry, wire::UringCmd command);
  void GiveUp(uint32_t entry, wire::UringCmd command);
  void Register(uint32_t entry);
  void Commit(uint32_t entry, uint64_t unique, int32_t error, std::span<const ConstBytes> body);
  void WriteReply(uint32_t entry, uint64_t unique, int32_t error, std::span<const ConstBytes> body);
  void SubmitCommit(uint32_t entry);
  bool OnCompletion(UserData data, int result) override;
  void OnWake() override { CommitLateReplies(); }
  void OnCommand(uint32_t entry, int result);
  void OnRequest(uint32_t entry);
  void Serve(uint32_t entry);
  void Stage(uint64_t unique, int32_t error, std::span<const ConstBytes> body);
  void CommitLateReplies();
  void Finish(uint32_t entry);

  // The handover (uring_queue_handover.cc).
  void Request(Mode mode);
  void ApplyRequestedMode();
  void Freeze();
  void HandOff();
  void Resume();
  void Adopt(const std::vector<HandedEntry>& adopted);
  enum class Shown { kRequest, kReply, kGone };
  Shown Shows(const Entry& entry) const;
  void Retire(uint32_t entry);
  void PublishUnfilled() { unfilled_.store(free_, std::memory_order_release); }

  int cpu_;
  int session_fd_;
  size_t depth_;
  size_t payload_size_;
  std::shared_ptr<EntryFile> file_;  // the memfd blocks_ are carved from
  std::vector<EntryBlock> blocks_;
  std::deque<Entry> entries_;     // a deque: the kernel reads an entry's iov when it registers it
  size_t free_ = 0;               // entries given to the kernel to put a request in
  size_t kernel_free_ = 0;        // of those, the ones submitted and not yet seen taken
  size_t reserve_;                // how many free entries the queue keeps while it may grow
  size_t limit_;                  // how many entries it may have
  bool at_limit_ = false;         // could not grow, and said so in the log
  bool connection_over_ = false;  // the kernel ended the queue's commands: never grow again
  size_t finished_ = 0;
  bool new_requests_ = false;  // the kernel handed out requests since the last pump
  bool pump_warned_ = false;   // no RETRIEVE was accepted, and said so in the log
  uint64_t pumps_ = 0;
  size_t pump_from_ = 0;  // where Pump looks for a parked request first
  StagedReply staged_;
  std::mutex inbox_mutex_;
  std::vector<LateReply> inbox_;

  std::vector<HandedEntry> adopted_;  // until Setup adopts them
  Mode mode_ = Mode::kServing;        // the queue thread's
  std::atomic<Mode> requested_mode_{Mode::kServing};
  std::atomic<Mode> published_mode_{Mode::kServing};
  std::atomic<size_t> unfilled_{0};
  std::vector<LateReply> held_back_;  // late replies made after the hand-off, for a resume
  HandedQueue handed_;                // written before published_mode_ says kHandedOff
};

}  // namespace ringfuse::internal
