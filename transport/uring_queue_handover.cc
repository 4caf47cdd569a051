// A uring-cmd queue's part in a handover (uring_queue.h, uring_cmd_handover.h): freezing,
// handing off, resuming, and adopting what another process handed off.
#include <cstring>

#include "ringfuse/log.h"
#include "ringfuse/opcode.h"
#include "ringfuse/protocol/frames.h"
#include "transport/uring_queue.h"

namespace ringfuse::internal {

void UringQueue::Request(Mode mode) {
  requested_mode_.store(mode, std::memory_order_release);
  Wake();
}

// On the queue's thread, between two rounds of completions.
void UringQueue::ApplyRequestedMode() {
  const Mode wanted = requested_mode_.load(std::memory_order_acquire);
  if (wanted == mode_) return;
  if (wanted == Mode::kFrozen && mode_ == Mode::kServing) {
    Freeze();
  } else if (wanted == Mode::kHandedOff && mode_ == Mode::kFrozen) {
    HandOff();
  } else if (wanted == Mode::kServing) {
    Resume();
  }
  published_mode_.store(mode_, std::memory_order_release);
}

// What is queued (commits above all) goes to the kernel first; from then on the queue commits
// nothing, so each free entry stays the kernel's until a request fills it.
void UringQueue::Freeze() {
  Submit(0);
  mode_ = Mode::kFrozen;
  PublishUnfilled();
}

// Lists what the entries hold; from here on their buffers are the next process's.
void UringQueue::HandOff() {
  handed_ = {};
  for (const Entry& entry : entries_) {
    // Free entries (a queue of an offline CPU) and ended ones stay behind; a parked request
    // goes, to be handled again.
    if (entry.state == EntryState::kHeld || entry.state == EntryState::kInHandler ||
        entry.state == EntryState::kReplyWritten) {
      handed_.entries.push_back(HandedEntry{entry.block, entry.slot, entry.commit_id});
    }
  }
  mode_ = Mode::kHandedOff;
}

HandedQueue UringQueue::Handed(std::vector<int>& fds) const {
  HandedQueue queue = handed_;
  for (const EntryBlock& block : blocks_) {
    queue.blocks.push_back(
        HandedBlock{block.address(), block.offset(), static_cast<uint32_t>(block.count())});
  }
  fds.push_back(file_->fd());
  return queue;
}

// The handover failed: answers what the entries hold. After a hand-off the new process may have
// answered some before it failed: what each entry's buffers show now decides (Shows).
void UringQueue::Resume() {
  const bool was_handed_off = mode_ == Mode::kHandedOff;
  mode_ = Mode::kServing;
  size_t taken = 0;
  for (uint32_t i = 0; i < entries_.size(); ++i) {
    const EntryState state = entries_[i].state;
    if (state != EntryState::kHeld && state != EntryState::kReplyWritten &&
        state != EntryState::kInHandler) {
      continue;
    }
    Shown shown = state == EntryState::kReplyWritten ? Shown::kReply : Shown::kRequest;
    if (was_handed_off) shown = Shows(entries_[i]);
    switch (shown) {
      case Shown::kGone:
        ++taken;
        Retire(i);  // a late reply to it is dropped (CommitLateReplies)
        break;
      case Shown::kReply:
        SubmitCommit(i);  // this process's reply or the new one's; a second commit is refused
        break;
      case Shown::kRequest:
        if (state == EntryState::kHeld) Serve(i);  // a parked one's handler answers later
        break;
    }
  }
  for (LateReply& late : std::exchange(held_back_, {})) {
    if (entries_[late.entry].state != EntryState::kInHandler) continue;
    const ConstBytes body[] = {late.body};
    Commit(late.entry, late.unique, late.error, body);
  }
  if (taken > 0) {
    Log(LogLevel::kWarning, "queue %u: resuming, %u entries were already the new process's",
        index(), taken);
  }
}

// What the entry's buffers show under its commit id. Once a process has committed the entry, the
// kernel has taken the reply and may have put the next request there, under another commit id:
// gone. Under the same id, the header is the request's while its opcode field holds a known
// opcode, and a reply's otherwise (where a request has its opcode, a reply has its error, 0 or
// negative). A request of an opcode this binary does not know is so taken for a reply, and its
// commit fails it (EINVAL for the caller) rather than leaving it unanswered.
UringQueue::Shown UringQueue::Shows(const Entry& entry) const {
  if (entry.header->ring_ent_in_out.commit_id != entry.commit_id) return Shown::kGone;
  wire::InHeader in;
  std::memcpy(&in, entry.header->in_out, sizeof(in));
  if (in.unique != entry.commit_id) return Shown::kGone;
  return LookupOpcode(in.opcode).has_value() ? Shown::kRequest : Shown::kReply;
}

// The entry is another process's now: it counts as ended, but the queue goes on (KeepReserve
// registers entries in its place).
void UringQueue::Retire(uint32_t entry) {
  if (entries_[entry].state == EntryState::kFinished) return;
  if (entries_[entry].state == EntryState::kAwaitingRequest) --free_;
  entries_[entry].state = EntryState::kFinished;
  ++finished_;
}

// On the queue's thread, in Setup: the handed entries become this queue's as each is committed
// from its ring, the replies written there at once, the requests once handled.
void UringQueue::Adopt(const std::vector<HandedEntry>& adopted) {
  for (const HandedEntry& handed : adopted) {
    const EntryBlock& block = blocks_[handed.block];
    Entry entry;
    entry.header = block.header(handed.slot);
    entry.payload = block.payload(handed.slot);
    entry.iov[0] = {entry.header, sizeof(wire::UringReqHeader)};
    entry.iov[1] = {entry.payload, payload_size_};
    entry.block = handed.block;
    entry.slot = handed.slot;
    entry.commit_id = handed.unique;
    switch (Shows(entry)) {
      case Shown::kGone:
        Log(LogLevel::kWarning,
            "queue %u: a handed-over entry no longer holds request %u; left alone", index(),
            handed.unique);
        continue;
      case Shown::kReply: entry.state = EntryState::kReplyWritten; break;
      case Shown::kRequest: entry.state = EntryState::kHeld; break;
    }
    entries_.push_back(entry);
  }
  for (uint32_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].state == EntryState::kReplyWritten) SubmitCommit(i);
    if (entries_[i].state == EntryState::kHeld) Serve(i);
  }
}

}  // namespace ringfuse::internal
