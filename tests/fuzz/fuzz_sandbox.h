// The scratch tree the fuzz targets that serve a directory work in (passthrough_fuzzer.cc, and
// the journal and handover-state fuzzers), and the check that nothing outside it changed.
#pragma once

#include <sched.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <string_view>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace ringfuse::fuzz {

// lstat of `path`, with what a change to it would show, as one line. Access times are left
// out: the snapshot itself reads the files.
inline std::string Describe(const std::filesystem::path& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return absl::StrCat(path.native(), " missing\n");
  std::string line =
      absl::StrCat(path.native(), " mode=", st.st_mode, " uid=", st.st_uid, " gid=", st.st_gid,
                   " size=", st.st_size, " links=", st.st_nlink, " ino=", st.st_ino,
                   " mtime=", st.st_mtim.tv_sec, ".", st.st_mtim.tv_nsec,
                   " ctime=", st.st_ctim.tv_sec, ".", st.st_ctim.tv_nsec);
  if (S_ISLNK(st.st_mode)) {
    absl::StrAppend(&line, " target=", std::filesystem::read_symlink(path).native());
  }
  if (S_ISREG(st.st_mode)) {
    std::ifstream file(path, std::ios::binary);
    absl::StrAppend(&line, " content=", std::string(std::istreambuf_iterator<char>(file), {}));
  }
  char names[1024];
  const ssize_t size = ::llistxattr(path.c_str(), names, sizeof(names));
  if (size > 0) absl::StrAppend(&line, " xattrs=", std::string(names, size));
  return line + "\n";
}

// Everything under `root` (not following symlinks), described in a stable order.
inline std::string Snapshot(const std::filesystem::path& root) {
  std::set<std::string> lines = {Describe(root)};
  std::error_code error;
  for (std::filesystem::recursive_directory_iterator it(root, error), end; !error && it != end;
       it.increment(error)) {
    lines.insert(Describe(it->path()));
  }
  std::string all;
  for (const std::string& line : lines) all += line;
  return all;
}

// BASE/source is served; BASE/canary, beside it, must never change. BASE is a private tmpfs
// (nodev, 64 MiB: a fuzzed FALLOCATE cannot fill the machine's disk) in a mount namespace of
// this thread alone when the fuzzer runs as root, a plain temporary directory otherwise.
class Sandbox {
 public:
  Sandbox() {
    char base[] = "/tmp/ringfuse-fuzz-XXXXXX";
    if (::mkdtemp(base) == nullptr) std::abort();
    base_ = base;
    mounted_ = ::unshare(CLONE_NEWNS) == 0 &&
               ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
               ::mount("ringfuse-fuzz", base, "tmpfs", MS_NODEV | MS_NOSUID | MS_NOEXEC,
                       "size=64m,mode=0755") == 0;
  }
  ~Sandbox() {
    if (mounted_) ::umount2(base_.c_str(), MNT_DETACH);
    std::error_code ignored;
    std::filesystem::remove_all(base_, ignored);
  }
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  std::filesystem::path source() const { return base_ / "source"; }
  std::filesystem::path canary() const { return base_ / "canary"; }

  // A fresh tree: files, a directory, a FIFO, and symlinks that lead out of source (relative
  // and absolute); in the canary, a symlink back into source.
  void Rebuild() {
    namespace fs = std::filesystem;
    std::error_code ignored;
    fs::remove_all(source(), ignored);
    fs::remove_all(canary(), ignored);
    fs::create_directories(source() / "dir" / "nested");
    fs::create_directories(canary() / "dir");
    Write(source() / "file", "hello, world\n");
    Write(source() / "dir" / "inner", "inner\n");
    Write(canary() / "secret", "secret\n");
    Write(canary() / "dir" / "inner", "canary inner\n");
    if (::mkfifo((source() / "fifo").c_str(), 0666) != 0) std::abort();
    fs::create_directory_symlink("../canary", source() / "out");
    fs::create_symlink("../canary/secret", source() / "outfile");
    fs::create_symlink(canary() / "secret", source() / "absolute");
    fs::create_symlink("../source/file", canary() / "into");
    // Any caller may make names in source; none but root in the canary.
    fs::permissions(source(), fs::perms::all);
    fs::permissions(source() / "dir", fs::perms::all);
    snapshot_ = Snapshot(canary()) + Listing();
  }

  void CheckConfined() const {
    if (Snapshot(canary()) + Listing() != snapshot_) std::abort();
  }

 private:
  static void Write(const std::filesystem::path& path, std::string_view text) {
    std::ofstream(path, std::ios::binary) << text;
  }
  // BASE holds source and canary alone: nothing was made or renamed beside them.
  std::string Listing() const {
    std::set<std::string> names;
    for (const std::filesystem::directory_entry& entry :
         std::filesystem::directory_iterator(base_)) {
      names.insert(entry.path().filename());
    }
    return absl::StrCat(names.size(), names.count("source"), names.count("canary"));
  }

  std::filesystem::path base_;
  bool mounted_ = false;
  std::string snapshot_;
};

}  // namespace ringfuse::fuzz
