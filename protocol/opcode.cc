#include "protocol/opcode.h"

#include <array>

#include "protocol/abi.h"

namespace ringfuse {
namespace {

using abi::kKernelMinor;

constexpr OpcodeInfo kRows[] = {
    // opcode, name, fixed argument size, names, tail, replies, since minor
    {Opcode::kLookup, "LOOKUP", 0, 1, Tail::kNames, true, 1},
    {Opcode::kForget, "FORGET", sizeof(abi::ForgetIn), 0, Tail::kNone, false, 1},
    {Opcode::kGetattr, "GETATTR", sizeof(abi::GetattrIn), 0, Tail::kNone, true, 1},
    {Opcode::kSetattr, "SETATTR", sizeof(abi::SetattrIn), 0, Tail::kNone, true, 1},
    {Opcode::kReadlink, "READLINK", 0, 0, Tail::kNone, true, 1},
    {Opcode::kSymlink, "SYMLINK", 0, 2, Tail::kNames, true, 1},
    {Opcode::kMknod, "MKNOD", sizeof(abi::MknodIn), 1, Tail::kNames, true, 1},
    {Opcode::kMkdir, "MKDIR", sizeof(abi::MkdirIn), 1, Tail::kNames, true, 1},
    {Opcode::kUnlink, "UNLINK", 0, 1, Tail::kNames, true, 1},
    {Opcode::kRmdir, "RMDIR", 0, 1, Tail::kNames, true, 1},
    {Opcode::kRename, "RENAME", sizeof(abi::RenameIn), 2, Tail::kNames, true, 1},
    {Opcode::kLink, "LINK", sizeof(abi::LinkIn), 1, Tail::kNames, true, 1},
    {Opcode::kOpen, "OPEN", sizeof(abi::OpenIn), 0, Tail::kNone, true, 1},
    {Opcode::kRead, "READ", sizeof(abi::ReadIn), 0, Tail::kNone, true, 1},
    {Opcode::kWrite, "WRITE", sizeof(abi::WriteIn), 0, Tail::kData, true, 1},
    {Opcode::kStatfs, "STATFS", 0, 0, Tail::kNone, true, 1},
    {Opcode::kRelease, "RELEASE", sizeof(abi::ReleaseIn), 0, Tail::kNone, true, 1},
    {Opcode::kFsync, "FSYNC", sizeof(abi::FsyncIn), 0, Tail::kNone, true, 1},
    {Opcode::kSetxattr, "SETXATTR", sizeof(abi::SetxattrIn), 1, Tail::kNameAndData, true, 1},
    {Opcode::kGetxattr, "GETXATTR", sizeof(abi::GetxattrIn), 1, Tail::kNames, true, 1},
    {Opcode::kListxattr, "LISTXATTR", sizeof(abi::GetxattrIn), 0, Tail::kNone, true, 1},
    {Opcode::kRemovexattr, "REMOVEXATTR", 0, 1, Tail::kNames, true, 1},
    {Opcode::kFlush, "FLUSH", sizeof(abi::FlushIn), 0, Tail::kNone, true, 1},
    {Opcode::kInit, "INIT", sizeof(abi::InitIn), 0, Tail::kNone, true, 1},
    {Opcode::kOpendir, "OPENDIR", sizeof(abi::OpenIn), 0, Tail::kNone, true, 1},
    {Opcode::kReaddir, "READDIR", sizeof(abi::ReadIn), 0, Tail::kNone, true, 1},
    {Opcode::kReleasedir, "RELEASEDIR", sizeof(abi::ReleaseIn), 0, Tail::kNone, true, 1},
    {Opcode::kFsyncdir, "FSYNCDIR", sizeof(abi::FsyncIn), 0, Tail::kNone, true, 2},
    {Opcode::kGetlk, "GETLK", sizeof(abi::LkIn), 0, Tail::kNone, true, 7},
    {Opcode::kSetlk, "SETLK", sizeof(abi::LkIn), 0, Tail::kNone, true, 7},
    {Opcode::kSetlkw, "SETLKW", sizeof(abi::LkIn), 0, Tail::kNone, true, 7},
    {Opcode::kAccess, "ACCESS", sizeof(abi::AccessIn), 0, Tail::kNone, true, 3},
    {Opcode::kCreate, "CREATE", sizeof(abi::CreateIn), 1, Tail::kNames, true, 3},
    {Opcode::kInterrupt, "INTERRUPT", sizeof(abi::InterruptIn), 0, Tail::kNone, false, 7},
    {Opcode::kBmap, "BMAP", sizeof(abi::BmapIn), 0, Tail::kNone, true, 8},
    {Opcode::kDestroy, "DESTROY", 0, 0, Tail::kNone, true, 8},
    {Opcode::kIoctl, "IOCTL", sizeof(abi::IoctlIn), 0, Tail::kData, true, 11},
    {Opcode::kPoll, "POLL", sizeof(abi::PollIn), 0, Tail::kNone, true, 11},
    {Opcode::kNotifyReply, "NOTIFY_REPLY", sizeof(abi::NotifyRetrieveIn), 0, Tail::kData, false, 15,
     true},
    {Opcode::kBatchForget, "BATCH_FORGET", sizeof(abi::BatchForgetIn), 0, Tail::kRecords, false,
     16},
    {Opcode::kFallocate, "FALLOCATE", sizeof(abi::FallocateIn), 0, Tail::kNone, true, 19},
    {Opcode::kReaddirplus, "READDIRPLUS", sizeof(abi::ReadIn), 0, Tail::kNone, true, 21},
    {Opcode::kRename2, "RENAME2", sizeof(abi::Rename2In), 2, Tail::kNames, true, 23},
    {Opcode::kLseek, "LSEEK", sizeof(abi::LseekIn), 0, Tail::kNone, true, 24},
    {Opcode::kCopyFileRange, "COPY_FILE_RANGE", sizeof(abi::CopyFileRangeIn), 0, Tail::kNone, true,
     28},
    {Opcode::kSetupMapping, "SETUPMAPPING", sizeof(abi::SetupMappingIn), 0, Tail::kNone, true, 31},
    {Opcode::kRemoveMapping, "REMOVEMAPPING", sizeof(abi::RemoveMappingIn), 0, Tail::kRecords, true,
     31, true},
    {Opcode::kSyncfs, "SYNCFS", sizeof(abi::SyncfsIn), 0, Tail::kNone, true, 34},
    {Opcode::kTmpfile, "TMPFILE", sizeof(abi::CreateIn), 1, Tail::kNames, true, 37},
    {Opcode::kStatx, "STATX", sizeof(abi::StatxIn), 0, Tail::kNone, true, 39},
    {Opcode::kCopyFileRange64, "COPY_FILE_RANGE_64", sizeof(abi::CopyFileRangeIn), 0, Tail::kNone,
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
