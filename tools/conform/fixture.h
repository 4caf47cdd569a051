// What many checks share: the small tree they serve, caching settings, and client calls that
// return what a report should show ("0" or the errno's name) instead of -1.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <string_view>

#include "examples/memfs/memfs.h"

namespace ringfuse::conform {

using examples::MemFs;

// Long enough that nothing expires during a check: only the kernel's own rules and the
// notifications under test drop what it cached.
inline constexpr Timeout kHour{3600, 0};

// MemFs options: entries and attributes cached for an hour, or not at all.
MemFs::Options Cached(uint32_t open_flags = 0);
MemFs::Options Uncached(uint32_t open_flags = 0);

// The tree most checks serve, in the root: "file" (8 KiB of KnownBytes), "dir" (empty) and
// "link" (a symlink to "file").
struct Tree {
  uint64_t file = 0, dir = 0, link = 0;
};
inline constexpr size_t kFileSize = 8192;
Tree Populate(MemFs& fs);

// `size` bytes that differ from those of another `seed`, so that a stale read shows.
std::string KnownBytes(size_t size, char seed);

// "ok", or the errno's name ("ENOENT"), of a call that returned `result` (-1 sets errno).
std::string Said(long result);
// Up to `size` bytes of `path` from `offset`, read with `open_flags`; an error says "ERR <name>".
std::string ReadAt(const std::string& path, size_t size, off_t offset = 0, int open_flags = 0);
// stat's st_ino of `path`, or 0.
uint64_t InodeOf(const std::string& path);

// Holds requests of one opcode in MemFs's BeforeOp until Release (or the bound passes). The hook
// shares the gate's state, so that a request still leaving it outlives the gate safely.
class Gate {
 public:
  Gate(MemFs& fs, Opcode held, std::chrono::milliseconds bound)
      : state_(std::make_shared<State>()) {
    fs.SetBeforeOp([state = state_, held, bound](Opcode opcode) {
      if (opcode == held && !state->released.load()) state->opened.wait_for(bound);
    });
  }
  ~Gate() { Release(); }
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;
  void Release() {
    if (!state_->released.exchange(true)) state_->open.set_value();
  }

 private:
  struct State {
    std::atomic<bool> released{false};
    std::promise<void> open;
    std::shared_future<void> opened = open.get_future().share();
  };
  std::shared_ptr<State> state_;
};

// Waits until `condition` holds, checking every millisecond, at most `bound`; whether it held.
// For state a handler changes after the request log saw its request.
bool WaitUntil(const std::function<bool()>& condition,
               std::chrono::milliseconds bound = std::chrono::seconds(5));

}  // namespace ringfuse::conform
