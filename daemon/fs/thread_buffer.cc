#include "daemon/fs/thread_buffer.h"

#include <cstdlib>
#include <cstring>
#include <memory>

namespace ringfuse::daemon {
namespace {

constexpr size_t kPage = 4096;

struct Free {
  void operator()(std::byte* memory) const { std::free(memory); }
};

}  // namespace

MutableBytes ThreadBuffer(size_t size) {
  thread_local std::unique_ptr<std::byte, Free> buffer;
  thread_local size_t capacity = 0;
  if (size > capacity) {
    const size_t rounded = (size + kPage - 1) / kPage * kPage;
    buffer.reset(static_cast<std::byte*>(std::aligned_alloc(kPage, rounded)));
    capacity = buffer == nullptr ? 0 : rounded;
    if (buffer == nullptr) return {};
    std::memset(buffer.get(), 0, rounded);
  }
  return MutableBytes(buffer.get(), size);
}

}  // namespace ringfuse::daemon
