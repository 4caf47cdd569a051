#include "transport/pause_signal.h"

#include <pthread.h>
#include <signal.h>

#include <mutex>

namespace ringfuse::internal {

int PauseSignal() { return SIGRTMAX - 1; }

void InstallPauseSignal() {
  static std::once_flag installed;
  std::call_once(installed, [] {
    struct sigaction action {};
    action.sa_handler = [](int) {};
    sigemptyset(&action.sa_mask);
    ::sigaction(PauseSignal(), &action, nullptr);
  });
}

void UnblockPauseSignal() {
  sigset_t pause;
  sigemptyset(&pause);
  sigaddset(&pause, PauseSignal());
  pthread_sigmask(SIG_UNBLOCK, &pause, nullptr);
}

}  // namespace ringfuse::internal
