#include "tools/conform/fixture.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "base/fd.h"

namespace ringfuse::conform {

MemFs::Options Cached(uint32_t open_flags) {
  return {.entry = kHour, .attr = kHour, .open_flags = open_flags};
}

MemFs::Options Uncached(uint32_t open_flags) {
  return {.entry = Timeout{0, 0}, .attr = Timeout{0, 0}, .open_flags = open_flags};
}

Tree Populate(MemFs& fs) {
  Tree tree;
  tree.file = fs.AddFile(wire::kRootId, "file", KnownBytes(kFileSize, 'a'));
  tree.dir = fs.AddDir(wire::kRootId, "dir");
  tree.link = fs.AddSymlink(wire::kRootId, "link", "file");
  return tree;
}

std::string KnownBytes(size_t size, char seed) {
  std::string bytes(size, '\0');
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>(seed + i % 23);
  return bytes;
}

std::string Said(long result) {
  if (result >= 0) return "ok";
  const char* name = strerrorname_np(errno);
  return name != nullptr ? name : absl::StrCat("errno ", errno);
}

std::string ReadAt(const std::string& path, size_t size, off_t offset, int open_flags) {
  const base::UniqueFd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | open_flags));
  if (!file.valid()) return absl::StrCat("ERR ", Said(-1));
  std::string bytes(size, '\0');
  const ssize_t got = ::pread(file.get(), bytes.data(), size, offset);
  if (got < 0) return absl::StrCat("ERR ", Said(-1));
  bytes.resize(static_cast<size_t>(got));
  return bytes;
}

uint64_t InodeOf(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

bool WaitUntil(const std::function<bool()>& condition, std::chrono::milliseconds bound) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace ringfuse::conform
