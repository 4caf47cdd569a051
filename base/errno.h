// The daemon's error convention for calls that fail with an errno. A function that can fail
// returns, by value, an Errno (no error, or the error) or an ErrnoOr<T> (a value, or the error).
// errno is read once, by Errno::Last() right after the call that set it; from there on the error
// travels as a value, so a destructor, a mutex scope or a log line between the failure and the
// answer cannot change what the kernel is answered. Set-up, restore and recovery, whose failures
// a person reads, return absl::Status instead (errno_status.h).
#pragma once

#include <cassert>
#include <cerrno>
#include <cstring>
#include <optional>
#include <ostream>
#include <type_traits>
#include <utility>

#include "base/fd.h"

namespace ringfuse::base {

class [[nodiscard]] Errno {
 public:
  constexpr Errno() = default;  // no error
  constexpr explicit Errno(int value) : value_(value) {}
  // The calling thread's errno, now: call it right after the call that failed.
  static Errno Last() { return Errno(errno); }
  // For a call that returns -1 (or any negative value) and sets errno when it fails.
  static Errno OfCall(long result) { return result < 0 ? Last() : Errno(); }

  constexpr bool ok() const { return value_ == 0; }
  constexpr int value() const { return value_; }
  friend constexpr bool operator==(Errno, Errno) = default;
  // "ENOENT (2)", for logs and test failures.
  friend std::ostream& operator<<(std::ostream& out, Errno error) {
    const char* name = error.ok() ? "no error" : ::strerrorname_np(error.value_);
    return out << (name != nullptr ? name : "errno") << " (" << error.value_ << ")";
  }

 private:
  int value_ = 0;
};

// A T, or the Errno that kept it from being made. An ErrnoOr made from an Errno holds an error:
// making one from Errno() (no error) is a bug, caught by an assertion; where assertions are off
// it holds EIO, so that a request is never answered "done" with nothing made.
template <typename T>
class [[nodiscard]] ErrnoOr {
 public:
  template <typename U = T>
  requires std::is_constructible_v<T, U&&> &&
      (!std::is_same_v<std::decay_t<U>, Errno>)ErrnoOr(U&& value)
      : value_(std::forward<U>(value)) {}  // NOLINT: a value converts, as in StatusOr
  ErrnoOr(Errno error) : error_(error.ok() ? Errno(EIO) : error) {  // NOLINT: so does an error
    assert(!error.ok());
  }

  bool ok() const { return value_.has_value(); }
  Errno error() const { return error_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T&& operator*() && { return *std::move(value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  std::optional<T> value_;
  Errno error_;
};

// For a call that returns a count or another value, or -1 with errno set.
template <typename T>
ErrnoOr<T> ValueOfCall(T result) {
  if (result < 0) return Errno::Last();
  return result;
}

// For a call that returns an fd, or -1 with errno set.
inline ErrnoOr<UniqueFd> FdOfCall(int fd) {
  if (fd < 0) return Errno::Last();
  return UniqueFd(fd);
}

}  // namespace ringfuse::base
