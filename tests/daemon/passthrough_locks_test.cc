// Record locks through the mount against the same sequence on a native directory (the oracle):
// every pairing of OFD and POSIX locks, read and write, set, wait and get, between a holder and a
// second party that is another process (with its own open or the holder's) or shares the
// holder's fd table (clone(CLONE_FILES), with the holder's open or its own). Every sequence
// runs in a child bounded in time, so a request the daemon never answers fails the test.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "tests/daemon/child_process.h"
#include "tests/daemon/passthrough_fixture.h"
#include "tests/daemon/test_files.h"

namespace ringfuse::daemon {
namespace {

using ringfuse::testing::WriteFile;

// How the second party reaches the file, relative to the holder.
enum class Party {
  kProcessOwnOpen,     // another process, its own open
  kProcessSameOpen,    // a forked child using the holder's open file
  kSharedTableSameFd,  // clone(CLONE_FILES): the same POSIX owner, the holder's fd
  kSharedTableOwnFd,   // clone(CLONE_FILES): the same POSIX owner, an open of its own
};

struct LockCall {
  int command;  // F_SETLK, F_OFD_SETLK, F_SETLKW, F_OFD_SETLKW, F_GETLK or F_OFD_GETLK
  short type;   // F_RDLCK or F_WRLCK
};

struct Sequence {
  LockCall held;  // the holder's, on bytes 0-9
  Party party;
  LockCall second;  // the second party's, on bytes 5-24
};

// Who a reported l_pid names: pids differ between runs, roles do not.
enum class PidRole { kNone, kZero, kHolder, kSecond, kOther };

// What one sequence gave. `done` is false when some call never returned within its bound.
struct Outcome {
  bool done = false;
  int held_error = -1;
  int second_error = -1;
  short type = -1;  // for a get: the lock reported
  off_t start = -1;
  off_t length = -1;
  PidRole pid = PidRole::kNone;
  int later_error = -1;  // once both are gone, a new owner's write lock on the whole file
};

bool IsGet(int command) { return command == F_GETLK || command == F_OFD_GETLK; }
bool Waits(int command) { return command == F_SETLKW || command == F_OFD_SETLKW; }

const char* CommandName(int command) {
  switch (command) {
    case F_SETLK: return "F_SETLK";
    case F_OFD_SETLK: return "F_OFD_SETLK";
    case F_GETLK: return "F_GETLK";
    case F_SETLKW: return "F_SETLKW";
    case F_OFD_SETLKW: return "F_OFD_SETLKW";
    default: return "F_OFD_GETLK";
  }
}

std::ostream& operator<<(std::ostream& out, const Sequence& sequence) {
  static constexpr std::array<const char*, 4> kParties = {
      "another process, own open", "another process, the same open",
      "a shared fd table, the same fd", "a shared fd table, own fd"};
  auto call = [&out](const LockCall& lock) {
    out << CommandName(lock.command) << (lock.type == F_RDLCK ? " read" : " write");
  };
  call(sequence.held);
  out << " 0-9, then " << kParties[static_cast<int>(sequence.party)] << ": ";
  call(sequence.second);
  return out << " 5-24";
}

std::ostream& operator<<(std::ostream& out, const Outcome& outcome) {
  if (!outcome.done) return out << "{a call never returned}";
  return out << "{held " << outcome.held_error << ", second " << outcome.second_error << ", type "
             << outcome.type << ", start " << outcome.start << ", length " << outcome.length
             << ", pid role " << static_cast<int>(outcome.pid) << ", later " << outcome.later_error
             << "}";
}

// Equal where the kernel's answers can be. The pid is not compared where the lock found is an
// OFD lock, reported natively as pid -1, which FUSE cannot carry (the kernel turns a pid it
// cannot find into 0, and does not tell the daemon whether a lock is OFD); nor for F_OFD_GETLK,
// whose answer through FUSE the kernel always reports as pid -1 (fs/locks.c translates the pid
// of the caller's own OFD request, which the daemon's answer filled in).
bool SameAsNative(const Sequence& sequence, const Outcome& mounted, const Outcome& native) {
  const bool pid_comparable =
      native.pid != PidRole::kNone && sequence.second.command != F_OFD_GETLK;
  return mounted.done == native.done && mounted.held_error == native.held_error &&
         mounted.second_error == native.second_error && mounted.type == native.type &&
         mounted.start == native.start && mounted.length == native.length &&
         (!pid_comparable || mounted.pid == native.pid) &&
         mounted.later_error == native.later_error;
}

int ErrorOf(int result) { return result == 0 ? 0 : errno; }

struct flock Range(short type, off_t start, off_t length) {
  struct flock lock {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  lock.l_start = start;
  lock.l_len = length;
  return lock;
}

// What the parties write and the test reads: in memory shared by fork and clone alike.
struct Shared {
  Outcome outcome;
  pid_t holder = 0;
};

// The second party's call, in a forked or cloned child: system calls only.
struct SecondParty {
  const char* path;
  int holder_fd;
  Sequence sequence;
  Shared* shared;
};

int RunSecondParty(void* argument) {
  const SecondParty& party = *static_cast<SecondParty*>(argument);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a holder killed past its bound takes this one along
  const bool own_open = party.sequence.party == Party::kProcessOwnOpen ||
                        party.sequence.party == Party::kSharedTableOwnFd;
  const int fd = own_open ? ::open(party.path, O_RDWR) : party.holder_fd;
  if (fd < 0) return 1;
  struct flock lock = Range(party.sequence.second.type, 5, 20);
  Outcome& outcome = party.shared->outcome;
  outcome.second_error = ErrorOf(::fcntl(fd, party.sequence.second.command, &lock));
  if (outcome.second_error == 0 && IsGet(party.sequence.second.command)) {
    outcome.type = lock.l_type;
    outcome.start = lock.l_start;
    outcome.length = lock.l_len;
    outcome.pid = lock.l_pid == -1                     ? PidRole::kNone
                  : lock.l_pid == 0                    ? PidRole::kZero
                  : lock.l_pid == party.shared->holder ? PidRole::kHolder
                  : lock.l_pid == ::getpid()           ? PidRole::kSecond
                                                       : PidRole::kOther;
  }
  // A shared table keeps an own fd open: closing it would drop the holder's POSIX locks, which
  // is close(2)'s rule and not what is compared here. It closes when the holder exits.
  return 0;
}

// The holder, in a forked child: takes its lock, lets the second party act, and exits, which
// closes everything. Returns 0 when every call returned within its bound.
int RunHolder(const std::string& path, const Sequence& sequence, Shared* shared) {
  shared->holder = ::getpid();
  const int fd = ::open(path.c_str(), O_RDWR);
  if (fd < 0) return 1;
  struct flock lock = Range(sequence.held.type, 0, 10);
  shared->outcome.held_error = ErrorOf(::fcntl(fd, sequence.held.command, &lock));
  SecondParty party{path.c_str(), fd, sequence, shared};
  alignas(16) static std::array<char, 64 * 1024> stack;
  const bool shares_table =
      sequence.party == Party::kSharedTableSameFd || sequence.party == Party::kSharedTableOwnFd;
  const pid_t second = shares_table ? ::clone(RunSecondParty, stack.data() + stack.size(),
                                              CLONE_FILES | SIGCHLD, &party)
                                    : ::fork();
  if (second == 0) ::_exit(RunSecondParty(&party));
  if (second < 0) return 2;
  int status = 0;
  bool reaped = false;
  if (Waits(sequence.second.command)) {
    // A wait that conflicts is granted once the holder lets go: give it a moment to start
    // waiting (whether it did is not compared: that would race), then unlock.
    for (int tries = 0; tries < 20 && !reaped; ++tries) {
      reaped = ::waitpid(second, &status, WNOHANG) == second;
      if (!reaped) ::usleep(1000);
    }
    struct flock unlock = Range(F_UNLCK, 0, 10);
    if (::fcntl(fd, sequence.held.command, &unlock) != 0) return 4;
  }
  if (!reaped && ::waitpid(second, &status, 0) != second) return 3;
  if (!WIFEXITED(status)) return 3;
  return WEXITSTATUS(status);
}

constexpr std::chrono::seconds kBound{5};

// A new owner's write lock on all of `path`, tried until it is granted or the bound passes: the
// daemon learns that an OFD lock's file went from its RELEASE, which the kernel sends after
// close(2) has returned.
int LaterWriteLock(const std::string& path) {
  const auto deadline = std::chrono::steady_clock::now() + kBound;
  int error = 0;
  do {
    error = RunInChild([&path] {
      const int fd = ::open(path.c_str(), O_RDWR);
      struct flock all = Range(F_WRLCK, 0, 0);
      return fd < 0 ? 255 : ErrorOf(::fcntl(fd, F_OFD_SETLK, &all));
    });
    if (error == 0) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  } while (std::chrono::steady_clock::now() < deadline);
  return error;
}

// Runs `sequence` on `path` (a fresh file), each step in a child bounded in time.
Outcome RunSequence(const std::string& path, const Sequence& sequence) {
  WriteFile(path, std::string(64, 'x'));
  void* memory =
      ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return {};
  auto* shared = new (memory) Shared{};
  const bool returned =
      RunInChild([&] { return RunHolder(path, sequence, shared); }, -1, kBound) == 0;
  Outcome outcome = shared->outcome;
  ::munmap(memory, sizeof(Shared));
  if (!returned) return {};
  outcome.done = true;
  outcome.later_error = LaterWriteLock(path);
  return outcome;
}

std::vector<Sequence> EverySequence() {
  std::vector<Sequence> sequences;
  for (int held : {F_SETLK, F_OFD_SETLK}) {
    for (short held_type : {F_RDLCK, F_WRLCK}) {
      for (Party party : {Party::kProcessOwnOpen, Party::kProcessSameOpen,
                          Party::kSharedTableSameFd, Party::kSharedTableOwnFd}) {
        for (int second : {F_GETLK, F_OFD_GETLK, F_SETLK, F_OFD_SETLK, F_SETLKW, F_OFD_SETLKW}) {
          for (short second_type : {F_RDLCK, F_WRLCK}) {
            sequences.push_back({{held, held_type}, party, {second, second_type}});
          }
        }
      }
    }
  }
  return sequences;
}

class PassthroughLocks : public PassthroughMountTest {};

TEST_P(PassthroughLocks, EveryPairingOfOfdAndPosixLocksIsAnsweredAsNatively) {
  DaemonOptions options;
  options.mount.allow_other = true;
  options.mount.default_permissions = true;
  Mount(options);
  const std::string native = top_.path() + "/native";
  for (const Sequence& sequence : EverySequence()) {
    const Outcome expected = RunSequence(native, sequence);
    ASSERT_TRUE(expected.done) << "natively: " << sequence;
    const Outcome mounted = RunSequence(Mounted("locked"), sequence);
    EXPECT_TRUE(SameAsNative(sequence, mounted, expected))
        << sequence << "\n  through the mount: " << mounted << "\n  natively: " << expected;
  }
  const auto deadline = std::chrono::steady_clock::now() + kBound;
  while (fs_->counts().lock_owner_opens > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(fs_->counts().lock_owner_opens, 0u) << "every owner's open went with its file";
}

INSTANTIATE_TEST_SUITE_P(Transports, PassthroughLocks, ringfuse::testing::kEveryTransport,
                         ringfuse::testing::TransportTestName);

}  // namespace
}  // namespace ringfuse::daemon
