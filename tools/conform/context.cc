#include "tools/conform/context.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace ringfuse::conform {

using Clock = std::chrono::steady_clock;

void RequestLog::OnRequest(const Request& request) {
  Entry entry{.opcode = request.header.opcode,
              .unique = request.header.unique,
              .nodeid = request.header.nodeid,
              .line = DescribeRequest(request)};
  if (const auto* read = std::get_if<op::Read>(&request.args)) entry.size = read->size();
  if (const auto* write = std::get_if<op::Write>(&request.args)) entry.size = write->data.size();
  if (const auto* interrupt = std::get_if<op::Interrupt>(&request.args)) {
    entry.target = interrupt->in.unique;
  }
  {
    std::lock_guard lock(mutex_);
    entries_.push_back(std::move(entry));
    last_ = Clock::now();
  }
  arrived_.notify_all();
}

void RequestLog::OnMalformed(const ParseError& error) {
  {
    std::lock_guard lock(mutex_);
    entries_.push_back(Entry{.line = absl::StrFormat("malformed: %s", error.ToString())});
    last_ = Clock::now();
  }
  arrived_.notify_all();
}

size_t RequestLog::Mark() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

std::vector<RequestLog::Entry> RequestLog::Since(size_t mark) const {
  std::lock_guard lock(mutex_);
  if (mark >= entries_.size()) return {};
  return {entries_.begin() + static_cast<ptrdiff_t>(mark), entries_.end()};
}

std::vector<std::string> RequestLog::OpcodesSince(size_t mark) const {
  std::vector<std::string> names;
  for (const Entry& entry : Since(mark)) names.emplace_back(OpcodeName(entry.opcode));
  return names;
}

size_t RequestLog::CountSince(size_t mark, Opcode opcode) const {
  const std::vector<Entry> entries = Since(mark);
  return static_cast<size_t>(std::count_if(entries.begin(), entries.end(), [&](const Entry& e) {
    return e.opcode == static_cast<uint32_t>(opcode);
  }));
}

void RequestLog::Settle(std::chrono::milliseconds quiet, std::chrono::milliseconds bound) const {
  const auto called = Clock::now();
  const auto deadline = called + bound;
  std::unique_lock lock(mutex_);
  while (Clock::now() < deadline) {
    // Quiet since the call too: a request the kernel sends after the system call returned may
    // not have been read yet when the last one logged is already old.
    const auto quiet_until = std::max(last_, called) + quiet;
    if (Clock::now() >= quiet_until) return;
    arrived_.wait_until(lock, std::min(quiet_until, deadline));
  }
}

bool RequestLog::WaitFor(size_t mark, Opcode opcode, std::chrono::milliseconds bound,
                         size_t count) const {
  std::unique_lock lock(mutex_);
  return arrived_.wait_for(lock, bound, [&] {
    size_t seen = 0;
    for (size_t i = mark; i < entries_.size(); ++i) {
      if (entries_[i].opcode == static_cast<uint32_t>(opcode)) ++seen;
    }
    return seen >= count;
  });
}

std::vector<uint32_t> RequestLog::Opcodes() const {
  std::lock_guard lock(mutex_);
  std::vector<uint32_t> opcodes;
  for (const Entry& entry : entries_) {
    if (entry.opcode != 0) opcodes.push_back(entry.opcode);
  }
  std::sort(opcodes.begin(), opcodes.end());
  opcodes.erase(std::unique(opcodes.begin(), opcodes.end()), opcodes.end());
  return opcodes;
}

std::string Mounted::Path(std::string_view relative) const {
  return absl::StrFormat("%s/%s", root_, relative);
}

void Mounted::Watch() {
  std::unique_lock lock(watchdog_mutex_);
  if (watchdog_wake_.wait_for(lock, kWatchdogBound, [this] { return ending_; })) return;
  context_.Fail(absl::StrFormat("the mount outlived %d s: its connection was aborted",
                                kWatchdogBound.count()));
  (void)AbortConnection(session_->connection_id());
}

void Mounted::Unmount() {
  if (!session_) return;
  session_->Stop();
  session_->Wait();
  {
    std::lock_guard lock(watchdog_mutex_);
    ending_ = true;
  }
  watchdog_wake_.notify_all();
  watchdog_.join();
  session_.reset();
  for (uint32_t opcode : log_.Opcodes()) context_.opcodes_seen_.push_back(opcode);
  ::rmdir(root_.c_str());
}

Mounted::~Mounted() { Unmount(); }

CheckContext::CheckContext(std::string_view check, TransportKind transport,
                           const KernelOffer& offer)
    : check_(check), transport_(transport), offer_(offer) {
  result_.check = check_;
  result_.transport = TransportName(transport);
}

std::unique_ptr<Mounted> CheckContext::Mount(Handler& fs, SessionOptions options) {
  std::unique_ptr<Mounted> mount(new Mounted(*this));
  char directory[] = "/tmp/ringfuse-conform.XXXXXX";
  if (::mkdtemp(directory) == nullptr) {
    Fail(absl::StrFormat("mkdtemp: %s", std::strerror(errno)));
    return nullptr;
  }
  mount->root_ = directory;
  options.mount.mountpoint = mount->root_;
  options.transport = transport_;
  options.observer = &mount->log_;
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Start(options, fs);
  if (!session.ok()) {
    ::rmdir(directory);
    Fail(absl::StrFormat("cannot mount: %s", session.status().ToString()));
    return nullptr;
  }
  mount->session_ = *std::move(session);
  mount->watchdog_ = std::thread(&Mounted::Watch, mount.get());
  return mount;
}

bool CheckContext::Expect(bool ok, std::string_view what) {
  if (!ok) Fail(absl::StrFormat("expected: %s", what));
  return ok;
}

namespace {

bool ContainsInOrder(const std::vector<std::string>& seen, const std::vector<std::string>& must) {
  auto next = seen.begin();
  for (const std::string& name : must) {
    const bool prefix = name.ends_with('*');
    const std::string_view stem = prefix ? std::string_view(name).substr(0, name.size() - 1) : name;
    next = std::find_if(next, seen.end(), [&](const std::string& opcode) {
      return prefix ? opcode.starts_with(stem) : opcode == stem;
    });
    if (next == seen.end()) return false;
    ++next;
  }
  return true;
}

}  // namespace

bool CheckContext::ExpectInOrder(std::string_view during, const std::vector<std::string>& seen,
                                 const std::vector<std::string>& must) {
  return Expect(ContainsInOrder(seen, must),
                absl::StrFormat("%s sends %s", during, absl::StrJoin(must, " ")));
}

void CheckContext::Evidence(std::string line) {
  std::lock_guard lock(mutex_);
  result_.evidence.push_back(std::move(line));
}

void CheckContext::Coverage(std::string_view action, std::vector<std::string> opcodes) {
  std::lock_guard lock(mutex_);
  result_.coverage[std::string(action)] = std::move(opcodes);
}

void CheckContext::NotOffered(std::string reason) {
  std::lock_guard lock(mutex_);
  if (result_.outcome == Outcome::kFail) return;
  result_.outcome = Outcome::kNotOffered;
  result_.reason = std::move(reason);
}

void CheckContext::Fail(std::string reason) {
  std::lock_guard lock(mutex_);
  result_.evidence.push_back(reason);
  if (result_.outcome == Outcome::kFail) return;  // the first failure is the reason
  result_.outcome = Outcome::kFail;
  result_.reason = std::move(reason);
}

Result CheckContext::Finish(double seconds) {
  std::lock_guard lock(mutex_);
  result_.seconds = seconds;
  std::sort(opcodes_seen_.begin(), opcodes_seen_.end());
  opcodes_seen_.erase(std::unique(opcodes_seen_.begin(), opcodes_seen_.end()), opcodes_seen_.end());
  return result_;
}

}  // namespace ringfuse::conform
