// Temporary directories and whole-file reads and writes, for the daemon's tests.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "gtest/gtest.h"

namespace ringfuse::testing {

// A fresh directory <parent>/<prefix>.XXXXXX, removed with everything in it when this goes.
// Removal descends into any directory below, a mountpoint included, so a mount inside must be
// gone first: a fixture unmounts in TearDown, or declares its TempDir before what it mounts
// (members go in reverse order).
class TempDir {
 public:
  explicit TempDir(std::string_view prefix, std::string_view parent = "/tmp") {
    std::string name = std::string(parent) + "/" + std::string(prefix) + ".XXXXXX";
    if (::mkdtemp(name.data()) != nullptr) path_ = std::move(name);
  }
  ~TempDir() {
    if (path_.empty()) return;
    // A destructor may not throw, so what is left behind fails the test instead.
    std::error_code error;
    std::filesystem::remove_all(path_, error);
    EXPECT_FALSE(error) << "removing " << path_ << ": " << error.message();
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // Empty when mkdtemp failed, with errno saying why.
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// What `path` holds; empty when it cannot be read.
inline std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), {});
}

// Creates or truncates `path` to hold `text`. A failure is not reported here: the test sees it
// in what it reads back.
inline void WriteFile(const std::string& path, std::string_view text) {
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace ringfuse::testing
