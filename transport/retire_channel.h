// Tearing down a transport's reply channels without leaving a dangling pointer in a reply the
// handler still holds (a parked SETLKW or POLL, say): such a channel is closed, so that the late
// reply is dropped, and deliberately left allocated; the others are freed.
#pragma once

#include <memory>

#include "ringfuse/log.h"
#include "ringfuse/protocol/reply_channel.h"
#include "ringfuse/reply.h"

namespace ringfuse::internal {

// Holds retired channels for the rest of the process, reachable, so that they are neither freed
// nor reported as leaks.
void KeepForever(std::unique_ptr<ReplyChannel> channel);

template <typename Channel>
void RetireChannel(std::unique_ptr<Channel> channel) {
  if (channel == nullptr) return;
  channel->Close();
  const uint64_t outstanding = channel->outstanding();
  if (outstanding == 0) return;  // freed here
  Log(LogLevel::kWarning,
      "the handler still holds %u unanswered replies as the session ends; they will be dropped, "
      "and the channel they point to is kept allocated so that answering them stays harmless",
      outstanding);
  KeepForever(std::move(channel));
}

}  // namespace ringfuse::internal
