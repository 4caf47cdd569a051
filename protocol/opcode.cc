#include "ringfuse/opcode.h"

#include <array>

#include "ringfuse/wire.h"

namespace ringfuse {
namespace {

using wire::kKernelMinor;

constexpr OpcodeInfo kRows[] = {
    // opcode, name, fixed argument size, names, tail, replies, since minor
    {Opcode::kLookup, "LOOKUP", 0, 1, Tail::kNames, true, 1},
    {Opcode::kForget, "FORGET", sizeof(wire::ForgetIn), 0, Tail::kNone, false, 1},
    {Opcode::kGetattr, "GETATTR", sizeof(wire::GetattrIn), 0, Tail::kNone, true, 1},
    {Opcode::kSetattr, "SETATTR", sizeof(wire::SetattrIn), 0, Tail::kNone, true, 1},
    {Opcode::kReadlink, "READLINK", 0, 0, Tail::kNone, true, 1},
    {Opcode::kSymlink, "SYMLINK", 0, 2, Tail::kNames, true, 1},
    {Opcode::kMknod, "MKNOD", sizeof(wire::MknodIn), 1, Tail::kNames, true, 1},
    {Opcode::kMkdir, "MKDIR", sizeof(wire::MkdirIn), 1, Tail::kNames, true, 1},
    {Opcode::kUnlink, "UNLINK", 0, 1, Tail::kNames, true, 1},
    {Opcode::kRmdir, "RMDIR", 0, 1, Tail::kNames, true, 1},
    {Opcode::kRename, "RENAME", sizeof(wire::RenameIn), 2, Tail::kNames, true, 1},
    {Opcode::kLink, "LINK", sizeof(wire::LinkIn), 1, Tail::kNames, true, 1},
    {Opcode::kOpen, "OPEN", sizeof(wire::OpenIn), 0, Tail::kNone, true, 1},
    {Opcode::kRead, "READ", sizeof(wire::ReadIn), 0, Tail::kNone, true, 1},
    {Opcode::kWrite, "WRITE", sizeof(wire::WriteIn), 0, Tail::kData, true, 1},
    {Opcode::kStatfs, "STATFS", 0, 0, Tail::kNone, true, 1},
    {Opcode::kRelease, "RELEASE", sizeof(wire::ReleaseIn), 0, Tail::kNone, true, 1},
    {Opcode::kFsync, "FSYNC", sizeof(wire::FsyncIn), 0, Tail::kNone, true, 1},
    {Opcode::kSetxattr, "SETXATTR", sizeof(wire::SetxattrIn), 1, Tail::kNameAndData, true, 1},
    {Opcode::kGetxattr, "GETXATTR", sizeof(wire::GetxattrIn), 1, Tail::kNames, true, 1},
    {Opcode::kListxattr, "LISTXATTR", sizeof(wire::GetxattrIn), 0, Tail::kNone, true, 1},
    {Opcode::kRemovexattr, "REMOVEXATTR", 0, 1, Tail::kNames, true, 1},
    {Opcode::kFlush, "FLUSH", sizeof(wire::FlushIn), 0, Tail::kNone, true, 1},
    {Opcode::kInit, "INIT", sizeof(wire::InitIn), 0, Tail::kNone, true, 1},
    {Opcode::kOpendir, "OPENDIR", sizeof(wire::OpenIn), 0, Tail::kNone, true, 1},
    {Opcode::kReaddir, "READDIR", sizeof(wire::ReadIn), 0, Tail::kNone, true, 1},
    {Opcode::kReleasedir, "RELEASEDIR", sizeof(wire::ReleaseIn), 0, Tail::kNone, true, 1},
    {Opcode::kFsyncdir, "FSYNCDIR", sizeof(wire::FsyncIn), 0, Tail::kNone, true, 2},
    {Opcode::kGetlk, "GETLK", sizeof(wire::LkIn), 0, Tail::kNone, true, 7},
    {Opcode::kSetlk, "SETLK", sizeof(wire::LkIn), 0, Tail::kNone, true, 7},
    {Opcode::kSetlkw, "SETLKW", sizeof(wire::LkIn), 0, Tail::kNone, true, 7},
    {Opcode::kAccess, "ACCESS", sizeof(wire::AccessIn), 0, Tail::kNone, true, 3},
    {Opcode::kCreate, "CREATE", sizeof(wire::CreateIn), 1, Tail::kNames, true, 3},
    {Opcode::kInterrupt, "INTERRUPT", sizeof(wire::InterruptIn), 0, Tail::kNone, false, 7},
    {Opcode::kBmap, "BMAP", sizeof(wire::BmapIn), 0, Tail::kNone, true, 8},
    {Opcode::kDestroy, "DESTROY", 0, 0, Tail::kNone, true, 8},
    {Opcode::kIoctl, "IOCTL", sizeof(wire::IoctlIn), 0, Tail::kData, true, 11},
    {Opcode::kPoll, "POLL", sizeof(wire::PollIn), 0, Tail::kNone, true, 11},
    {Opcode::kNotifyReply, "NOTIFY_REPLY", sizeof(wire::NotifyRetrieveIn), 0, Tail::kData, false,
     15, true},
    {Opcode::kBatchForget, "BATCH_FORGET", sizeof(wire::BatchForgetIn), 0, Tail::kRecords, false,
     16},
    {Opcode::kFallocate, "FALLOCATE", sizeof(wire::FallocateIn), 0, Tail::kNone, true, 19},
    {Opcode::kReaddirplus, "READDIRPLUS", sizeof(wire::ReadIn), 0, Tail::kNone, true, 21},
    {Opcode::kRename2, "RENAME2", sizeof(wire::Rename2In), 2, Tail::kNames, true, 23},
    {Opcode::kLseek, "LSEEK", sizeof(wire::LseekIn), 0, Tail::kNone, true, 24},
    {Opcode::kCopyFileRange, "COPY_FILE_RANGE", sizeof(wire::CopyFileRangeIn), 0, Tail::kNone, true,
     28},
    {Opcode::kSetupMapping, "SETUPMAPPING", sizeof(wire::SetupMappingIn), 0, Tail::kNone, true, 31},
    {Opcode::kRemoveMapping, "REMOVEMAPPING", sizeof(wire::RemoveMappingIn), 0, Tail::kRecords,
     true, 31, true},
    {Opcode::kSyncfs, "SYNCFS", sizeof(wire::SyncfsIn), 0, Tail::kNone, true, 34},
    {Opcode::kTmpfile, "TMPFILE", sizeof(wire::CreateIn), 1, Tail::kNames, true, 37},
    {Opcode::kStatx, "STATX", sizeof(wire::StatxIn), 0, Tail::kNone, true, 39},
    {Opcode::kCopyFileRange64, "COPY_FILE_RANGE_64", sizeof(wire::CopyFileRangeIn), 0, Tail::kNone,
     true, 45},
};

// Direct index by wire opcode; holes (0, 7, 19) stay empty.
constexpr std::array<std::optional<OpcodeInfo>, kMaxOpcode + 1> BuildIndex() {
  std::array<std::optional<OpcodeInfo>, kMaxOpcode + 1> index{};
  for (const OpcodeInfo& row : kRows) index[static_cast<uint32_t>(row.opcode)] = row;
  return index;
}

constexpr auto kIndex = BuildIndex();

}  // namespace

std::optional<OpcodeInfo> LookupOpcode(uint32_t opcode) {
  if (opcode > kMaxOpcode) return std::nullopt;
  return kIndex[opcode];
}

std::string_view OpcodeName(uint32_t opcode) {
  const std::optional<OpcodeInfo> info = LookupOpcode(opcode);
  return info ? info->name : "UNKNOWN";
}

std::string_view OpcodeTableProblem() {
  uint32_t previous = 0;
  for (const OpcodeInfo& row : kRows) {
    const uint32_t number = static_cast<uint32_t>(row.opcode);
    if (number <= previous) return "opcode rows are not strictly ascending";
    if (row.name.empty()) return "an opcode row has no name";
    if (row.since_minor > kKernelMinor) return "an opcode row is newer than the ABI";
    if ((row.tail == Tail::kNames) != (row.names > 0 && row.tail != Tail::kNameAndData)) {
      return "an opcode row's names and tail disagree";
    }
    previous = number;
  }
  if (previous != kMaxOpcode) return "the last opcode row is not kMaxOpcode";
  return {};
}

}  // namespace ringfuse
