// Temporary directories and whole-file reads and writes, for the daemon's tests.
#pragma once

#include <stdlib.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

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

// Whether the file at `path` holds `needle`, read in blocks: a byte-by-byte read of an 80 MB
// sanitized binary took 40 s.
inline bool FileContains(const std::string& path, std::string_view needle) {
  std::ifstream file(path, std::ios::binary);
  std::string window;  // the last needle.size() - 1 bytes of the block before, then a block
  std::vector<char> block(1 << 20);
  while (file.read(block.data(), static_cast<std::streamsize>(block.size())) || file.gcount() > 0) {
    window.append(block.data(), static_cast<size_t>(file.gcount()));
    if (window.find(needle) != std::string::npos) return true;
    if (window.size() >= needle.size()) window.erase(0, window.size() - needle.size() + 1);
  }
  return false;
}

// Creates or truncates `path` to hold `text`. A failure is not reported here: the test sees it
// in what it reads back.
inline void WriteFile(const std::string& path, std::string_view text) {
  std::ofstream(path, std::ios::binary) << text;
}

// An access ACL in the kernel's xattr form (system.posix_acl_access): a version, then entries
// of tag, permissions and id. Tags: 1 owner, 2 named user, 4 owning group, 8 named group,
// 0x10 mask, 0x20 other.
struct AclEntry {
  uint16_t tag, perm;
  uint32_t id;
};
inline constexpr uint16_t kAclUserObj = 1, kAclUser = 2, kAclGroupObj = 4, kAclGroup = 8,
                          kAclMask = 0x10, kAclOther = 0x20;
inline constexpr uint32_t kAclNoId = ~0u;
inline std::string AclXattr(const std::vector<AclEntry>& entries) {
  std::string acl(4 + 8 * entries.size(), '\0');
  const uint32_t version = 2;
  std::memcpy(acl.data(), &version, 4);
  for (size_t i = 0; i < entries.size(); ++i) std::memcpy(acl.data() + 4 + 8 * i, &entries[i], 8);
  return acl;
}

// A file's mode 0644 with one more entry: `group` may do nothing (the mode's group bits show
// the mask, r).
inline std::string AclDenyingGroup(uint32_t group) {
  return AclXattr({{kAclUserObj, 6, kAclNoId},
                   {kAclGroupObj, 4, kAclNoId},
                   {kAclGroup, 0, group},
                   {kAclMask, 4, kAclNoId},
                   {kAclOther, 4, kAclNoId}});
}

}  // namespace ringfuse::testing
