// Coverage: which opcodes each common system call produces, in order, done twice on a fresh mount
// with caching (entries and attributes for an hour) and without (for no time). Each check states
// the opcodes the call must produce; the report keeps the whole sequence, so that `diff` shows a
// kernel that sends more, fewer or others.
#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/fd.h"
#include "tools/conform/check.h"
#include "tools/conform/context.h"
#include "tools/conform/fixture.h"

namespace ringfuse::conform {
namespace {

using Call = std::function<long(Mounted&)>;

struct Coverage {
  std::string_view action;        // what the client does, as the report names it
  Call call;                      // does it once; returns the system call's result
  std::vector<std::string> must;  // the opcodes it must produce, in order, the first time
  bool succeeds = true;           // whether the call must succeed (false: the result is shown)
  uint64_t wish = 0;              // INIT flags to ask for beyond the defaults
};

// `seen` with the requests the kernel sends asynchronously (RELEASE after close, FORGET) moved
// after the others, each group in its order: where they fall among the rest is the scheduler's,
// not the kernel's, and would make two runs on one kernel differ in the report and in `diff`.
std::vector<std::string> AsynchronousLast(std::vector<std::string> seen) {
  std::stable_partition(seen.begin(), seen.end(), [](const std::string& opcode) {
    return opcode != "RELEASE" && opcode != "RELEASEDIR" && opcode != "FORGET" &&
           opcode != "BATCH_FORGET";
  });
  return seen;
}

// Runs `coverage.call` twice, on a fresh mount of the tree with caching and on one without, and
// records the opcodes of each run.
void Cover(CheckContext& context, const Coverage& coverage) {
  for (const bool cached : {true, false}) {
    MemFs fs(cached ? Cached() : Uncached());
    Populate(fs);
    SessionOptions options;
    options.init.flags |= coverage.wish;
    const std::unique_ptr<Mounted> mount = context.Mount(fs, options);
    if (!mount) return;
    mount->log().Settle(std::chrono::milliseconds(50));
    for (const char* run : {"first", "again"}) {
      const size_t mark = mount->log().Mark();
      const long result = coverage.call(*mount);
      const std::string said = Said(result);
      mount->log().Settle(std::chrono::milliseconds(50));
      const std::vector<std::string> seen = mount->log().OpcodesSince(mark);
      const std::string label =
          absl::StrFormat("%s, %s, %s", coverage.action, cached ? "cached" : "uncached", run);
      context.Evidence(absl::StrFormat("%s: %s, %s", label, said, absl::StrJoin(seen, " ")));
      context.Coverage(label, AsynchronousLast(seen));
      if (coverage.succeeds) context.Expect(result >= 0, absl::StrCat(label, " succeeds"));
      if (std::string_view(run) == "first") {
        context.ExpectInOrder(label, seen, coverage.must);
      }
    }
  }
}

// Opens `path` with `flags`, calls `use` with the fd, closes it; the first failure's result.
long WithOpen(const std::string& path, int flags, const std::function<long(int)>& use) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  const long result = use(fd);
  const int saved = errno;
  if (::close(fd) != 0 && result >= 0) return -1;
  errno = saved;
  return result;
}

void Stat(CheckContext& context) {
  Cover(context, {"stat",
                  [](Mounted& m) {
                    struct stat st {};
                    return long{::stat(m.Path("file").c_str(), &st)};
                  },
                  {"LOOKUP"}});
}

void OpenRead(CheckContext& context) {
  Cover(context, {"open, read 4 KiB, close",
                  [](Mounted& m) {
                    char buffer[4096];
                    return WithOpen(m.Path("file"), O_RDONLY, [&](int fd) {
                      return long{::read(fd, buffer, sizeof(buffer))};
                    });
                  },
                  {"OPEN", "READ", "FLUSH", "RELEASE"}});
}

void OpenWrite(CheckContext& context) {
  Cover(context, {"open, write 10 bytes, close",
                  [](Mounted& m) {
                    return WithOpen(m.Path("file"), O_WRONLY,
                                    [](int fd) { return long{::write(fd, "0123456789", 10)}; });
                  },
                  {"OPEN", "WRITE", "FLUSH", "RELEASE"}});
}

void OpenTrunc(CheckContext& context) {
  Cover(context, {"open O_TRUNC, close",
                  [](Mounted& m) {
                    return WithOpen(m.Path("file"), O_WRONLY | O_TRUNC, [](int) { return 0L; });
                  },
                  {"OPEN", "RELEASE"}});
}

void Create(CheckContext& context) {
  Cover(context, {"open O_CREAT a new name, close",
                  [](Mounted& m) {
                    static int serial = 0;
                    return WithOpen(m.Path(absl::StrCat("new", ++serial)), O_CREAT | O_WRONLY,
                                    [](int) { return 0L; });
                  },
                  {"CREATE", "RELEASE"}});
}

void Mmap(CheckContext& context) {
  Cover(context, {"mmap, read a byte, munmap",
                  [](Mounted& m) {
                    return WithOpen(m.Path("file"), O_RDONLY, [](int fd) {
                      void* map = ::mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, 0);
                      if (map == MAP_FAILED) return -1L;
                      const long byte = *static_cast<volatile char*>(map);
                      ::munmap(map, 4096);
                      return byte;
                    });
                  },
                  {"OPEN", "READ"}});
}

void Truncate(CheckContext& context) {
  Cover(context, {"truncate to 100 bytes",
                  [](Mounted& m) { return long{::truncate(m.Path("file").c_str(), 100)}; },
                  {"SETATTR"}});
}

void Chmod(CheckContext& context) {
  Cover(context, {"chmod 0600",
                  [](Mounted& m) { return long{::chmod(m.Path("file").c_str(), 0600)}; },
                  {"SETATTR"}});
}

long RenameWith(Mounted& m, const char* from, const char* to, unsigned flags) {
  return ::renameat2(AT_FDCWD, m.Path(from).c_str(), AT_FDCWD, m.Path(to).c_str(), flags);
}

void Rename(CheckContext& context) {
  Cover(context, {"rename file to other and back",
                  [](Mounted& m) {
                    if (RenameWith(m, "file", "other", 0) != 0) return -1L;
                    return RenameWith(m, "other", "file", 0);
                  },
                  {"RENAME", "RENAME"}});
}

// Onto an existing name the VFS answers EEXIST itself; onto a new one the server is asked.
void RenameNoreplace(CheckContext& context) {
  Cover(context, {"renameat2 RENAME_NOREPLACE to a new name and back",
                  [](Mounted& m) {
                    if (RenameWith(m, "file", "moved", RENAME_NOREPLACE) != 0) return -1L;
                    return RenameWith(m, "moved", "file", RENAME_NOREPLACE);
                  },
                  {"RENAME2", "RENAME2"}});
}

void RenameExchange(CheckContext& context) {
  Cover(context, {"renameat2 RENAME_EXCHANGE",
                  [](Mounted& m) { return RenameWith(m, "file", "link", RENAME_EXCHANGE); },
                  {"RENAME2"}});
}

void RenameWhiteout(CheckContext& context) {
  Cover(context, {"renameat2 RENAME_WHITEOUT",
                  [](Mounted& m) { return RenameWith(m, "file", "moved", RENAME_WHITEOUT); },
                  {},
                  /*succeeds=*/false});
}

void Link(CheckContext& context) {
  Cover(context, {"link file to a new name",
                  [](Mounted& m) {
                    static int serial = 0;
                    return long{::link(m.Path("file").c_str(),
                                       m.Path(absl::StrCat("hard", ++serial)).c_str())};
                  },
                  {"LINK"}});
}

void Symlink(CheckContext& context) {
  Cover(context, {"symlink a new name",
                  [](Mounted& m) {
                    static int serial = 0;
                    return long{::symlink("file", m.Path(absl::StrCat("sym", ++serial)).c_str())};
                  },
                  {"SYMLINK"}});
}

void Readlink(CheckContext& context) {
  Cover(context, {"readlink",
                  [](Mounted& m) {
                    char target[64];
                    return long{::readlink(m.Path("link").c_str(), target, sizeof(target))};
                  },
                  {"LOOKUP", "READLINK"}});
}

void MkdirRmdir(CheckContext& context) {
  Cover(context, {"mkdir, rmdir",
                  [](Mounted& m) {
                    if (::mkdir(m.Path("made").c_str(), 0755) != 0) return -1L;
                    return long{::rmdir(m.Path("made").c_str())};
                  },
                  {"MKDIR", "RMDIR"}});
}

void Mknod(CheckContext& context) {
  Cover(context, {"mkfifo, unlink",
                  [](Mounted& m) {
                    if (::mkfifo(m.Path("fifo").c_str(), 0644) != 0) return -1L;
                    return long{::unlink(m.Path("fifo").c_str())};
                  },
                  {"MKNOD", "UNLINK"}});
}

void Xattrs(CheckContext& context) {
  Cover(context, {"setxattr, getxattr, listxattr, removexattr",
                  [](Mounted& m) {
                    const std::string path = m.Path("file");
                    char buffer[256];
                    if (::setxattr(path.c_str(), "user.conform", "v", 1, 0) != 0) return -1L;
                    if (::getxattr(path.c_str(), "user.conform", buffer, sizeof(buffer)) < 0) {
                      return -1L;
                    }
                    if (::listxattr(path.c_str(), buffer, sizeof(buffer)) < 0) return -1L;
                    return long{::removexattr(path.c_str(), "user.conform")};
                  },
                  {"SETXATTR", "GETXATTR", "LISTXATTR", "REMOVEXATTR"}});
}

void Flock(CheckContext& context) {
  Cover(context, {"flock LOCK_EX, LOCK_UN (FLOCK_LOCKS asked for)",
                  [](Mounted& m) {
                    return WithOpen(m.Path("file"), O_RDONLY, [](int fd) {
                      if (::flock(fd, LOCK_EX) != 0) return -1L;
                      return long{::flock(fd, LOCK_UN)};
                    });
                  },
                  {"OPEN", "SETLK*"},
                  /*succeeds=*/false,
                  wire::init_flag::kFlockLocks});
}

// Both calls are made whatever the first answers: MemFs serves no locks (ENOSYS).
void FcntlLocks(CheckContext& context) {
  Cover(context, {"fcntl F_GETLK, F_SETLK (POSIX_LOCKS asked for)",
                  [](Mounted& m) {
                    return WithOpen(m.Path("file"), O_RDWR, [](int fd) {
                      struct flock lock {};
                      lock.l_type = F_WRLCK;
                      lock.l_whence = SEEK_SET;
                      lock.l_len = 1;
                      struct flock question = lock;
                      const int asked = ::fcntl(fd, F_GETLK, &question);
                      const int taken = ::fcntl(fd, F_SETLK, &lock);
                      return long{asked != 0 ? asked : taken};
                    });
                  },
                  {"OPEN", "GETLK", "SETLK"},
                  /*succeeds=*/false,
                  wire::init_flag::kPosixLocks});
}

void Fallocate(CheckContext& context) {
  Cover(context, {"fallocate 4 KiB",
                  [](Mounted& m) {
                    return WithOpen(m.Path("file"), O_RDWR,
                                    [](int fd) { return long{::fallocate(fd, 0, 0, 4096)}; });
                  },
                  {"OPEN", "FALLOCATE"},
                  /*succeeds=*/false});
}

void CopyFileRange(CheckContext& context) {
  Cover(context, {"copy_file_range 4 KiB to a new file",
                  [](Mounted& m) {
                    static int serial = 0;
                    return WithOpen(m.Path("file"), O_RDONLY, [&](int in) {
                      return WithOpen(
                          m.Path(absl::StrCat("copy", ++serial)), O_CREAT | O_WRONLY, [&](int out) {
                            return long{::copy_file_range(in, nullptr, out, nullptr, 4096, 0)};
                          });
                    });
                  },
                  {"OPEN", "CREATE", "COPY_FILE_RANGE*"},
                  /*succeeds=*/false});
}

void LseekData(CheckContext& context) {
  Cover(context, {"lseek SEEK_DATA, SEEK_HOLE",
                  [](Mounted& m) {
                    return WithOpen(m.Path("file"), O_RDONLY, [](int fd) {
                      if (::lseek(fd, 0, SEEK_DATA) < 0) return -1L;
                      return long{::lseek(fd, 0, SEEK_HOLE)};
                    });
                  },
                  {"OPEN", "LSEEK", "LSEEK"}});
}

void Statx(CheckContext& context) {
  Cover(context, {"statx with STATX_BTIME, AT_STATX_FORCE_SYNC",
                  [](Mounted& m) {
                    struct statx st {};
                    return long{::statx(AT_FDCWD, m.Path("file").c_str(), AT_STATX_FORCE_SYNC,
                                        STATX_BASIC_STATS | STATX_BTIME, &st)};
                  },
                  {"LOOKUP"}});
}

void Ioctl(CheckContext& context) {
  Cover(context, {"ioctl FS_IOC_GETFLAGS",
                  [](Mounted& m) {
                    return WithOpen(m.Path("file"), O_RDONLY, [](int fd) {
                      int flags = 0;
                      return long{::ioctl(fd, FS_IOC_GETFLAGS, &flags)};
                    });
                  },
                  {"OPEN", "IOCTL"},
                  /*succeeds=*/false});
}

void Poll(CheckContext& context) {
  Cover(context, {"poll POLLIN, no wait",
                  [](Mounted& m) {
                    return WithOpen(m.Path("file"), O_RDONLY, [](int fd) {
                      pollfd ready{fd, POLLIN, 0};
                      return long{::poll(&ready, 1, 0)};
                    });
                  },
                  {"OPEN", "POLL"}});
}

void Readdir(CheckContext& context) {
  Cover(context, {"opendir, readdir to the end, closedir",
                  [](Mounted& m) {
                    DIR* dir = ::opendir(m.root().c_str());
                    if (dir == nullptr) return -1L;
                    long entries = 0;
                    while (::readdir(dir) != nullptr) ++entries;
                    ::closedir(dir);
                    return entries;
                  },
                  {"OPENDIR", "READDIR", "RELEASEDIR"}});
}

void Readdirplus(CheckContext& context) {
  Cover(context, {"readdir to the end (DO_READDIRPLUS asked for)",
                  [](Mounted& m) {
                    DIR* dir = ::opendir(m.root().c_str());
                    if (dir == nullptr) return -1L;
                    long entries = 0;
                    while (::readdir(dir) != nullptr) ++entries;
                    ::closedir(dir);
                    return entries;
                  },
                  {"OPENDIR", "READDIRPLUS", "RELEASEDIR"},
                  true,
                  wire::init_flag::kDoReaddirplus});
}

void Fsync(CheckContext& context) {
  Cover(context, {"fsync, fdatasync",
                  [](Mounted& m) {
                    return WithOpen(m.Path("file"), O_RDWR, [](int fd) {
                      if (::fsync(fd) != 0) return -1L;
                      return long{::fdatasync(fd)};
                    });
                  },
                  {"OPEN", "FSYNC", "FSYNC"}});
}

void Fsyncdir(CheckContext& context) {
  Cover(context, {"fsync a directory",
                  [](Mounted& m) {
                    return WithOpen(m.Path("dir"), O_RDONLY | O_DIRECTORY,
                                    [](int fd) { return long{::fsync(fd)}; });
                  },
                  {"OPENDIR", "FSYNCDIR"}});
}

void Syncfs(CheckContext& context) {
  Cover(context, {"syncfs",
                  [](Mounted& m) {
                    return WithOpen(m.Path("file"), O_RDONLY,
                                    [](int fd) { return long{::syncfs(fd)}; });
                  },
                  {"OPEN"}});
}

void Tmpfile(CheckContext& context) {
  Cover(context, {"open O_TMPFILE in a directory",
                  [](Mounted& m) {
                    return WithOpen(m.Path("dir"), O_TMPFILE | O_RDWR, [](int) { return 0L; });
                  },
                  {"TMPFILE"},
                  /*succeeds=*/false});
}

void Statfs(CheckContext& context) {
  Cover(context, {"statfs",
                  [](Mounted& m) {
                    struct statfs st {};
                    return long{::statfs(m.root().c_str(), &st)};
                  },
                  {"STATFS"}});
}

void Access(CheckContext& context) {
  Cover(context, {"access R_OK",
                  [](Mounted& m) { return long{::access(m.Path("file").c_str(), R_OK)}; },
                  {"ACCESS"}});
}

}  // namespace

std::vector<Check> CoverageChecks() {
  constexpr std::string_view kShows = "the opcodes this call produces, in order";
  return {
      {.name = "coverage.access", .summary = kShows, .run = Access},
      {.name = "coverage.chmod", .summary = kShows, .run = Chmod},
      {.name = "coverage.copy_file_range", .summary = kShows, .run = CopyFileRange},
      {.name = "coverage.create", .summary = kShows, .run = Create},
      {.name = "coverage.fallocate", .summary = kShows, .run = Fallocate},
      {.name = "coverage.fcntl_locks",
       .summary = kShows,
       .needs_flags = wire::init_flag::kPosixLocks,
       .run = FcntlLocks},
      {.name = "coverage.flock",
       .summary = kShows,
       .needs_flags = wire::init_flag::kFlockLocks,
       .run = Flock},
      {.name = "coverage.fsync", .summary = kShows, .run = Fsync},
      {.name = "coverage.fsyncdir", .summary = kShows, .run = Fsyncdir},
      {.name = "coverage.ioctl", .summary = kShows, .run = Ioctl},
      {.name = "coverage.link", .summary = kShows, .run = Link},
      {.name = "coverage.lseek_data", .summary = kShows, .run = LseekData},
      {.name = "coverage.mkdir_rmdir", .summary = kShows, .run = MkdirRmdir},
      {.name = "coverage.mknod", .summary = kShows, .run = Mknod},
      {.name = "coverage.mmap", .summary = kShows, .run = Mmap},
      {.name = "coverage.open_read", .summary = kShows, .run = OpenRead},
      {.name = "coverage.open_trunc", .summary = kShows, .run = OpenTrunc},
      {.name = "coverage.open_write", .summary = kShows, .run = OpenWrite},
      {.name = "coverage.poll", .summary = kShows, .run = Poll},
      {.name = "coverage.readdir", .summary = kShows, .run = Readdir},
      {.name = "coverage.readdirplus",
       .summary = kShows,
       .needs_flags = wire::init_flag::kDoReaddirplus,
       .run = Readdirplus},
      {.name = "coverage.readlink", .summary = kShows, .run = Readlink},
      {.name = "coverage.rename", .summary = kShows, .run = Rename},
      {.name = "coverage.rename_exchange", .summary = kShows, .run = RenameExchange},
      {.name = "coverage.rename_noreplace", .summary = kShows, .run = RenameNoreplace},
      {.name = "coverage.rename_whiteout", .summary = kShows, .run = RenameWhiteout},
      {.name = "coverage.stat", .summary = kShows, .run = Stat},
      {.name = "coverage.statfs", .summary = kShows, .run = Statfs},
      {.name = "coverage.statx", .summary = kShows, .run = Statx},
      {.name = "coverage.symlink", .summary = kShows, .run = Symlink},
      {.name = "coverage.syncfs", .summary = kShows, .run = Syncfs},
      {.name = "coverage.tmpfile", .summary = kShows, .run = Tmpfile},
      {.name = "coverage.truncate", .summary = kShows, .run = Truncate},
      {.name = "coverage.xattrs", .summary = kShows, .run = Xattrs},
  };
}

}  // namespace ringfuse::conform
