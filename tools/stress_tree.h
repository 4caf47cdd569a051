// The tree ringfuse-bench stress serves, made in a new temporary directory and removed with it:
//   TOP/d/f000000 ...   --files small files, of 8 bytes to 4 KiB each
// Each file's size and bytes follow from its index alone, so that a thread can check a READ's
// answer without sharing anything with the others.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "ringfuse/bytes.h"

namespace ringfuse::tools {

class StressTree {
 public:
  static constexpr const char* kDir = "d";
  static constexpr size_t kLargestFile = 4096;

  // A new directory in `parent` holding kDir with `files` files.
  static absl::StatusOr<StressTree> Create(const std::string& parent, int files);
  StressTree(StressTree&& other) noexcept
      : path_(std::exchange(other.path_, "")), files_(other.files_) {}
  StressTree& operator=(StressTree&&) = delete;
  StressTree(const StressTree&) = delete;
  ~StressTree();  // removes the whole tree

  const std::string& path() const { return path_; }
  int files() const { return files_; }

  static std::string FileName(int index);
  static size_t FileSize(int index);
  // Whether `bytes` are file `index`'s whole contents.
  static bool HoldsContents(int index, ConstBytes bytes);

 private:
  StressTree(std::string path, int files) : path_(std::move(path)), files_(files) {}

  std::string path_;  // empty once moved from
  int files_ = 0;
};

}  // namespace ringfuse::tools
