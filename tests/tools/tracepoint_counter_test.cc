// TracepointCounter on raw_syscalls/sys_enter, what compare counts a daemon's system calls with:
// a thread that makes N getppid() calls shows N (and the one or two of its own that say it is
// done); the same thread asleep shows none while another thread makes calls (the negative
// control: the count is the thread's own calls, not time passing or the process's); a filter
// keeps only the calls that match it; a thread that ended keeps its count; and no thread to count
// is an error, not a count of 0.
#include "tools/tracepoint_counter.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"

namespace ringfuse::tools {
namespace {

using ::testing::IsEmpty;
using ::testing::IsSupersetOf;

// The scheduler's state letter of one of this process's threads (R running, S asleep).
char StateOf(pid_t tid) {
  std::ifstream file(absl::StrFormat("/proc/self/task/%d/stat", tid));
  std::string stat((std::istreambuf_iterator<char>(file)), {});
  const size_t name_end = stat.rfind(')');  // the name in parentheses may hold spaces
  return name_end + 2 < stat.size() ? stat[name_end + 2] : '?';
}

void WaitUntilAsleep(pid_t tid) {
  while (StateOf(tid) != 'S') absl::SleepFor(absl::Milliseconds(1));
}

// A thread asleep in read(2) of a pipe until told how many getppid() calls to make. It makes no
// other system call between two requests than the write that says it is done and the read that
// waits for the next: what it counts is known to the call.
class CallingThread {
 public:
  CallingThread() {
    int requests[2], replies[2];
    EXPECT_EQ(::pipe2(requests, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(replies, O_CLOEXEC), 0);
    requests_ = {base::UniqueFd(requests[0]), base::UniqueFd(requests[1])};
    replies_ = {base::UniqueFd(replies[0]), base::UniqueFd(replies[1])};
    thread_ = std::thread([this] { Serve(); });
    tid_ = Receive(replies_.in);
    WaitUntilAsleep(tid_);
  }
  ~CallingThread() { End(); }

  pid_t tid() const { return tid_; }

  // Has the thread make `calls` getppid() calls (1 or more); returns once it is asleep again.
  void Call(int calls) {
    Send(requests_.out, calls);
    EXPECT_EQ(Receive(replies_.in), calls);
    WaitUntilAsleep(tid_);
  }

  void End() {
    if (!thread_.joinable()) return;
    Send(requests_.out, 0);
    thread_.join();
  }

 private:
  struct Pipe {
    base::UniqueFd in;
    base::UniqueFd out;
  };

  static void Send(const base::UniqueFd& fd, int value) {
    EXPECT_EQ(::write(fd.get(), &value, sizeof(value)), static_cast<ssize_t>(sizeof(value)));
  }
  static int Receive(const base::UniqueFd& fd) {
    int value = 0;
    return ::read(fd.get(), &value, sizeof(value)) == sizeof(value) ? value : 0;
  }

  void Serve() {
    Send(replies_.out, static_cast<int>(::gettid()));
    for (int calls = Receive(requests_.in); calls > 0; calls = Receive(requests_.in)) {
      for (int i = 0; i < calls; ++i) ::syscall(SYS_getppid);
      Send(replies_.out, calls);
    }
  }

  Pipe requests_;
  Pipe replies_;
  std::thread thread_;
  pid_t tid_ = 0;
};

constexpr int kCalls = 1000;

class TracepointCounterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "perf counters of tracepoints need root";
  }
};

TEST_F(TracepointCounterTest, EachSystemCallOfTheThreadIsCounted) {
  CallingThread thread;
  absl::StatusOr<TracepointCounter> counter =
      TracepointCounter::Start({thread.tid()}, kSystemCallTracepoint);
  ASSERT_TRUE(counter.ok()) << counter.status();
  thread.Call(kCalls);
  // The getppid() calls, the write that said they were done and the read it sleeps in.
  EXPECT_GE(counter->Read(), uint64_t{kCalls});
  EXPECT_LE(counter->Read(), uint64_t{kCalls} + 2);
}

TEST_F(TracepointCounterTest, AThreadAsleepMakesNoneWhileOthersCall) {
  CallingThread thread;
  absl::StatusOr<TracepointCounter> counter =
      TracepointCounter::Start({thread.tid()}, kSystemCallTracepoint);
  ASSERT_TRUE(counter.ok()) << counter.status();
  for (int i = 0; i < kCalls; ++i) ::syscall(SYS_getppid);  // this thread's, not counted
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(counter->Read(), 0u);
}

TEST_F(TracepointCounterTest, AFilterCountsOnlyTheCallsThatMatchIt) {
  CallingThread thread;
  absl::StatusOr<TracepointCounter> counter = TracepointCounter::Start(
      {thread.tid()}, kSystemCallTracepoint, absl::StrCat("id == ", SYS_getppid));
  ASSERT_TRUE(counter.ok()) << counter.status();
  thread.Call(kCalls);
  EXPECT_EQ(counter->Read(), uint64_t{kCalls});  // not its write or read
}

TEST_F(TracepointCounterTest, AThreadThatEndedKeepsItsCount) {
  std::optional<TracepointCounter> counter;
  {
    CallingThread thread;
    absl::StatusOr<TracepointCounter> started = TracepointCounter::Start(
        {thread.tid()}, kSystemCallTracepoint, absl::StrCat("id == ", SYS_getppid));
    ASSERT_TRUE(started.ok()) << started.status();
    counter.emplace(std::move(*started));
    thread.Call(kCalls);
  }
  EXPECT_EQ(counter->Read(), uint64_t{kCalls});
}

TEST(TracepointCounter, NoThreadIsAnErrorNotACountOfZero) {
  EXPECT_EQ(TracepointCounter::Start({}, kSystemCallTracepoint).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(TracepointCounter, AnUnknownTracepointIsAnError) {
  EXPECT_FALSE(TracepointCounter::Start({::gettid()}, "no_such_category/no_such_event").ok());
}

TEST(TracepointCounter, ThreadsOfAProcessAreItsOwnAndThoseOfOneThatIsGoneNone) {
  CallingThread thread;
  EXPECT_THAT(ThreadsOf(::getpid()), IsSupersetOf({::getpid(), thread.tid()}));
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ASSERT_GT(gone, 0);
  ::waitpid(gone, nullptr, 0);
  EXPECT_THAT(ThreadsOf(gone), IsEmpty());
}

}  // namespace
}  // namespace ringfuse::tools
