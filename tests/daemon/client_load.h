// Clients for the tests that replace a daemon under load: each thread stats, lists, reads,
// readlinks, creates and unlinks, and appends with fsync to a log of its own, counting every
// failed call (ESTALE apart) and remembering what it fsync'ed, to be found afterwards.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "base/fd.h"
#include "gtest/gtest.h"
#include "tests/daemon/test_files.h"

namespace ringfuse::daemon {

class MixedLoad {
 public:
  // The tree the clients read, made in SOURCE (the root served).
  static void Prepare(const std::string& source) {
    std::filesystem::create_directories(source + "/tree/sub");
    ringfuse::testing::WriteFile(source + "/tree/sub/data", "data\n");
    ringfuse::testing::WriteFile(source + "/tree/other", "");
    EXPECT_EQ(::symlink("sub/data", (source + "/tree/link").c_str()), 0);
  }

  MixedLoad(const std::string& root, int threads) {
    for (int t = 0; t < threads; ++t) {
      clients_.emplace_back([this, root, t] { Work(root, t); });
    }
  }
  ~MixedLoad() { Finish(); }
  void Finish() {
    done_ = true;
    for (std::thread& client : clients_) {
      if (client.joinable()) client.join();
    }
  }
  int failures() const { return failures_; }
  int estale() const { return estale_; }
  long calls() const { return calls_; }
  const std::string& first_failure() const { return first_failure_; }
  // What each client appended and fsync'ed, to find in its log afterwards.
  const std::vector<std::string>& logged() const { return logged_; }

 private:
  void Fail(const std::string& what) {
    if (errno == ESTALE) ++estale_;
    if (failures_++ == 0) first_failure_ = what + ": " + std::strerror(errno);
  }
  void Work(const std::string& root, int t) {
    const std::string base = root + "/c" + std::to_string(t);
    const base::UniqueFd log(::open((base + ".log").c_str(), O_CREAT | O_WRONLY | O_APPEND, 0644));
    if (!log.valid()) return Fail("open log");
    std::string& logged = logged_[t];
    for (long i = 0; !done_; ++i) {
      struct stat attr;
      if (::stat((root + "/tree/sub/data").c_str(), &attr) != 0) Fail("stat");
      char target[64];
      if (::readlink((root + "/tree/link").c_str(), target, sizeof(target)) != 8) {
        Fail("readlink");
      }
      if (ringfuse::testing::ReadFile(root + "/tree/sub/data") != "data\n") Fail("read");
      if (DIR* dir = ::opendir((root + "/tree").c_str()); dir != nullptr) {
        int entries = 0;
        while (::readdir(dir) != nullptr) ++entries;
        ::closedir(dir);
        if (entries != 5) Fail("readdir");  // sub, other, link, . and ..
      } else {
        Fail("opendir");
      }
      const std::string created = base + "-" + std::to_string(i);
      const int fd = ::open(created.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
      if (fd < 0) {
        Fail("create " + created);
      } else {
        ::close(fd);
        if (::unlink(created.c_str()) != 0) Fail("unlink " + created);
      }
      const std::string line = std::to_string(i) + "\n";
      if (::write(log.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size()) ||
          ::fsync(log.get()) != 0) {
        Fail("append");
      } else {
        logged += line;
      }
      calls_ += 9;
    }
  }

  std::atomic<bool> done_{false};
  std::atomic<int> failures_{0};
  std::atomic<int> estale_{0};
  std::atomic<long> calls_{0};
  std::string first_failure_;
  std::vector<std::string> logged_ = std::vector<std::string>(8);
  std::vector<std::thread> clients_;
};

}  // namespace ringfuse::daemon
