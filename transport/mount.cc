#include "transport/mount.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "base/errno_status.h"
#include "base/wait_status.h"
#include "ringfuse/log.h"
#include "transport/dev_fuse.h"
#include "transport/fd_passing.h"

extern char** environ;

namespace ringfuse::internal {
namespace {

constexpr const char* kFusermountPath = "/usr/bin/fusermount3";
constexpr const char* kCommFdVariable = "_FUSE_COMMFD";

// Keeps the cause's code; the message says which mountpoint failed, then why.
absl::Status CannotMount(absl::string_view mountpoint, const absl::Status& cause) {
  return absl::Status(cause.code(),
                      absl::StrCat("cannot mount ", mountpoint, ": ", cause.message()));
}

// ---- Choosing the method ----

absl::StatusOr<MountMethod> ResolveMethod(const MountOptions& options) {
  MountMethod method = options.method;
  if (method == MountMethod::kAuto) {
    // Only fusermount3 can unmount after the daemon dies, so auto_unmount picks it even as root.
    const bool kernel = geteuid() == 0 && !options.auto_unmount;
    method = kernel ? MountMethod::kMountSyscall : MountMethod::kFusermount;
  }
  if (options.auto_unmount && method != MountMethod::kFusermount) {
    return absl::InvalidArgumentError(
        "auto_unmount needs fusermount3, whose helper process outlives the daemon: use "
        "MountMethod::kFusermount or kAuto");
  }
  if (options.sync_init && method == MountMethod::kFusermount) {
    return absl::InvalidArgumentError(
        "sync_init needs a kernel mount (MountMethod::kMountSyscall or kNewMountApi, as root): "
        "fusermount3 mounts before it hands over the fd, too late to ask for a synchronous INIT");
  }
  return method;
}

// ---- Checking the mountpoint ----

absl::Status StatError(int error, absl::string_view mountpoint) {
  switch (error) {
    case ENOENT:
      return absl::NotFoundError(absl::StrFormat(
          "the mountpoint does not exist: create it first (mkdir -p %s)", mountpoint));
    case EACCES:
      return absl::PermissionDeniedError(
          "cannot reach the mountpoint (Permission denied): give this user search (x) permission "
          "on every directory above it");
    case ENOTCONN:
      return absl::FailedPreconditionError(absl::StrFormat(
          "the mountpoint is a FUSE mount whose server is gone: unmount it first (umount -l %s, "
          "or fusermount3 -uz %s)",
          mountpoint, mountpoint));
    default: return base::ErrnoStatus(error, "cannot stat the mountpoint");
  }
}

struct CloseDir {
  void operator()(DIR* dir) const { closedir(dir); }
};

absl::Status ListingError(int error) {
  if (error == EACCES) {
    return absl::PermissionDeniedError(
        "cannot list the mountpoint to check that it is empty (Permission denied): give this "
        "user read permission on it, or set MountOptions::nonempty");
  }
  return base::ErrnoStatus(error, "cannot list the mountpoint to check that it is empty");
}

// The kernel mounts over a non-empty directory without a word; its files then vanish from view,
// which is rarely what was meant, so that takes MountOptions::nonempty.
absl::Status CheckEmpty(int directory) {
  base::UniqueFd listing(openat(directory, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!listing.valid()) return ListingError(errno);
  const std::unique_ptr<DIR, CloseDir> dir(fdopendir(listing.get()));
  if (dir == nullptr) return ListingError(errno);
  listing.release();  // closed with the DIR
  while (const dirent* entry = readdir(dir.get())) {
    const absl::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    return absl::FailedPreconditionError(absl::StrFormat(
        "the mountpoint is not empty (it holds '%s') and mounting would hide its contents: empty "
        "it, pick another directory, or set MountOptions::nonempty",
        name));
  }
  return absl::OkStatus();
}

// Returns the file type bits of the mountpoint: the kernel's rootmode.
absl::StatusOr<mode_t> CheckMountpoint(int directory, const MountOptions& options) {
  struct stat attributes {};
  if (fstat(directory, &attributes) != 0) return StatError(errno, options.mountpoint);
  if (S_ISLNK(attributes.st_mode)) {
    return absl::FailedPreconditionError(
        "the mountpoint is a symbolic link, which is not followed (one swapped in for the "
        "directory could send the mount elsewhere): name the directory it points to");
  }
  if (!S_ISDIR(attributes.st_mode)) {
    return absl::FailedPreconditionError(
        "the mountpoint is not a directory: mount on an empty directory");
  }
  if (!options.nonempty) {
    if (absl::Status empty = CheckEmpty(directory); !empty.ok()) return empty;
  }
  return attributes.st_mode & S_IFMT;
}

// A path the kernel resolves to the open file itself, whatever its name is by then.
std::string FdPath(int fd) { return absl::StrCat("/proc/self/fd/", fd); }

// Where `directory` is now: the path /proc/self/mountinfo shows for a mount on it.
absl::StatusOr<std::string> PathOf(int directory) {
  std::string path(PATH_MAX, '\0');
  const ssize_t length = readlink(FdPath(directory).c_str(), path.data(), path.size());
  if (length < 0) {
    return base::ErrnoStatus(
        errno, "cannot name the mountpoint through /proc/self/fd (is /proc mounted?)");
  }
  path.resize(static_cast<size_t>(length));
  if (!path.starts_with('/') || path.size() == PATH_MAX) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "the mountpoint has no usable path from this process's root (the kernel names it '%s')",
        path));
  }
  return path;
}

struct OpenedMountpoint {
  base::UniqueFd directory;  // O_PATH
  mode_t root_type = 0;
  std::string path;  // absolute, symlink-free
};

// The mountpoint, opened once: the checks and the kernel's mount act on this directory, never on
// its name again, so that a name swapped for a symlink in between cannot send the mount
// elsewhere. Nor is a symlink followed here: ringfused resolves its mountpoint to a symlink-free
// path first, so one found now was planted since.
absl::StatusOr<OpenedMountpoint> OpenMountpoint(const MountOptions& options) {
  if (options.mountpoint.empty()) {
    return absl::InvalidArgumentError("MountOptions::mountpoint is empty: name a directory");
  }
  OpenedMountpoint opened;
  opened.directory.reset(open(options.mountpoint.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!opened.directory.valid()) return StatError(errno, options.mountpoint);
  absl::StatusOr<mode_t> root_type = CheckMountpoint(opened.directory.get(), options);
  if (!root_type.ok()) return root_type.status();
  opened.root_type = *root_type;
  absl::StatusOr<std::string> path = PathOf(opened.directory.get());
  if (!path.ok()) return path.status();
  opened.path = *std::move(path);
  return opened;
}

// ---- Mount options ----

// One mount parameter: key=value, or a flag when the value is empty.
struct MountParam {
  std::string key;
  std::string value;
};

std::string JoinParams(const std::vector<MountParam>& params) {
  return absl::StrJoin(params, ",", [](std::string* out, const MountParam& param) {
    absl::StrAppend(out, param.key, param.value.empty() ? "" : "=", param.value);
  });
}

// The options that fusermount3 also accepts and hands to the kernel unchanged.
void AppendPassThroughParams(const MountOptions& options, std::vector<MountParam>& params) {
  if (options.allow_other) params.push_back({"allow_other", ""});
  if (options.default_permissions) params.push_back({"default_permissions", ""});
  if (options.max_read) params.push_back({"max_read", absl::StrCat(*options.max_read)});
  if (options.blksize) params.push_back({"blksize", absl::StrCat(*options.blksize)});
}

std::vector<MountParam> KernelParams(const MountOptions& options, int dev_fd, mode_t root_type) {
  std::vector<MountParam> params = {
      {"fd", absl::StrCat(dev_fd)},
      {"rootmode", absl::StrFormat("%o", root_type)},
      {"user_id", absl::StrCat(geteuid())},
      {"group_id", absl::StrCat(getegid())},
  };
  AppendPassThroughParams(options, params);
  return params;
}

// fusermount3 splits -o at commas and unescapes backslashes in fsname= and subtype=.
std::string EscapeForFusermount(absl::string_view value) {
  std::string escaped;
  for (const char c : value) {
    if (c == ',' || c == '\\') escaped.push_back('\\');
    escaped.push_back(c);
  }
  return escaped;
}

// fusermount3 (3.14) knows suid, dev, exec and atime among the generic flags, and starts from
// nosuid,nodev; only root may lift those two.
absl::Status AppendFusermountFlags(const MountFlags& flags, std::vector<MountParam>& params) {
  if (flags.atime == AtimeUpdate::kEvery || flags.nodiratime || flags.lazytime) {
    return absl::InvalidArgumentError(
        "fusermount3 cannot set strictatime, nodiratime or lazytime: drop them, or mount as root "
        "without auto_unmount");
  }
  if (!flags.nosuid) params.push_back({"suid", ""});
  if (!flags.nodev) params.push_back({"dev", ""});
  if (flags.noexec) params.push_back({"noexec", ""});
  if (flags.atime == AtimeUpdate::kNever) params.push_back({"noatime", ""});
  return absl::OkStatus();
}

absl::StatusOr<std::string> FusermountOptions(const MountOptions& options) {
  std::vector<MountParam> params;
  if (!options.fsname.empty()) params.push_back({"fsname", EscapeForFusermount(options.fsname)});
  if (!options.subtype.empty()) {
    params.push_back({"subtype", EscapeForFusermount(options.subtype)});
  }
  if (options.read_only) params.push_back({"ro", ""});
  if (absl::Status flags = AppendFusermountFlags(options.flags, params); !flags.ok()) return flags;
  AppendPassThroughParams(options, params);
  if (options.auto_unmount) params.push_back({"auto_unmount", ""});
  return JoinParams(params);
}

// ---- Kernel mounts ----

absl::Status KernelMountError(int error, absl::string_view call, const MountOptions& options,
                              absl::string_view kernel_says) {
  switch (error) {
    case EPERM:
      return absl::PermissionDeniedError(
          absl::StrFormat("%s needs CAP_SYS_ADMIN: run as root, or mount through fusermount3 "
                          "(MountMethod::kFusermount)",
                          call));
    case ENODEV:
      return absl::NotFoundError(
          "the kernel has no fuse filesystem type: load the module (modprobe fuse)");
    case EINVAL:
      return absl::InvalidArgumentError(
          absl::StrCat(call, " was refused as invalid",
                       kernel_says.empty() ? "" : absl::StrCat(" (kernel: ", kernel_says, ")"),
                       options.blksize ? ": blksize is accepted only for fuseblk mounts, drop it"
                                       : ": check the mount options"));
    default: return base::ErrnoStatus(error, absl::StrCat(call, " failed"));
  }
}

// The mount's flags as mount(2) and the new mount API (fsmount's attributes) spell them.
struct KernelFlags {
  unsigned long syscall = 0;
  unsigned int attributes = 0;
};

KernelFlags KernelFlagsFor(const MountOptions& options) {
  KernelFlags kernel;
  const auto set = [&kernel](bool on, unsigned long syscall, unsigned int attribute) {
    if (!on) return;
    kernel.syscall |= syscall;
    kernel.attributes |= attribute;
  };
  const MountFlags& flags = options.flags;
  // Read-only is the superblock's too, and lazytime only the superblock's: see MountWithNewApi.
  set(options.read_only, MS_RDONLY, MOUNT_ATTR_RDONLY);
  set(flags.lazytime, MS_LAZYTIME, 0);
  set(flags.nosuid, MS_NOSUID, MOUNT_ATTR_NOSUID);
  set(flags.nodev, MS_NODEV, MOUNT_ATTR_NODEV);
  set(flags.noexec, MS_NOEXEC, MOUNT_ATTR_NOEXEC);
  set(flags.nodiratime, MS_NODIRATIME, MOUNT_ATTR_NODIRATIME);
  set(flags.atime == AtimeUpdate::kRelative, MS_RELATIME, MOUNT_ATTR_RELATIME);
  set(flags.atime == AtimeUpdate::kNever, MS_NOATIME, MOUNT_ATTR_NOATIME);
  set(flags.atime == AtimeUpdate::kEvery, MS_STRICTATIME, MOUNT_ATTR_STRICTATIME);
  return kernel;
}

// Onto `directory` through its /proc/self/fd path, which mount(2) resolves to that directory.
absl::Status MountWithSyscall(const MountOptions& options, int directory,
                              const std::vector<MountParam>& params) {
  const std::string type =
      options.subtype.empty() ? "fuse" : absl::StrCat("fuse.", options.subtype);
  const std::string data = JoinParams(params);
  if (mount(options.fsname.c_str(), FdPath(directory).c_str(), type.c_str(),
            KernelFlagsFor(options).syscall, data.c_str()) == 0) {
    return absl::OkStatus();
  }
  return KernelMountError(errno, absl::StrCat("mount(2) of ", type, " with ", data), options, "");
}

// A rejected fs_context explains itself in a log read from its fd, one message per read, each
// behind its severity letter ("e fuse: blksize only supported for fuseblk"); mount(2) has no
// such channel.
std::string KernelLog(int context_fd) {
  std::vector<std::string> messages;
  char message[512];
  ssize_t length;
  while ((length = read(context_fd, message, sizeof(message))) > 0) {
    absl::string_view text(message, static_cast<size_t>(length));
    if (text.size() > 2 && text[1] == ' ') text.remove_prefix(2);
    messages.emplace_back(absl::StripTrailingAsciiWhitespace(text));
  }
  return absl::StrJoin(messages, "; ");
}

// 0 or an errno.
int SetParam(int context_fd, const MountParam& param) {
  const int result =
      param.value.empty()
          ? fsconfig(context_fd, FSCONFIG_SET_FLAG, param.key.c_str(), nullptr, 0)
          : fsconfig(context_fd, FSCONFIG_SET_STRING, param.key.c_str(), param.value.c_str(), 0);
  return result == 0 ? 0 : errno;
}

absl::Status MountWithNewApi(const MountOptions& options, int directory,
                             std::vector<MountParam> params) {
  const base::UniqueFd context(fsopen("fuse", FSOPEN_CLOEXEC));
  if (!context.valid()) return KernelMountError(errno, "fsopen(\"fuse\")", options, "");
  if (!options.fsname.empty()) params.push_back({"source", options.fsname});
  if (!options.subtype.empty()) params.push_back({"subtype", options.subtype});
  if (options.read_only) params.push_back({"ro", ""});  // the superblock's flag; see fsmount
  if (options.flags.lazytime) params.push_back({"lazytime", ""});
  for (const MountParam& param : params) {
    if (const int error = SetParam(context.get(), param); error != 0) {
      return KernelMountError(error, absl::StrCat("fsconfig of ", JoinParams({param})), options,
                              KernelLog(context.get()));
    }
  }
  if (fsconfig(context.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0) {
    const int error = errno;
    return KernelMountError(error, "fsconfig(FSCONFIG_CMD_CREATE)", options,
                            KernelLog(context.get()));
  }
  const base::UniqueFd detached(
      fsmount(context.get(), FSMOUNT_CLOEXEC, KernelFlagsFor(options).attributes));
  if (!detached.valid()) return KernelMountError(errno, "fsmount", options, "");
  if (move_mount(detached.get(), "", directory, "",
                 MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0) {
    return KernelMountError(errno, "move_mount", options, "");
  }
  return absl::OkStatus();
}

absl::Status UnmountInKernel(const std::string& mountpoint, bool lazy) {
  // The path is canonical: a symlink found there now was planted since.
  if (umount2(mountpoint.c_str(), (lazy ? MNT_DETACH : 0) | UMOUNT_NOFOLLOW) == 0) {
    return absl::OkStatus();
  }
  const int error = errno;
  switch (error) {
    case EBUSY:
      return absl::FailedPreconditionError(absl::StrFormat(
          "cannot unmount %s: it is busy (a process has a file or its working directory there): "
          "close them, or unmount lazily",
          mountpoint));
    case EINVAL:
      return absl::FailedPreconditionError(absl::StrFormat(
          "cannot unmount %s: it is no longer a mountpoint (unmounted by someone else?)",
          mountpoint));
    case EPERM:
      return absl::PermissionDeniedError(absl::StrFormat(
          "cannot unmount %s: umount2 needs CAP_SYS_ADMIN: run as root", mountpoint));
    default: return base::ErrnoStatus(error, absl::StrCat("cannot unmount ", mountpoint));
  }
}

// ---- fusermount3 ----

absl::Status FusermountMissing() {
  return absl::NotFoundError(
      absl::StrFormat("%s is missing: install fuse3 (apt-get install fuse3), or mount as root with "
                      "MountMethod::kMountSyscall",
                      kFusermountPath));
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& string : strings) pointers.push_back(string.data());
  pointers.push_back(nullptr);
  return pointers;
}

// Ours, with _FUSE_COMMFD naming `comm_fd` when given.
std::vector<std::string> FusermountEnvironment(std::optional<int> comm_fd) {
  const std::string prefix = absl::StrCat(kCommFdVariable, "=");
  std::vector<std::string> environment;
  for (char** variable = environ; *variable != nullptr; ++variable) {
    if (!absl::StartsWith(*variable, prefix)) environment.emplace_back(*variable);
  }
  if (comm_fd) environment.push_back(absl::StrCat(prefix, *comm_fd));
  return environment;
}

// Starts fusermount3 with `args`; it shares our stderr, so that its messages reach the user.
// `comm_fd` is the socket it sends the /dev/fuse fd back over.
absl::StatusOr<pid_t> SpawnFusermount(std::vector<std::string> args, std::optional<int> comm_fd) {
  args.insert(args.begin(), "fusermount3");
  std::vector<std::string> environment = FusermountEnvironment(comm_fd);
  const std::vector<char*> argv = CStrings(args);
  const std::vector<char*> envp = CStrings(environment);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // Onto itself, dup2 clears close-on-exec in the child alone (glibc 2.29+): the socket stays
  // out of every other program we start.
  if (comm_fd) posix_spawn_file_actions_adddup2(&actions, *comm_fd, *comm_fd);
  pid_t pid = -1;
  const int error = posix_spawn(&pid, kFusermountPath, &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (error == ENOENT) return FusermountMissing();
  if (error != 0) return base::ErrnoStatus(error, absl::StrCat("cannot start ", kFusermountPath));
  return pid;
}

// The wait status, or nothing when it cannot be known (an ignored SIGCHLD reaps children).
std::optional<int> WaitForExit(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return std::nullopt;
  }
  return status;
}

absl::Status FusermountMountFailed(std::optional<int> wait_status) {
  const std::string failed = absl::StrFormat("fusermount3 %s; it printed the reason on stderr",
                                             base::DescribeExit(wait_status));
  // The usual reason on a machine without udev: fusermount3 opens /dev/fuse as the user.
  if (access(kDevFusePath, R_OK | W_OK) != 0) {
    return absl::PermissionDeniedError(absl::StrFormat(
        "%s; %s is not readable and writable by this user, and fusermount3 opens it as the "
        "user: chmod 0666 %s, as Debian's udev rule does",
        failed, kDevFusePath, kDevFusePath));
  }
  return absl::UnknownError(failed);
}

// The /dev/fuse fd fusermount3 sends once mounted, or an invalid fd when it closed the socket
// without one (it failed).
absl::StatusOr<base::UniqueFd> ReceiveFd(int socket) {
  absl::StatusOr<ReceivedMessage> received = ReceiveWithFds(socket, 1, 1);
  if (!received.ok()) {
    return absl::Status(received.status().code(),
                        absl::StrCat("fusermount3's /dev/fuse fd: ", received.status().message()));
  }
  if (received->fds.empty()) return base::UniqueFd();
  return std::move(received->fds.front());
}

absl::Status UnmountWithFusermount(const std::string& mountpoint, bool lazy) {
  std::vector<std::string> args = {"-u"};
  if (lazy) args.push_back("-z");
  args.insert(args.end(), {"--", mountpoint});
  const absl::StatusOr<pid_t> pid = SpawnFusermount(std::move(args), std::nullopt);
  if (!pid.ok()) {
    return absl::Status(pid.status().code(),
                        absl::StrCat("cannot unmount ", mountpoint, ": ", pid.status().message()));
  }
  const std::optional<int> exit = WaitForExit(*pid);
  if (base::ExitedCleanly(exit)) return absl::OkStatus();
  return absl::UnknownError(
      absl::StrFormat("cannot unmount %s: fusermount3 -u %s; it printed the reason on stderr",
                      mountpoint, base::DescribeExit(exit)));
}

// ---- After mounting ----

// The device of what is mounted at `mountpoint` now. An empty mask with DONT_SYNC sends no
// GETATTR: st_dev comes from the superblock, and the server may not be answering (yet, or any
// more), or may refuse us, for another user's mount.
absl::StatusOr<std::pair<uint32_t, uint32_t>> MountedDevice(const std::string& mountpoint) {
  struct statx attributes {};
  if (statx(AT_FDCWD, mountpoint.c_str(), AT_STATX_DONT_SYNC, 0, &attributes) != 0) {
    return base::ErrnoStatus(errno, "cannot stat " + mountpoint);
  }
  return std::make_pair(attributes.stx_dev_major, attributes.stx_dev_minor);
}

absl::StatusOr<uint32_t> ConnectionId(const std::string& mountpoint) {
  absl::StatusOr<std::pair<uint32_t, uint32_t>> device = MountedDevice(mountpoint);
  if (!device.ok()) return device.status();
  return device->second;
}

// The death watcher's life, in the forked child of a process that may have threads: only
// async-signal-safe calls. It keeps nothing of ours but `watch` and `socket` (an fd of /dev/fuse
// or of an io_uring would keep the connection alive), waits for end of file on `watch`, aborts
// the connection through `abort_path`, and exits.
[[noreturn]] void WatchForDeath(int watch, int socket, const char* abort_path) {
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  for (const int signal : {SIGINT, SIGTERM, SIGHUP}) sigaction(signal, &ignore, nullptr);
  const int low = watch < socket ? watch : socket;
  const int high = watch < socket ? socket : watch;
  if (low > 0) close_range(0, low - 1, 0);
  if (high > low + 1) close_range(low + 1, high - 1, 0);
  close_range(high + 1, ~0U, 0);
  char byte;
  while (read(watch, &byte, 1) < 0 && errno == EINTR) {
  }
  const int abort_fd = open(abort_path, O_WRONLY | O_CLOEXEC);
  if (abort_fd >= 0) (void)!write(abort_fd, "1", 1);
  _exit(0);
}

}  // namespace

absl::Status MountFusectlIfMissing() {
  struct stat self {
  }, parent{};
  const bool mounted = ::stat(kFusectlPath, &self) == 0 && ::stat("/sys/fs/fuse", &parent) == 0 &&
                       self.st_dev != parent.st_dev;
  if (mounted || ::mount("fusectl", kFusectlPath, "fusectl", 0, nullptr) == 0) {
    return absl::OkStatus();
  }
  return base::ErrnoStatus(errno, absl::StrFormat("cannot mount fusectl on %s", kFusectlPath));
}

absl::StatusOr<Mount> Mount::Create(const MountOptions& options,
                                    const std::function<void(int dev_fd)>& before_mount,
                                    const std::function<void(bool mounted)>& after_mount) {
  const absl::StatusOr<MountMethod> method = ResolveMethod(options);
  if (!method.ok()) return CannotMount(options.mountpoint, method.status());
  absl::StatusOr<OpenedMountpoint> mountpoint = OpenMountpoint(options);
  if (!mountpoint.ok()) return CannotMount(options.mountpoint, mountpoint.status());

  MountOptions resolved = options;
  resolved.mountpoint = mountpoint->path;
  resolved.method = *method;
  Mount mount;
  mount.mountpoint_ = resolved.mountpoint;
  mount.method_ = *method;
  // fusermount3 takes a path, not our fd: it resolves and checks the path again itself (as the
  // user, then as root), so a swap after our checks is its own to guard against.
  const absl::Status mounted =
      *method == MountMethod::kFusermount
          ? mount.MountWithFusermount(resolved)
          : mount.MountInKernel(resolved, mountpoint->directory.get(), mountpoint->root_type,
                                before_mount, after_mount);
  if (!mounted.ok()) return CannotMount(resolved.mountpoint, mounted);
  mount.mounted_ = true;
  if (*method == MountMethod::kFusermount && before_mount) before_mount(mount.dev_fd());

  const absl::StatusOr<uint32_t> connection_id = ConnectionId(mount.mountpoint_);
  if (!connection_id.ok()) return CannotMount(mount.mountpoint_, connection_id.status());
  mount.connection_id_ = *connection_id;
  if (mount.auto_unmount_socket_.valid()) mount.StartDeathWatcher();
  return mount;
}

// Without a watcher (fork failed) we hold the socket ourselves, as before: fusermount3 still
// unmounts when our /dev/fuse fd goes with our exit.
void Mount::StartDeathWatcher() {
  // fusermount3 unmounts only a mount whose open fails with ENOTCONN; without the watcher's
  // abort, the connection can outlive us (an io_uring tears down after its process, still
  // holding /dev/fuse), and the mount stays.
  if (absl::Status fusectl = MountFusectlIfMissing(); !fusectl.ok()) {
    Log(LogLevel::kWarning, "auto_unmount may leave the mount behind: %s",
        std::string(fusectl.message()).c_str());
  }
  const std::string abort_path = absl::StrFormat("%s/%u/abort", kFusectlPath, connection_id_);
  int ends[2];
  if (pipe2(ends, O_CLOEXEC) != 0) return;
  base::UniqueFd watch(ends[0]);
  base::UniqueFd alive(ends[1]);
  const pid_t pid = fork();
  if (pid == 0) WatchForDeath(watch.get(), auto_unmount_socket_.get(), abort_path.c_str());
  if (pid < 0) {
    Log(LogLevel::kWarning, "cannot fork the auto_unmount watcher: %s", std::strerror(errno));
    return;
  }
  death_watcher_ = pid;
  death_watch_pipe_ = std::move(alive);
  auto_unmount_socket_.reset();  // the watcher's now
}

absl::Status Mount::MountInKernel(const MountOptions& options, int directory, mode_t root_type,
                                  const std::function<void(int)>& before_mount,
                                  const std::function<void(bool)>& after_mount) {
  absl::StatusOr<base::UniqueFd> dev = OpenDevFuse();
  if (!dev.ok()) return dev.status();
  if (options.sync_init) {
    if (absl::Status sync = EnableSyncInit(dev->get()); !sync.ok()) return sync;
  }
  const std::vector<MountParam> params = KernelParams(options, dev->get(), root_type);
  if (before_mount) before_mount(dev->get());
  const absl::Status mounted = options.method == MountMethod::kNewMountApi
                                   ? MountWithNewApi(options, directory, params)
                                   : MountWithSyscall(options, directory, params);
  if (after_mount) after_mount(mounted.ok());
  if (!mounted.ok()) return mounted;
  dev_fd_ = *std::move(dev);
  // Renamed since it was opened, the directory is named where it is now, as mountinfo names the
  // mount: unmounting and StillMounted look it up by that name (kept as it was if unreadable).
  if (absl::StatusOr<std::string> now = PathOf(directory); now.ok()) mountpoint_ = *std::move(now);
  return absl::OkStatus();
}

absl::Status Mount::MountWithFusermount(const MountOptions& options) {
  if (access(kFusermountPath, X_OK) != 0) return FusermountMissing();
  const absl::StatusOr<std::string> fusermount_options = FusermountOptions(options);
  if (!fusermount_options.ok()) return fusermount_options.status();
  int ends[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) {
    return base::ErrnoStatus(errno, "cannot create the socket to fusermount3");
  }
  base::UniqueFd ours(ends[0]);
  base::UniqueFd theirs(ends[1]);
  const absl::StatusOr<pid_t> helper =
      SpawnFusermount({"-o", *fusermount_options, "--", options.mountpoint}, theirs.get());
  if (!helper.ok()) return helper.status();
  // Only fusermount3 may hold its end: when it exits without sending, recvmsg must see EOF.
  theirs.reset();

  absl::StatusOr<base::UniqueFd> dev = ReceiveFd(ours.get());
  if (dev.ok() && dev->valid() && options.auto_unmount) {
    dev_fd_ = *std::move(dev);
    auto_unmount_helper_ = *helper;
    auto_unmount_socket_ = std::move(ours);
    return absl::OkStatus();
  }
  ours.reset();  // an auto_unmount helper we could not use then exits too
  const std::optional<int> exit = WaitForExit(*helper);
  if (!dev.ok()) return dev.status();
  if (!dev->valid() || !base::ExitedCleanly(exit)) return FusermountMountFailed(exit);
  dev_fd_ = *std::move(dev);
  return absl::OkStatus();
}

Mount Mount::Adopt(base::UniqueFd dev_fd, std::string mountpoint, MountMethod method,
                   uint32_t connection_id) {
  Mount mount;
  mount.dev_fd_ = std::move(dev_fd);
  mount.mountpoint_ = std::move(mountpoint);
  mount.method_ = method;
  mount.connection_id_ = connection_id;
  mount.mounted_ = true;
  return mount;
}

void Mount::LeaveMounted() {
  mounted_ = false;
  dev_fd_.reset();
}

Mount::Mount(Mount&& other) noexcept { *this = std::move(other); }

Mount& Mount::operator=(Mount&& other) noexcept {
  if (this == &other) return *this;
  Release();
  dev_fd_ = std::move(other.dev_fd_);
  mountpoint_ = std::move(other.mountpoint_);
  method_ = other.method_;
  mounted_ = std::exchange(other.mounted_, false);
  connection_id_ = other.connection_id_;
  auto_unmount_helper_ = std::exchange(other.auto_unmount_helper_, -1);
  auto_unmount_socket_ = std::move(other.auto_unmount_socket_);
  death_watcher_ = std::exchange(other.death_watcher_, -1);
  death_watch_pipe_ = std::move(other.death_watch_pipe_);
  return *this;
}

Mount::~Mount() { Release(); }

bool Mount::StillMounted() const {
  const absl::StatusOr<std::pair<uint32_t, uint32_t>> device = MountedDevice(mountpoint_);
  return mounted_ && device.ok() && *device == std::make_pair(0u, connection_id_);
}

absl::Status Mount::Unmount(bool lazy) {
  if (!mounted_) {
    return absl::FailedPreconditionError(
        absl::StrFormat("cannot unmount %s: this Mount already unmounted it", mountpoint_));
  }
  // Someone else may have unmounted it already, and something else may be mounted there now:
  // unmount only what is still ours (FUSE connections are anonymous devices, major 0).
  const absl::StatusOr<std::pair<uint32_t, uint32_t>> device = MountedDevice(mountpoint_);
  if (device.ok() && *device != std::make_pair(0u, connection_id_)) {
    mounted_ = false;
    StopAutoUnmountHelper();
    return absl::OkStatus();
  }
  const absl::Status unmounted = method_ == MountMethod::kFusermount
                                     ? UnmountWithFusermount(mountpoint_, lazy)
                                     : UnmountInKernel(mountpoint_, lazy);
  if (!unmounted.ok()) return unmounted;
  mounted_ = false;
  StopAutoUnmountHelper();
  return absl::OkStatus();
}

void Mount::StopAutoUnmountHelper() {
  if (auto_unmount_helper_ < 0) return;
  // Once the mount is gone the helper has nothing left to do, and left to itself would complain
  // on stderr that it found nothing to unmount. While the mount remains, closing our end makes
  // it unmount the mount if its connection is dead.
  if (!mounted_) kill(auto_unmount_helper_, SIGKILL);
  if (death_watcher_ > 0) {
    // Killed, it aborts nothing: once unmounted, the connection's id may name another's.
    kill(death_watcher_, SIGKILL);
    WaitForExit(std::exchange(death_watcher_, -1));
    death_watch_pipe_.reset();
  }
  auto_unmount_socket_.reset();
  WaitForExit(std::exchange(auto_unmount_helper_, -1));
}

// A lazy unmount waits for nothing the server must answer. Should it fail, the fd is closed
// before the helper learns we are gone, so that it finds the connection dead and unmounts.
void Mount::Release() {
  if (mounted_) {
    const absl::Status unmounted = Unmount(/*lazy=*/true);
    if (!unmounted.ok()) Log(LogLevel::kWarning, "%s", unmounted.message());
  }
  dev_fd_.reset();
  StopAutoUnmountHelper();
  mounted_ = false;
}

}  // namespace ringfuse::internal
