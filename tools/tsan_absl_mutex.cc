// Lets ThreadSanitizer see absl::Mutex, in a binary built with -fsanitize=thread (tools/
// CMakeLists.txt links this file into ringfuse-bench then, and only then).
//
// Debian's abseil is a shared library not built with ThreadSanitizer, so its Mutex never tells
// TSan that it locks: every access the daemon's tables make under their absl::Mutex shows as a
// data race between the threads that take turns at it. Here absl::Mutex's lock and unlock
// functions are defined in the binary itself, where the dynamic linker binds the binary's calls
// to them; each tells TSan what it does (its mutex annotations, reader locks as reader locks, so
// that a write under a ReaderLock is still a race) around abseil's own, found with
// dlsym(RTLD_NEXT). Lock*When, Await and CondVar are not covered: ringfuse-bench's code paths do
// not use them.
#include <dlfcn.h>
#include <sanitizer/tsan_interface.h>

#include <cstdlib>
#include <string>

#include "absl/base/options.h"
#include "absl/synchronization/mutex.h"

namespace {

#define RINGFUSE_STRINGIFY_INNER(x) #x
#define RINGFUSE_STRINGIFY(x) RINGFUSE_STRINGIFY_INNER(x)

// abseil's own member function `name` (as mangled: "4Lock" for Lock), taking no argument.
template <typename Result>
Result (*Real(const char* name))(absl::Mutex*) {
  const std::string ns = RINGFUSE_STRINGIFY(ABSL_OPTION_INLINE_NAMESPACE_NAME);
  const std::string mangled = "_ZN4absl" + std::to_string(ns.size()) + ns + "5Mutex" + name + "Ev";
  void* found = ::dlsym(RTLD_NEXT, mangled.c_str());
  if (found == nullptr) std::abort();
  return reinterpret_cast<Result (*)(absl::Mutex*)>(found);
}

void Locked(absl::Mutex* mutex, void (*lock)(absl::Mutex*), unsigned flags) {
  __tsan_mutex_pre_lock(mutex, flags);
  lock(mutex);
  __tsan_mutex_post_lock(mutex, flags, 0);
}

bool TriedLock(absl::Mutex* mutex, bool (*try_lock)(absl::Mutex*), unsigned flags) {
  __tsan_mutex_pre_lock(mutex, flags | __tsan_mutex_try_lock);
  const bool locked = try_lock(mutex);
  __tsan_mutex_post_lock(
      mutex, flags | __tsan_mutex_try_lock | (locked ? 0 : __tsan_mutex_try_lock_failed), 0);
  return locked;
}

void Unlocked(absl::Mutex* mutex, void (*unlock)(absl::Mutex*), unsigned flags) {
  __tsan_mutex_pre_unlock(mutex, flags);
  unlock(mutex);
  __tsan_mutex_post_unlock(mutex, flags);
}

}  // namespace

namespace absl {
ABSL_NAMESPACE_BEGIN

void Mutex::Lock() {
  static const auto real = Real<void>("4Lock");
  Locked(this, real, 0);
}
void Mutex::ReaderLock() {
  static const auto real = Real<void>("10ReaderLock");
  Locked(this, real, __tsan_mutex_read_lock);
}
bool Mutex::TryLock() {
  static const auto real = Real<bool>("7TryLock");
  return TriedLock(this, real, 0);
}
bool Mutex::ReaderTryLock() {
  static const auto real = Real<bool>("13ReaderTryLock");
  return TriedLock(this, real, __tsan_mutex_read_lock);
}
void Mutex::Unlock() {
  static const auto real = Real<void>("6Unlock");
  Unlocked(this, real, 0);
}
void Mutex::ReaderUnlock() {
  static const auto real = Real<void>("12ReaderUnlock");
  Unlocked(this, real, __tsan_mutex_read_lock);
}

ABSL_NAMESPACE_END
}  // namespace absl
