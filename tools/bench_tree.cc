#include "tools/bench_tree.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/errno_status.h"
#include "base/fd.h"

namespace ringfuse::tools {
namespace {

constexpr int kEntriesPerDirectory = 100;
constexpr int kSymlinkEvery = 20;

int RemoveOne(const char* path, const struct stat*, int type, struct FTW*) {
  if (type == FTW_DP) {
    ::rmdir(path);
  } else {
    ::unlink(path);
  }
  return 0;
}

// The entry `index` of a directory: a symlink to the file before it, or an empty file.
bool IsSymlink(int index) { return index % kSymlinkEvery == kSymlinkEvery / 2; }

std::string EntryName(int index) {
  return absl::StrFormat("%c%03d", IsSymlink(index) ? 'l' : 'f', index);
}

// The entry `path` in every root: made in the first, hard-linked (files) or made alike (symlinks)
// in the others.
absl::Status MakeEntry(const std::vector<std::string>& roots, const std::string& path, int index) {
  if (IsSymlink(index)) {
    const std::string target = EntryName(index - 1);
    for (const std::string& root : roots) {
      const std::string link = root + "/" + path;
      if (::symlink(target.c_str(), link.c_str()) != 0) return base::ErrnoStatus(errno, link);
    }
    return absl::OkStatus();
  }
  const std::string first = roots.front() + "/" + path;
  base::UniqueFd file(::open(first.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644));
  if (!file.valid()) return base::ErrnoStatus(errno, first);
  for (size_t r = 1; r < roots.size(); ++r) {
    const std::string other = roots[r] + "/" + path;
    if (::link(first.c_str(), other.c_str()) != 0) return base::ErrnoStatus(errno, other);
  }
  return absl::OkStatus();
}

absl::Status MakeDirectory(const std::vector<std::string>& roots, const std::string& path) {
  for (const std::string& root : roots) {
    const std::string full = root + "/" + path;
    if (::mkdir(full.c_str(), 0755) != 0) return base::ErrnoStatus(errno, full);
  }
  return absl::OkStatus();
}

// The same tree of `inodes` inodes in each of `roots`, which exist and are empty.
absl::StatusOr<Tree> BuildInto(const std::vector<std::string>& roots, int inodes) {
  Tree tree;
  if (inodes == 0) return tree;
  // Each directory counts as one inode along with its entries.
  tree.directories = std::max(1, (inodes + kEntriesPerDirectory / 2) / (kEntriesPerDirectory + 1));
  const int entries = inodes - tree.directories;
  for (int d = 0; d < tree.directories; ++d) {
    const std::string directory = absl::StrFormat("d%02d", d);
    if (absl::Status status = MakeDirectory(roots, directory); !status.ok()) return status;
    tree.paths.push_back(directory);
    // Entries spread evenly: the first directories take one more when they do not divide.
    const int here = entries / tree.directories + (d < entries % tree.directories ? 1 : 0);
    for (int i = 0; i < here; ++i) {
      const std::string path = directory + "/" + EntryName(i);
      if (absl::Status status = MakeEntry(roots, path, i); !status.ok()) return status;
      tree.paths.push_back(path);
      ++(IsSymlink(i) ? tree.symlinks : tree.files);
    }
  }
  return tree;
}

}  // namespace

absl::StatusOr<TempDir> TempDir::Create(const std::string& prefix) {
  std::string path = absl::StrFormat("/tmp/%s.XXXXXX", prefix);
  if (::mkdtemp(path.data()) == nullptr) return base::ErrnoStatus(errno, "mkdtemp in /tmp");
  return TempDir(std::move(path));
}

TempDir::TempDir(TempDir&& other) noexcept : path_(std::exchange(other.path_, {})) {}

TempDir::~TempDir() {
  if (!path_.empty()) ::nftw(path_.c_str(), RemoveOne, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

absl::StatusOr<Tree> BuildRevisions(const std::string& repo, int inodes) {
  const std::vector<std::string> roots = {repo + "/" + kFirstRevision,
                                          repo + "/" + kSecondRevision};
  for (const std::string& root : roots) {
    if (::mkdir(root.c_str(), 0755) != 0) return base::ErrnoStatus(errno, root);
  }
  return BuildInto(roots, inodes);
}

absl::StatusOr<Tree> BuildTree(const std::string& root, int inodes) {
  return BuildInto({root}, inodes);
}

absl::Status Walk(const std::string& root, const Tree& tree) {
  struct stat st;
  for (const std::string& path : tree.paths) {
    const std::string full = root + "/" + path;
    if (::lstat(full.c_str(), &st) != 0) return base::ErrnoStatus(errno, full);
  }
  return absl::OkStatus();
}

}  // namespace ringfuse::tools
