#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <utility>
#include <variant>

#include "daemon/test_hooks.h"

namespace ringfuse::daemon {
namespace {

class LookupHang final : public RequestObserver {
 public:
  explicit LookupHang(std::string name) : name_(std::move(name)) {}

  void OnRequest(const Request& request) override {
    const auto* lookup = std::get_if<op::Lookup>(&request.args);
    if (lookup == nullptr || lookup->name != name_) return;
    while (armed_.load()) ::pause();  // until the daemon is killed
  }
  void OnMalformed(const ParseError&) override {}
  void OnReply(const ReplyTarget&, int32_t, std::span<const ConstBytes>) override {}
  void Disarm() { armed_ = false; }

 private:
  const std::string name_;
  std::atomic<bool> armed_{true};
};

LookupHang* MakeLookupHang() {
  const char* name = ::getenv("RINGFUSED_TEST_HANG_ON_LOOKUP");
  return name == nullptr ? nullptr : new LookupHang(name);  // lives as long as the process
}

LookupHang* TheLookupHang() {
  static LookupHang* const hang = MakeLookupHang();
  return hang;
}

// RINGFUSED_TEST_HANG_IN_CHANGE, or empty.
const std::string& ChangeHangWanted() {
  static const std::string* const wanted = [] {
    const char* value = ::getenv("RINGFUSED_TEST_HANG_IN_CHANGE");
    return new std::string(value == nullptr ? "" : value);  // lives as long as the process
  }();
  return *wanted;
}

std::atomic<bool> hangs_armed{true};

}  // namespace

void StopHereIfTestAsks(std::string_view step) {
  const char* stop_at = ::getenv("RINGFUSED_TEST_STOP_AT");
  if (stop_at != nullptr && step == stop_at) ::raise(SIGSTOP);
}

RequestObserver* LookupHangIfTestAsks() { return TheLookupHang(); }

void HangInChangeIfTestAsks(std::string_view point, std::string_view subject) {
  const std::string& wanted = ChangeHangWanted();
  if (wanted.empty() || wanted.size() != point.size() + 1 + subject.size() ||
      !wanted.starts_with(point) || wanted[point.size()] != ':' || !wanted.ends_with(subject)) {
    return;
  }
  // For the test to know the change is held here, and where.
  const std::string held(subject), where(point);
  std::fprintf(stderr, "ringfused: test hook: holding the change of %s at %s\n", held.c_str(),
               where.c_str());
  while (hangs_armed.load()) ::pause();  // until the daemon is killed
}

void StopTestHangs() {
  hangs_armed = false;
  if (LookupHang* hang = TheLookupHang()) hang->Disarm();
}

}  // namespace ringfuse::daemon
