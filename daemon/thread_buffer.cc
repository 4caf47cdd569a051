#include "daemon/thread_buffer.h"

#include <memory>
#include <new>

namespace ringfuse::daemon {

MutableBytes ThreadBuffer(size_t size) {
  thread_local std::unique_ptr<std::byte[]> buffer;
  thread_local size_t capacity = 0;
  if (size > capacity) {
    buffer.reset(new (std::nothrow) std::byte[size]);
    capacity = buffer == nullptr ? 0 : size;
    if (buffer == nullptr) return {};
  }
  return MutableBytes(buffer.get(), size);
}

}  // namespace ringfuse::daemon
