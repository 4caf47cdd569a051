#include "ringfuse/signals.h"

#include <pthread.h>

#include <atomic>
#include <thread>

#include "ringfuse/session.h"

namespace ringfuse {

StopSignals::StopSignals(std::initializer_list<int> signals) {
  sigemptyset(&set_);
  for (int signal : signals) sigaddset(&set_, signal);
  pthread_sigmask(SIG_BLOCK, &set_, nullptr);
}

int StopSignals::Wait(Session& session) {
  // The session may also end on its own (unmounted from outside); a watcher thread then wakes
  // the sigwait below with a signal of our set sent to this very thread.
  const pthread_t waiter = pthread_self();
  int first_signal = 0;
  sigset_t copy = set_;
  for (int s = 1; s < NSIG; ++s) {
    if (sigismember(&copy, s)) {
      first_signal = s;
      break;
    }
  }
  std::atomic<bool> ended{false};
  std::thread watcher([&] {
    session.Wait();
    ended = true;
    pthread_kill(waiter, first_signal);
  });
  int received = 0;
  sigwait(&set_, &received);
  const bool ended_by_itself = ended.load() && received == first_signal;
  session.Stop();
  watcher.join();
  return ended_by_itself ? 0 : received;
}

}  // namespace ringfuse
