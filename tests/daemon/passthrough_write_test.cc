// The passthrough daemon read-write through a real mount, over every transport: each operation
// done through the mount, and what SOURCE then holds.
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "tests/daemon/child_process.h"
#include "tests/daemon/passthrough_fixture.h"
#include "tests/daemon/test_files.h"

namespace ringfuse::daemon {
namespace {

using ringfuse::testing::ReadFile;
using ringfuse::testing::WriteFile;

using PassthroughWrite = MountedPassthroughTest;

// F_SETLK or F_SETLKW (`command`) of `type` on [start, start + length) through a new open of
// `path`: 0 or the errno.
int OpenAndLock(const std::string& path, int command, short type = F_WRLCK, off_t start = 0,
                off_t length = 0) {
  const int fd = ::open(path.c_str(), type == F_RDLCK ? O_RDONLY : O_RDWR);
  if (fd < 0) return errno;
  struct flock wanted {};
  wanted.l_type = type;
  wanted.l_start = start;
  wanted.l_len = length;
  return ::fcntl(fd, command, &wanted) == 0 ? 0 : errno;
}

// A child that takes a write lock on all of `path` and holds it until it is killed (when the
// Child goes); returns once this process sees the lock held.
std::unique_ptr<Child> HoldWriteLock(const std::string& path) {
  auto holder = std::make_unique<Child>([&path] {
    if (const int error = OpenAndLock(path, F_SETLK); error != 0) return error;
    ::pause();
    return 0;
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    struct flock probe {};
    probe.l_type = F_RDLCK;
    const bool locked = ::fcntl(fd, F_GETLK, &probe) == 0 && probe.l_type == F_WRLCK;
    ::close(fd);
    if (locked) return holder;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ADD_FAILURE() << "the holder never took its lock";
  return holder;
}

TEST_P(PassthroughWrite, CreateWriteAndTruncateReachTheSource) {
  const int fd = ::open(Mounted("new").c_str(), O_CREAT | O_EXCL | O_RDWR, 0640);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_EQ(::pwrite(fd, "hello world", 11, 0), 11);
  EXPECT_EQ(ReadFile(Source("new")), "hello world");
  EXPECT_EQ(Lstat(Source("new")).st_mode & 07777, 0640u);
  ASSERT_EQ(::ftruncate(fd, 5), 0) << std::strerror(errno);
  EXPECT_EQ(ReadFile(Source("new")), "hello");
  ASSERT_EQ(::fsync(fd), 0);
  ASSERT_EQ(::fdatasync(fd), 0);
  ::close(fd);
  EXPECT_EQ(ErrnoOf(::open(Mounted("new").c_str(), O_CREAT | O_EXCL | O_WRONLY, 0600)), EEXIST);
  const int truncating = ::open(Mounted("new").c_str(), O_WRONLY | O_TRUNC);
  ASSERT_GE(truncating, 0) << std::strerror(errno);
  ::close(truncating);
  EXPECT_EQ(Lstat(Source("new")).st_size, 0);
  ASSERT_EQ(::truncate(Mounted("new").c_str(), 4096), 0) << std::strerror(errno);
  EXPECT_EQ(Lstat(Source("new")).st_size, 4096);
}

TEST_P(PassthroughWrite, ModeOwnerAndTimesReachTheSource) {
  WriteFile(Source("file"), "x");
  ASSERT_EQ(::chmod(Mounted("file").c_str(), 04751), 0) << std::strerror(errno);
  EXPECT_EQ(Lstat(Source("file")).st_mode & 07777, 04751u);
  ASSERT_EQ(::chown(Mounted("file").c_str(), 1234, 5678), 0) << std::strerror(errno);
  EXPECT_EQ(Lstat(Source("file")).st_uid, 1234u);
  EXPECT_EQ(Lstat(Source("file")).st_gid, 5678u);
  EXPECT_EQ(Lstat(Source("file")).st_mode & 07777, 0751u) << "chown clears set-user-ID";
  ASSERT_EQ(::lchown(Mounted("file").c_str(), -1, 42), 0);
  EXPECT_EQ(Lstat(Source("file")).st_uid, 1234u) << "an omitted owner stays";

  const timespec given[2] = {{1000, 5}, {2000, 7}};
  ASSERT_EQ(::utimensat(AT_FDCWD, Mounted("file").c_str(), given, 0), 0) << std::strerror(errno);
  struct stat st = Lstat(Source("file"));
  EXPECT_EQ(st.st_atim.tv_sec, 1000);
  EXPECT_EQ(st.st_atim.tv_nsec, 5);
  EXPECT_EQ(st.st_mtim.tv_sec, 2000);
  const timespec now_and_omit[2] = {{0, UTIME_NOW}, {0, UTIME_OMIT}};
  ASSERT_EQ(::utimensat(AT_FDCWD, Mounted("file").c_str(), now_and_omit, 0), 0);
  st = Lstat(Source("file"));
  EXPECT_GT(st.st_atim.tv_sec, 1'600'000'000) << "UTIME_NOW";
  EXPECT_EQ(st.st_mtim.tv_sec, 2000) << "UTIME_OMIT";
}

TEST_P(PassthroughWrite, DirectoriesSymlinksNodesAndLinks) {
  ASSERT_EQ(::mkdir(Mounted("dir").c_str(), 0750), 0) << std::strerror(errno);
  EXPECT_TRUE(S_ISDIR(Lstat(Source("dir")).st_mode));
  EXPECT_EQ(Lstat(Source("dir")).st_mode & 07777, 0750u);
  ASSERT_EQ(::symlink("../elsewhere", Mounted("dir/link").c_str()), 0) << std::strerror(errno);
  EXPECT_EQ(std::filesystem::read_symlink(Source("dir/link")), "../elsewhere");
  ASSERT_EQ(::mkfifo(Mounted("dir/fifo").c_str(), 0600), 0) << std::strerror(errno);
  EXPECT_TRUE(S_ISFIFO(Lstat(Source("dir/fifo")).st_mode));
  ASSERT_EQ(::mknod(Mounted("dir/socket").c_str(), S_IFSOCK | 0600, 0), 0) << std::strerror(errno);
  EXPECT_TRUE(S_ISSOCK(Lstat(Source("dir/socket")).st_mode));
  ASSERT_EQ(::mknod(Mounted("dir/null").c_str(), S_IFCHR | 0600, makedev(1, 3)), 0);
  EXPECT_EQ(Lstat(Source("dir/null")).st_rdev, makedev(1, 3));

  WriteFile(Mounted("dir/file"), "linked");
  ASSERT_EQ(::link(Mounted("dir/file").c_str(), Mounted("hard").c_str()), 0)
      << std::strerror(errno);
  EXPECT_EQ(Lstat(Mounted("hard")).st_ino, Lstat(Mounted("dir/file")).st_ino) << "one node";
  EXPECT_EQ(Lstat(Mounted("hard")).st_nlink, 2u);
  EXPECT_EQ(Lstat(Source("hard")).st_ino, Lstat(Source("dir/file")).st_ino);
  ASSERT_EQ(::link(Mounted("dir/link").c_str(), Mounted("link2").c_str()), 0);
  EXPECT_TRUE(S_ISLNK(Lstat(Source("link2")).st_mode)) << "a symlink is linked, not its target";

  EXPECT_EQ(ErrnoOf(::rmdir(Mounted("dir").c_str())), ENOTEMPTY);
  for (const char* name : {"dir/link", "dir/fifo", "dir/socket", "dir/null", "dir/file"}) {
    ASSERT_EQ(::unlink(Mounted(name).c_str()), 0) << name << ": " << std::strerror(errno);
  }
  ASSERT_EQ(::rmdir(Mounted("dir").c_str()), 0) << std::strerror(errno);
  EXPECT_FALSE(std::filesystem::exists(Source("dir")));
  EXPECT_EQ(Lstat(Mounted("hard")).st_nlink, 1u);
  EXPECT_EQ(ReadFile(Mounted("hard")), "linked");
}

TEST_P(PassthroughWrite, RenamePlainNoreplaceAndExchange) {
  WriteFile(Mounted("a"), "A");
  WriteFile(Mounted("b"), "B");
  ASSERT_EQ(::mkdir(Mounted("d").c_str(), 0755), 0);
  ASSERT_EQ(::renameat2(AT_FDCWD, Mounted("a").c_str(), AT_FDCWD, Mounted("d/a").c_str(), 0), 0);
  EXPECT_EQ(ReadFile(Source("d/a")), "A");
  EXPECT_FALSE(std::filesystem::exists(Source("a")));
  EXPECT_EQ(ErrnoOf(::renameat2(AT_FDCWD, Mounted("d/a").c_str(), AT_FDCWD, Mounted("b").c_str(),
                                RENAME_NOREPLACE)),
            EEXIST);
  EXPECT_EQ(ReadFile(Source("b")), "B");
  ASSERT_EQ(::renameat2(AT_FDCWD, Mounted("d/a").c_str(), AT_FDCWD, Mounted("b").c_str(),
                        RENAME_EXCHANGE),
            0)
      << std::strerror(errno);
  EXPECT_EQ(ReadFile(Source("b")), "A");
  EXPECT_EQ(ReadFile(Source("d/a")), "B");
  EXPECT_EQ(ReadFile(Mounted("b")), "A");
  ASSERT_EQ(::rename(Mounted("d/a").c_str(), Mounted("b").c_str()), 0) << "replacing";
  EXPECT_EQ(ReadFile(Source("b")), "B");
}

TEST_P(PassthroughWrite, ExtendedAttributes) {
  WriteFile(Mounted("file"), "x");
  const std::string path = Mounted("file");
  ASSERT_EQ(::setxattr(path.c_str(), "user.color", "blue", 4, XATTR_CREATE), 0)
      << std::strerror(errno);
  EXPECT_EQ(ErrnoOf(::setxattr(path.c_str(), "user.color", "red", 3, XATTR_CREATE)), EEXIST);
  EXPECT_EQ(::getxattr(path.c_str(), "user.color", nullptr, 0), 4) << "a size probe";
  char value[16] = {};
  EXPECT_EQ(::getxattr(Source("file").c_str(), "user.color", value, sizeof(value)), 4);
  EXPECT_EQ(std::string(value, 4), "blue");
  EXPECT_EQ(ErrnoOf(::getxattr(path.c_str(), "user.color", value, 2)), ERANGE);
  char names[64] = {};
  const ssize_t listed = ::listxattr(path.c_str(), names, sizeof(names));
  EXPECT_EQ(listed, ::listxattr(path.c_str(), nullptr, 0));
  EXPECT_EQ(std::string(names, static_cast<size_t>(listed)), std::string("user.color\0", 11));
  ASSERT_EQ(::removexattr(path.c_str(), "user.color"), 0);
  EXPECT_EQ(ErrnoOf(::getxattr(Source("file").c_str(), "user.color", value, sizeof(value))),
            ENODATA);
}

TEST_P(PassthroughWrite, HolesFallocateAndCopyFileRange) {
  const int fd = ::open(Mounted("sparse").c_str(), O_CREAT | O_RDWR, 0600);
  ASSERT_GE(fd, 0);
  const std::string block(65536, 'z');
  ASSERT_EQ(::pwrite(fd, block.data(), block.size(), 0), 65536);
  ASSERT_EQ(::pwrite(fd, block.data(), block.size(), 1 << 20), 65536);
  ASSERT_EQ(::fsync(fd), 0);
  EXPECT_EQ(::lseek(fd, 0, SEEK_HOLE), 65536);
  EXPECT_EQ(::lseek(fd, 65536, SEEK_DATA), 1 << 20);

  const blkcnt_t before = Lstat(Source("sparse")).st_blocks;
  ASSERT_EQ(::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 65536), 0)
      << std::strerror(errno);
  EXPECT_LT(Lstat(Source("sparse")).st_blocks, before);
  EXPECT_EQ(ReadFile(Source("sparse")).substr(0, 65536), std::string(65536, '\0'));
  ASSERT_EQ(::fallocate(fd, FALLOC_FL_KEEP_SIZE, 4 << 20, 65536), 0);
  EXPECT_EQ(Lstat(Source("sparse")).st_size, (1 << 20) + 65536) << "KEEP_SIZE";
  ASSERT_EQ(::fallocate(fd, 0, 0, 8 << 20), 0);
  EXPECT_EQ(Lstat(Source("sparse")).st_size, 8 << 20);

  const int out = ::open(Mounted("copy").c_str(), O_CREAT | O_RDWR, 0600);
  ASSERT_GE(out, 0);
  loff_t in_offset = 1 << 20, out_offset = 10;
  EXPECT_EQ(::copy_file_range(fd, &in_offset, out, &out_offset, 1000, 0), 1000)
      << std::strerror(errno);
  ::close(out);
  ::close(fd);
  EXPECT_EQ(ReadFile(Source("copy")), std::string(10, '\0') + std::string(1000, 'z'));
}

TEST_P(PassthroughWrite, FlockConflictsBetweenProcesses) {
  WriteFile(Mounted("locked"), "x");
  const int fd = ::open(Mounted("locked").c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0) << std::strerror(errno);
  const std::string path = Mounted("locked");
  auto try_lock = [&path] {
    const int other = ::open(path.c_str(), O_RDWR);
    return ::flock(other, LOCK_EX | LOCK_NB) == 0 ? 0 : errno;
  };
  EXPECT_EQ(RunInChild(try_lock), EWOULDBLOCK);
  Child waiter([&path] {
    const int other = ::open(path.c_str(), O_RDWR);
    return ::flock(other, LOCK_EX) == 0 ? 0 : errno;
  });
  ASSERT_TRUE(AwaitLockWaits(1));
  ASSERT_EQ(::flock(fd, LOCK_UN), 0);
  EXPECT_EQ(waiter.Join(), 0) << "the blocked flock is granted once the holder lets go";
  ::close(fd);
  EXPECT_EQ(RunInChild(try_lock), 0);
}

TEST_P(PassthroughWrite, PosixLocksConflictBetweenProcessesAndGoAtClose) {
  WriteFile(Mounted("locked"), std::string(100, 'x'));
  const std::string path = Mounted("locked");
  const int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_start = 10;
  lock.l_len = 20;
  ASSERT_EQ(::fcntl(fd, F_SETLK, &lock), 0) << std::strerror(errno);

  // A child sharing this very open file is another lock owner, and conflicts too.
  auto probe = [fd](off_t start, short type) {
    struct flock wanted {};
    wanted.l_type = type;
    wanted.l_start = start;
    wanted.l_len = 5;
    if (::fcntl(fd, F_GETLK, &wanted) != 0) return 100;
    if (wanted.l_type == F_UNLCK) return 0;
    if (wanted.l_type != F_WRLCK || wanted.l_start != 10 || wanted.l_len != 20) return 101;
    return ::fcntl(fd, F_SETLK, &wanted) == 0 ? 102 : errno;
  };
  EXPECT_EQ(RunInChild([&] { return probe(12, F_RDLCK); }, fd), EAGAIN);
  EXPECT_EQ(RunInChild([&] { return probe(30, F_WRLCK); }, fd), 0) << "past the locked range";
  EXPECT_EQ(RunInChild([&] { return OpenAndLock(path, F_SETLK); }), EAGAIN);

  Child waiter([&] { return OpenAndLock(path, F_SETLKW); });
  ASSERT_TRUE(AwaitLockWaits(1));
  const int other_fd = ::open(path.c_str(), O_RDONLY);
  ::close(other_fd);  // closing any fd of the file drops this process's locks (POSIX)
  EXPECT_EQ(waiter.Join(), 0) << "the waiting F_SETLKW is granted after the close";
  ::close(fd);
}

// Natively a lock granted to a waiting thread after another thread of its process closed an fd
// of the file is held: the close released only the locks held before it.
TEST_P(PassthroughWrite, AWaitGrantedAfterACloseOfTheSameOwnerIsHeld) {
  WriteFile(Mounted("locked"), "x");
  const std::string path = Mounted("locked");
  std::unique_ptr<Child> holder = HoldWriteLock(path);
  ASSERT_FALSE(HasFailure());
  const int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  std::atomic<int> waited{-1};
  std::thread waiter([&] {
    struct flock wanted {};
    wanted.l_type = F_WRLCK;
    waited = ::fcntl(fd, F_SETLKW, &wanted) == 0 ? 0 : errno;
  });
  ASSERT_TRUE(AwaitLockWaits(1)) << "the waiter never blocked";
  ::close(::open(path.c_str(), O_RDONLY));  // this process's FLUSH, during the wait
  holder.reset();
  waiter.join();
  ASSERT_EQ(waited, 0) << std::strerror(waited);
  EXPECT_EQ(RunInChild([&] { return OpenAndLock(path, F_SETLK); }), EAGAIN)
      << "the lock granted after the close is held";
  ::close(fd);
  EXPECT_EQ(RunInChild([&] { return OpenAndLock(path, F_SETLK); }), 0);
  EXPECT_EQ(fs_->counts().lock_owner_opens, 0u) << "every owner's open closed with its last close";
}

// A waiting caller killed is answered at once, while the lock is still held: it does not sit in
// D state until the lock comes free.
TEST_P(PassthroughWrite, AKilledWaiterGoesWhileTheLockIsHeld) {
  WriteFile(Mounted("locked"), "x");
  const std::string path = Mounted("locked");
  std::unique_ptr<Child> holder = HoldWriteLock(path);
  ASSERT_FALSE(HasFailure());
  Child waiter([&] { return OpenAndLock(path, F_SETLKW); });
  ASSERT_TRUE(AwaitLockWaits(1)) << "the waiter never blocked";
  ASSERT_EQ(::kill(waiter.pid(), SIGKILL), 0);
  const std::optional<int> status = waiter.Wait(std::chrono::seconds(2));
  ASSERT_TRUE(status.has_value()) << "the killed waiter is still there";
  EXPECT_TRUE(WIFSIGNALED(*status));
  EXPECT_TRUE(AwaitLockWaits(0));
  EXPECT_EQ(RunInChild([&] { return OpenAndLock(path, F_SETLK); }), EAGAIN) << "still held";
}

// The daemon's open for a read lock is read-only: SOURCE's executable still runs, as it does
// natively while a read lock is held. A write lock of the same process, through a writable
// open, still works, and the read lock taken before stays.
TEST_P(PassthroughWrite, AReadLockMakesTheDaemonNoWriter) {
  std::filesystem::copy_file("/bin/true", Source("prog"));
  const std::string path = Mounted("prog");
  const int reading = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(reading, 0) << std::strerror(errno);
  struct flock read_lock {};
  read_lock.l_type = F_RDLCK;
  read_lock.l_len = 10;
  ASSERT_EQ(::fcntl(reading, F_SETLK, &read_lock), 0) << std::strerror(errno);
  const std::string program = Source("prog");
  auto run = [&program] {
    ::execl(program.c_str(), "prog", nullptr);
    return errno;
  };
  EXPECT_EQ(RunInChild(run), 0) << "ETXTBSY is 26";

  const int writing = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(writing, 0) << std::strerror(errno);
  struct flock write_lock {};
  write_lock.l_type = F_WRLCK;
  write_lock.l_start = 20;
  write_lock.l_len = 10;
  EXPECT_EQ(::fcntl(writing, F_SETLK, &write_lock), 0) << std::strerror(errno);
  EXPECT_EQ(RunInChild([&] { return OpenAndLock(path, F_SETLK, F_WRLCK, 5, 1); }), EAGAIN)
      << "the read lock is carried over";
  EXPECT_EQ(RunInChild([&] { return OpenAndLock(path, F_SETLK, F_RDLCK, 25, 1); }), EAGAIN);
  EXPECT_EQ(RunInChild([&] { return OpenAndLock(path, F_SETLK, F_WRLCK, 40, 1); }), 0);
  ::close(writing);
  ::close(reading);
}

TEST_P(PassthroughWrite, TmpfileStatxAndAccess) {
  const int fd = ::open(mount_->root().c_str(), O_TMPFILE | O_RDWR, 0600);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_EQ(::write(fd, "anonymous", 9), 9);
  ASSERT_EQ(std::distance(std::filesystem::directory_iterator(source_), {}), 0)
      << "an O_TMPFILE has no name in SOURCE";
  const std::string proc = "/proc/self/fd/" + std::to_string(fd);
  ASSERT_EQ(::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, Mounted("named").c_str(), AT_SYMLINK_FOLLOW),
            0)
      << std::strerror(errno);
  ::close(fd);
  EXPECT_EQ(ReadFile(Source("named")), "anonymous");

  struct statx through_mount {
  }, in_source{};
  ASSERT_EQ(::statx(AT_FDCWD, Mounted("named").c_str(), 0, STATX_BASIC_STATS | STATX_BTIME,
                    &through_mount),
            0);
  ASSERT_EQ(
      ::statx(AT_FDCWD, Source("named").c_str(), 0, STATX_BASIC_STATS | STATX_BTIME, &in_source),
      0);
  EXPECT_TRUE(through_mount.stx_mask & STATX_BTIME) << "the birth time comes through";
  EXPECT_EQ(through_mount.stx_btime.tv_sec, in_source.stx_btime.tv_sec);
  EXPECT_EQ(through_mount.stx_btime.tv_nsec, in_source.stx_btime.tv_nsec);
  EXPECT_EQ(through_mount.stx_ino, in_source.stx_ino);
  EXPECT_EQ(::access(Mounted("named").c_str(), R_OK | W_OK), 0);
  EXPECT_EQ(ErrnoOf(::access(Mounted("named").c_str(), X_OK)), EACCES);
  const int dir = ::open(mount_->root().c_str(), O_RDONLY | O_DIRECTORY);
  EXPECT_EQ(::fsync(dir), 0) << std::strerror(errno);
  ::close(dir);
}

// A mount torn down under open files gets no RELEASE for them: their handles go with the
// filesystem (AddressSanitizer's leak check at exit would name any left behind).
TEST_P(PassthroughWrite, HandlesTheKernelNeverReleasedGoWithTheFilesystem) {
  Mount();
  WriteFile(Source("held"), "held open");
  ::mkdir(Source("dir").c_str(), 0755);
  const int file = ::open(Mounted("held").c_str(), O_RDONLY | O_CLOEXEC);
  const int dir = ::open(Mounted("dir").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(file, 0) << std::strerror(errno);
  ASSERT_GE(dir, 0) << std::strerror(errno);
  EXPECT_EQ(fs_->counts().open_handles, 2u);
  EXPECT_GE(mount_->StopAndJoin(), 0);
  EXPECT_EQ(fs_->counts().open_handles, 2u) << "the kernel released what a client still holds";
  ::close(file);
  ::close(dir);
  Unmount();
}

INSTANTIATE_TEST_SUITE_P(Transports, PassthroughWrite, ringfuse::testing::kEveryTransport,
                         ringfuse::testing::TransportTestName);

// -o ro: every change is refused, and SOURCE stays as it was. The kernel's mount is read-write
// here, so that the refusals tested are the daemon's own (a read-only mount answers most of
// them in the kernel already).
class PassthroughReadOnly : public PassthroughMountTest {};

// The daemon does not keep node ids resolvable after FORGET, so it offers no file handles: they
// are refused at once instead of opening as ESTALE. Natively the same calls work (the control).
TEST_P(PassthroughWrite, FileHandlesAreRefusedRatherThanStale) {
  WriteFile(Source("file"), "x");
  Mount();
  struct HandleBuffer {
    struct file_handle header;
    unsigned char bytes[MAX_HANDLE_SZ];
  };
  const auto handle_of = [](const std::string& path) {
    HandleBuffer buffer{};
    buffer.header.handle_bytes = MAX_HANDLE_SZ;
    int mount_id = 0;
    return ErrnoOf(::name_to_handle_at(AT_FDCWD, path.c_str(), &buffer.header, &mount_id, 0));
  };
  EXPECT_EQ(handle_of(Source("file")), 0);
  EXPECT_EQ(handle_of(Mounted("file")), EOPNOTSUPP);
}

TEST_P(PassthroughReadOnly, EveryChangeIsEROFS) {
  WriteFile(Source("file"), "kept");
  ASSERT_EQ(::mkdir(Source("dir").c_str(), 0755), 0);
  DaemonOptions options;
  options.mount.read_only = true;
  ASSERT_NO_FATAL_FAILURE(Mount(options, DaemonOptions{}));
  const std::string file = Mounted("file");
  EXPECT_EQ(ErrnoOf(::open(Mounted("new").c_str(), O_CREAT | O_WRONLY, 0600)), EROFS);
  EXPECT_EQ(ErrnoOf(::open(file.c_str(), O_WRONLY)), EROFS);
  EXPECT_EQ(ErrnoOf(::open(file.c_str(), O_RDONLY | O_TRUNC)), EROFS);
  EXPECT_EQ(ErrnoOf(::mkdir(Mounted("d").c_str(), 0755)), EROFS);
  EXPECT_EQ(ErrnoOf(::unlink(file.c_str())), EROFS);
  EXPECT_EQ(ErrnoOf(::rmdir(Mounted("dir").c_str())), EROFS);
  EXPECT_EQ(ErrnoOf(::rename(file.c_str(), Mounted("moved").c_str())), EROFS);
  EXPECT_EQ(ErrnoOf(::chmod(file.c_str(), 0777)), EROFS);
  EXPECT_EQ(ErrnoOf(::truncate(file.c_str(), 0)), EROFS);
  EXPECT_EQ(ErrnoOf(::setxattr(file.c_str(), "user.x", "1", 1, 0)), EROFS);
  EXPECT_EQ(ErrnoOf(::symlink("x", Mounted("l").c_str())), EROFS);
  EXPECT_EQ(ErrnoOf(::link(file.c_str(), Mounted("l").c_str())), EROFS);
  EXPECT_EQ(ReadFile(file), "kept") << "reading still works";
  EXPECT_EQ(ReadFile(Source("file")), "kept");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(source_), {}), 2);
}

INSTANTIATE_TEST_SUITE_P(Transports, PassthroughReadOnly, ringfuse::testing::kEveryTransport,
                         ringfuse::testing::TransportTestName);

}  // namespace
}  // namespace ringfuse::daemon
