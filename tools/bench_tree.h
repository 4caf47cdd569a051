// The trees ringfuse-bench serves: a temporary directory that removes itself, a plain tree or a
// repository of two identical revisions, and the walk that loads every entry into the kernel's
// caches.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ringfuse::tools {

// A fresh directory under /tmp, removed with everything below it when destroyed. The removal
// never crosses into a mount, so a mount left behind by accident is not emptied.
class TempDir {
 public:
  static absl::StatusOr<TempDir> Create(const std::string& prefix);
  TempDir(TempDir&& other) noexcept;
  TempDir& operator=(TempDir&&) = delete;
  TempDir(const TempDir&) = delete;
  ~TempDir();

  const std::string& path() const { return path_; }

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}

  std::string path_;
};

// One revision's entries as paths relative to its root, each directory before its contents.
struct Tree {
  std::vector<std::string> paths;
  int directories = 0;
  int files = 0;
  int symlinks = 0;
};

inline constexpr const char* kFirstRevision = "r1";
inline constexpr const char* kSecondRevision = "r2";

// Makes `repo`/r1 with `inodes` inodes below its root (directories of about 100 entries, one
// in 20 of them a symlink to a sibling file) and `repo`/r2 with the same tree, its files hard
// links to r1's: same names and content, so only directories and symlinks differ in inode.
absl::StatusOr<Tree> BuildRevisions(const std::string& repo, int inodes);

// Makes the same tree as one revision in the existing empty directory `root`; 0 inodes leaves it
// empty.
absl::StatusOr<Tree> BuildTree(const std::string& root, int inodes);

// lstat() of every entry of `tree` under `root`: each name the kernel does not hold valid in its
// dentry cache costs a LOOKUP.
absl::Status Walk(const std::string& root, const Tree& tree);

}  // namespace ringfuse::tools
