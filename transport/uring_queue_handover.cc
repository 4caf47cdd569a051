// A uring-cmd queue's part in a handover (uring_queue.h, uring_cmd_handover.h): freezing,
// handing off, resuming, and adopting what another process handed off.
#include <cstring>

#include "ringfuse/log.h"
#include "ringfuse/opcode.h"
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
    EntryHold hold;
    switch (entry.state) {
      case EntryState::kHeld:
      case EntryState::kInHandler: hold = EntryHold::kRequest; break;  // parked: handled again
      case EntryState::kReplyWritten: hold = EntryHold::kReply; break;
      default: continue;  // free (a queue of an offline CPU), or ended
    }
    handed_.entries.push_back(HandedEntry{entry.block, entry.slot, hold, entry.commit_id});
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
// committed some before it failed; those entries are its, and this queue leaves them alone.
void UringQueue::Resume() {
  const bool was_handed_off = mode_ == Mode::kHandedOff;
  mode_ = Mode::kServing;
  size_t taken = 0;
  for (uint32_t i = 0; i < entries_.size(); ++i) {
    Entry& entry = entries_[i];
    const bool held = entry.state == EntryState::kHeld ||
                      entry.state == EntryState::kReplyWritten ||
                      entry.state == EntryState::kInHandler;
    if (!held) continue;
    if (was_handed_off && !StillHolds(entry)) {
      ++taken;
      Finish(i);  // a late reply to it is dropped (CommitLateReplies)
      continue;
    }
    if (entry.state == EntryState::kReplyWritten) SubmitCommit(i);
    if (entry.state == EntryState::kHeld) Serve(i);
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

// Whether the entry's buffers still show what this process left there: its request (a known
// opcode, the unique it was given), or its reply, under the same commit id. Once another
// process has committed the entry, the kernel has taken the reply and may have put the next
// request there (another commit id); a request answered shows the answer's header, whose error
// field, where a request has its opcode, is 0 or negative.
bool UringQueue::StillHolds(const Entry& entry) const {
  if (entry.header->ring_ent_in_out.commit_id != entry.commit_id) return false;
  if (entry.state == EntryState::kReplyWritten) {
    wire::OutHeader out;
    std::memcpy(&out, entry.header->in_out, sizeof(out));
    return out.unique == entry.commit_id;
  }
  wire::InHeader in;
  std::memcpy(&in, entry.header->in_out, sizeof(in));
  return in.unique == entry.commit_id && LookupOpcode(in.opcode).has_value();
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
    entry.state =
        handed.hold == EntryHold::kReply ? EntryState::kReplyWritten : EntryState::kHeld;
    if (!StillHolds(entry)) {
      Log(LogLevel::kWarning, "queue %u: a handed-over entry does not hold request %u; left alone",
          index(), handed.unique);
      continue;
    }
    entries_.push_back(entry);
  }
  for (uint32_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].state == EntryState::kReplyWritten) SubmitCommit(i);
    if (entries_[i].state == EntryState::kHeld) Serve(i);
  }
}

}  // namespace ringfuse::internal
