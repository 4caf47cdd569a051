#include "transport/retire_channel.h"

#include <mutex>
#include <vector>

#include "ringfuse/protocol/reply_channel.h"

namespace ringfuse::internal {

void KeepForever(std::unique_ptr<ReplyChannel> channel) {
  static std::mutex* mutex = new std::mutex;
  static auto* kept = new std::vector<std::unique_ptr<ReplyChannel>>;
  std::lock_guard lock(*mutex);
  kept->push_back(std::move(channel));
}

}  // namespace ringfuse::internal
