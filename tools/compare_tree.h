// The source tree each config of ringfuse-bench compare serves, made fresh for every round and
// config so that no config inherits another's caches or leftovers:
//   files/f000000 ...   --files small files of a few bytes, in one directory
//   big                 --big-file-mib MiB of pseudo-random data (not zeros, which a filesystem
//                       could store sparse), written through and synced
//   create0/ create1/   one directory per create+unlink thread, as many as the most threads
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ringfuse::tools {

inline constexpr const char* kFilesDir = "files";
inline constexpr const char* kBigFile = "big";
inline constexpr const char* kCreateDirPrefix = "create";

// The name of small file `index` in kFilesDir.
std::string SmallFileName(int index);

class SourceTree {
 public:
  static absl::StatusOr<SourceTree> Create(const std::string& path, int files, int big_file_mib,
                                           int create_dirs);
  SourceTree(SourceTree&& other) noexcept : path_(std::exchange(other.path_, "")) {}
  SourceTree& operator=(SourceTree&&) = delete;
  SourceTree(const SourceTree&) = delete;
  ~SourceTree();  // removes the whole tree

  const std::string& path() const { return path_; }

 private:
  explicit SourceTree(std::string path) : path_(std::move(path)) {}

  std::string path_;  // empty once moved from
};

}  // namespace ringfuse::tools
