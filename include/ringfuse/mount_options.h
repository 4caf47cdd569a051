/// \file
/// What to mount and how: the options a session passes to the kernel (or to fusermount3).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ringfuse/export.h"

RINGFUSE_PUBLIC_BEGIN

namespace ringfuse {

/// How the filesystem is mounted.
enum class MountMethod {
  kAuto,          ///< mount(2) as root, fusermount3 otherwise or when auto_unmount is asked for
  kMountSyscall,  ///< mount(2)
  kNewMountApi,   ///< fsopen/fsconfig/fsmount/move_mount
  kFusermount,    ///< fusermount3 (setuid helper)
};

/// How accessed files' access times are updated (mount(8)'s atime family).
enum class AtimeUpdate {
  kRelative,  ///< relatime, the kernel's default: when older than the last change, or a day old
  kNever,     ///< noatime
  kEvery,     ///< strictatime: on every access
};

/// The generic mount flags that mount(8) and fstab name, with FUSE's defaults: nosuid and nodev,
/// which only root may lift.
struct MountFlags {
  bool nosuid = true;                          ///< set-user-ID and set-group-ID bits ignored
  bool nodev = true;                           ///< device files cannot be opened
  bool noexec = false;                         ///< files cannot be executed
  AtimeUpdate atime = AtimeUpdate::kRelative;  ///< when access times are updated
  bool nodiratime = false;                     ///< directories' access times never updated
  bool lazytime = false;  ///< the superblock's: access times are written back lazily
};

/// What a session mounts, where and how.
struct MountOptions {
  std::string mountpoint;                   ///< an existing directory, empty unless `nonempty`
  MountMethod method = MountMethod::kAuto;  ///< how to mount
  std::string fsname = "ringfuse";          ///< the "source" column of /proc/mounts
  std::string subtype;                      ///< shown as `fuse.<subtype>`
  bool allow_other = false;                 ///< users other than the mounter may access it
  bool default_permissions = false;         ///< the kernel checks permissions from the mode bits
  bool read_only = false;                   ///< mounted read-only (ro)
  MountFlags flags;                         ///< the generic mount flags
  bool nonempty = false;                    ///< allow mounting over a non-empty directory
  std::optional<uint32_t> max_read;         ///< the largest READ the kernel sends, in bytes
  std::optional<uint32_t>
      blksize;  ///< only meaningful for fuseblk; rejected otherwise by the kernel
  bool sync_init =
      false;  ///< FUSE_DEV_IOC_SYNC_INIT: mount() returns after INIT; kernel mounts only
  bool auto_unmount = false;  ///< fusermount3 only: unmount when the daemon dies
};

}  // namespace ringfuse

RINGFUSE_PUBLIC_END
