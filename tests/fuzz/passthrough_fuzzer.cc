// libFuzzer target over the real PassthroughFs, behind a Dispatcher that has answered a normal
// INIT, serving a private scratch tree.
//
// Input: length-prefixed messages (a 16-bit little-endian length each, as in the protocol
// fuzzer's conversations), dispatched in order to a PassthroughFs made fresh for the input, so
// that node ids (1 for the root, then 2, 3, ... in the order names are first looked up) and fh
// values (1, 2, ... in the order opens are answered) mean the same in every input and seeds can
// name them. Each message's unique is replaced by its place in the input (the first message is
// 3: INIT was 2), so that an INTERRUPT can name an earlier message. The tree persists from one
// input to the next and is rebuilt every kInputsPerTree inputs. At a soft fd limit of 64 only 16
// nodes stay open, the others reopened on demand: by handle, or, for an input whose first byte
// is odd, by name, as a daemon without CAP_DAC_READ_SEARCH does.
//
// Whatever the bytes: nothing crashes or reads out of bounds; every reply is one the kernel
// takes; every message gets exactly the replies the kernel waits for, counting those a lock
// wait sends later from the LockWaiter's thread (the filesystem is destroyed at the end of each
// input, which answers waits still pending EINTR); no request blocks (libFuzzer's -timeout
// reports one); a request on an fh never handed out is answered EBADF; nothing outside the served
// directory changes (a canary directory beside it, reached from inside by symlinks, stays exactly
// as it was: the *at() confinement is the property under test); and the fuzzer's own thread keeps
// its credentials and umask whatever caller a request names.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <vector>

#include "daemon/access/credentials.h"
#include "daemon/fs/passthrough_fs.h"
#include "ringfuse/protocol/parse.h"
#include "tests/fuzz/fuzz_checks.h"
#include "tests/fuzz/fuzz_sandbox.h"

namespace ringfuse::fuzz {
namespace {

constexpr int kInputsPerTree = 64;
constexpr uint64_t kFirstUnique = 3;

// Whether `message` is a well-formed request whose handler looks its fh (the first field of its
// arguments) up before anything else, on a running connection; its fh then.
std::optional<uint64_t> FhLookedUpFirst(const internal::Dispatcher& dispatcher,
                                        ConstBytes message) {
  if (dispatcher.state() != internal::ConnectionState::kRunning || message.size() < 48)
    return std::nullopt;
  uint32_t opcode;
  std::memcpy(&opcode, message.data() + 4, sizeof(opcode));
  switch (static_cast<Opcode>(opcode)) {
    case Opcode::kWrite:
    case Opcode::kRelease:
    case Opcode::kFsync:
    case Opcode::kFlush:
    case Opcode::kReleasedir:
    case Opcode::kFsyncdir:
    case Opcode::kGetlk:
    case Opcode::kSetlk:
    case Opcode::kSetlkw:
    case Opcode::kFallocate:
    case Opcode::kLseek: break;
    default: return std::nullopt;
  }
  if (!std::holds_alternative<Request>(ParseRequest(message, dispatcher.parse_context()))) {
    return std::nullopt;
  }
  uint64_t fh;
  std::memcpy(&fh, message.data() + sizeof(wire::InHeader), sizeof(fh));
  return fh;
}

// The fuzzer's own thread as it started: no request may leave another identity on it.
struct ThreadIdentity {
  long fsuid = ::syscall(SYS_setfsuid, -1);
  long fsgid = ::syscall(SYS_setfsgid, -1);
  uint64_t effective = daemon::ThreadCapabilities().value_or(daemon::Capabilities{}).effective;
  mode_t mask = [] {
    const mode_t now = ::umask(0);
    ::umask(now);
    return now;
  }();
  bool operator==(const ThreadIdentity&) const = default;
};

// Dispatches `input`'s messages; returns how many replies each unique is owed.
std::map<uint64_t, int> DispatchAll(internal::Dispatcher& dispatcher, CountingChannel& channel,
                                    ConstBytes input) {
  std::map<uint64_t, int> owed = {{2, 1}};  // INIT
  uint64_t unique = kFirstUnique;
  ForEachMessage(input, [&](ConstBytes message) {
    std::vector<std::byte> copy(message.begin(), message.end());
    if (copy.size() >= 16) {
      std::memcpy(copy.data() + 8, &unique, sizeof(unique));
      owed[unique] = RepliesExpected(copy);
    }
    const std::optional<uint64_t> fh = FhLookedUpFirst(dispatcher, copy);
    const bool forged = fh && (*fh == 0 || *fh > daemon::last_fh_given.load());
    dispatcher.Dispatch(copy, internal::Delivery{});
    // A wait's reply may come later, never twice.
    if (copy.size() >= 16 && channel.RepliesTo(unique) > owed[unique]) std::abort();
    if (forged && channel.ErrorOf(unique) != -EBADF) std::abort();
    ++unique;
  });
  return owed;
}

// A soft fd limit of 64 keeps 16 nodes open (InodeTable::DefaultOpenLimit), so that a few
// lookups close nodes and later requests reopen them.
bool LowerTheFdLimit() {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return false;
  limit.rlim_cur = std::min<rlim_t>(limit.rlim_cur, 64);
  return ::setrlimit(RLIMIT_NOFILE, &limit) == 0;
}

// While alive, the thread lacks CAP_DAC_READ_SEARCH, as a user's own daemon does: a table made
// meanwhile reopens closed nodes by name instead of by handle (inode_table.h).
class WithoutHandles {
 public:
  WithoutHandles() {
    constexpr uint64_t kDacReadSearch = uint64_t{1} << 2;
    daemon::Capabilities without = old_;
    without.effective &= ~kDacReadSearch;
    if (!daemon::SetThreadCapabilities(without)) std::abort();
  }
  ~WithoutHandles() { daemon::SetThreadCapabilities(old_); }
  WithoutHandles(const WithoutHandles&) = delete;
  WithoutHandles& operator=(const WithoutHandles&) = delete;

 private:
  daemon::Capabilities old_ = daemon::ThreadCapabilities().value();
};

void FuzzPassthrough(ConstBytes input) {
  static Sandbox sandbox;
  static const ThreadIdentity identity;
  static const bool fd_limit_lowered = LowerTheFdLimit();
  if (!fd_limit_lowered) std::abort();
  static int inputs = 0;
  // Every other input by name; the input's first byte decides, so that a crash replays.
  std::optional<WithoutHandles> without_handles;
  if (!input.empty() && (std::to_integer<int>(input[0]) & 1)) without_handles.emplace();
  if (inputs++ % kInputsPerTree == 0) sandbox.Rebuild();
  // No handle outlives an input, so fh values can start again from 1 without naming two.
  daemon::last_fh_given.store(0);
  CountingChannel channel;
  std::map<uint64_t, int> owed;
  {
    daemon::DaemonOptions options;
    options.source = sandbox.source();
    daemon::PassthroughFs passthrough(
        base::UniqueFd(::open(options.source.c_str(), O_PATH | O_CLOEXEC)), options);
    NullDiagnostics diagnostics;
    internal::Dispatcher dispatcher(passthrough, channel, diagnostics, InitWishes{});
    SendInit(dispatcher, KernelOffer());
    if (dispatcher.state() != internal::ConnectionState::kRunning) std::abort();
    owed = DispatchAll(dispatcher, channel, input);
  }  // pending lock waits are answered here
  size_t owed_uniques = 0;
  for (const auto& [unique, count] : owed) {
    if (channel.RepliesTo(unique) != count) std::abort();
    owed_uniques += count > 0;
  }
  if (channel.UniquesAnswered() != owed_uniques) std::abort();  // a reply to no request
  sandbox.CheckConfined();
  without_handles.reset();
  if (!(ThreadIdentity{} == identity)) std::abort();
}

}  // namespace
}  // namespace ringfuse::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A private, exactly-sized copy so that any overread is caught by ASan.
  std::vector<std::byte> copy(size);
  if (size > 0) std::memcpy(copy.data(), data, size);
  ringfuse::fuzz::FuzzPassthrough(copy);
  return 0;
}
