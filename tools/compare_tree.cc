#include "tools/compare_tree.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/errno_status.h"
#include "base/fd.h"

namespace ringfuse::tools {
namespace {

constexpr size_t kMiB = 1 << 20;

absl::Status WriteAll(int fd, const void* data, size_t size, const std::string& what) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t written = ::write(fd, bytes, size);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return base::ErrnoStatus(errno, what);
    bytes += written;
    size -= static_cast<size_t>(written);
  }
  return absl::OkStatus();
}

absl::Status MakeSmallFiles(const std::string& dir, int files) {
  if (::mkdir(dir.c_str(), 0755) != 0) return base::ErrnoStatus(errno, dir);
  for (int i = 0; i < files; ++i) {
    const std::string path = absl::StrCat(dir, "/", SmallFileName(i));
    base::UniqueFd fd(::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644));
    if (!fd.valid()) return base::ErrnoStatus(errno, path);
    const std::string content = absl::StrCat("small file ", i, "\n");
    if (absl::Status written = WriteAll(fd.get(), content.data(), content.size(), path);
        !written.ok()) {
      return written;
    }
  }
  return absl::OkStatus();
}

// Synced, so that the benchmark's reads can drop it from the page cache (clean pages only).
absl::Status MakeBigFile(const std::string& path, int mib) {
  base::UniqueFd fd(::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644));
  if (!fd.valid()) return base::ErrnoStatus(errno, path);
  std::vector<uint64_t> block(kMiB / sizeof(uint64_t));
  std::mt19937_64 random(42);
  for (int i = 0; i < mib; ++i) {
    for (uint64_t& word : block) word = random();
    if (absl::Status written = WriteAll(fd.get(), block.data(), kMiB, path); !written.ok()) {
      return written;
    }
  }
  if (::fsync(fd.get()) != 0) return base::ErrnoStatus(errno, path);
  return absl::OkStatus();
}

}  // namespace

std::string SmallFileName(int index) { return absl::StrFormat("f%06d", index); }

absl::StatusOr<SourceTree> SourceTree::Create(const std::string& path, int files, int big_file_mib,
                                              int create_dirs) {
  if (::mkdir(path.c_str(), 0755) != 0) return base::ErrnoStatus(errno, path);
  SourceTree tree(path);  // removed again should any step fail
  if (absl::Status made = MakeSmallFiles(path + "/" + kFilesDir, files); !made.ok()) return made;
  if (absl::Status made = MakeBigFile(path + "/" + kBigFile, big_file_mib); !made.ok()) {
    return made;
  }
  for (int i = 0; i < create_dirs; ++i) {
    const std::string dir = absl::StrCat(path, "/", kCreateDirPrefix, i);
    if (::mkdir(dir.c_str(), 0755) != 0) return base::ErrnoStatus(errno, dir);
  }
  return tree;
}

SourceTree::~SourceTree() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace ringfuse::tools
