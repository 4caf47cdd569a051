// Requests from the kernel: validated header plus a typed view of every argument.
//
// ParseRequest never reads past the bytes it is given, never aborts and never throws: a malformed
// message becomes a ParseError that says what was wrong and, where it can be known, the unique id
// to answer with EIO. Views point into the caller's buffer and live as long as it does.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

#include "absl/status/status.h"
#include "ringfuse/bytes.h"
#include "ringfuse/export.h"
#include "ringfuse/opcode.h"
#include "ringfuse/wire.h"

RINGFUSE_PUBLIC_BEGIN

namespace ringfuse {

// What the parser must know of the connection: older protocols send shorter structs.
struct ParseContext {
  uint32_t minor = wire::kKernelMinor;  // the negotiated protocol minor
  bool setxattr_ext = true;             // FUSE_SETXATTR_EXT agreed: SETXATTR has the 16-byte struct
  // The largest reply the kernel accepts (Negotiated::MaxPayload): READ, READDIR and READDIRPLUS
  // asking for more are malformed, so that no handler sizes a buffer from an unchecked number.
  uint32_t max_reply = wire::kMaxReplyAnyConnection;
};

// A run of fixed-size records in kernel memory order, read by copy (no alignment assumed).
template <typename T>
class RecordArray {
 public:
  RecordArray() = default;
  RecordArray(ConstBytes bytes, uint32_t count) : bytes_(bytes), count_(count) {}

  uint32_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  T operator[](uint32_t i) const {
    T value;
    std::memcpy(&value, bytes_.data() + size_t{i} * sizeof(T), sizeof(T));
    return value;
  }

 private:
  ConstBytes bytes_;
  uint32_t count_ = 0;
};

// One struct per operation. Where two opcodes differ only in their wire form, one struct serves
// both (RENAME and RENAME2, SETLK and SETLKW, COPY_FILE_RANGE and COPY_FILE_RANGE_64).
namespace op {
struct Lookup {
  std::string_view name;
};
struct Forget {
  wire::ForgetIn in;
};
struct Getattr {
  wire::GetattrIn in;
};
// A time SETATTR sets: the one given, or the server's current time (touch, utimensat UTIME_NOW).
struct SetTime {
  bool now = false;
  uint64_t seconds = 0;
  uint32_t nanoseconds = 0;
};

// Each accessor answers nothing when the kernel does not ask to change that attribute (its bit
// in in.valid is clear); in is the raw request.
struct Setattr {
  wire::SetattrIn in;

  std::optional<uint32_t> mode() const { return Field(wire::kFattrMode, in.mode); }
  std::optional<uint32_t> uid() const { return Field(wire::kFattrUid, in.uid); }
  std::optional<uint32_t> gid() const { return Field(wire::kFattrGid, in.gid); }
  std::optional<uint64_t> size() const { return Field(wire::kFattrSize, in.size); }
  // The open file the change comes through (ftruncate, fchmod...).
  std::optional<uint64_t> fh() const { return Field(wire::kFattrFh, in.fh); }
  std::optional<uint64_t> lock_owner() const { return Field(wire::kFattrLockOwner, in.lock_owner); }
  std::optional<SetTime> atime() const {
    return Time(wire::kFattrAtime, wire::kFattrAtimeNow, in.atime, in.atimensec);
  }
  std::optional<SetTime> mtime() const {
    return Time(wire::kFattrMtime, wire::kFattrMtimeNow, in.mtime, in.mtimensec);
  }
  std::optional<SetTime> ctime() const {
    return Time(wire::kFattrCtime, 0, in.ctime, in.ctimensec);
  }
  // A write or truncate by someone else than the owner: clear setuid and setgid
  // (HANDLE_KILLPRIV_V2).
  bool kill_suid_gid() const { return (in.valid & wire::kFattrKillSuidGid) != 0; }

 private:
  template <typename T>
  std::optional<T> Field(uint32_t bit, T value) const {
    if ((in.valid & bit) == 0) return std::nullopt;
    return value;
  }
  std::optional<SetTime> Time(uint32_t bit, uint32_t now_bit, uint64_t seconds,
                              uint32_t nanoseconds) const {
    if ((in.valid & now_bit) != 0) return SetTime{.now = true};
    if ((in.valid & bit) == 0) return std::nullopt;
    return SetTime{.now = false, .seconds = seconds, .nanoseconds = nanoseconds};
  }
};
struct Readlink {};
struct Symlink {
  std::string_view name;
  std::string_view target;
};
struct Mknod {
  wire::MknodIn in;
  std::string_view name;
};
struct Mkdir {
  wire::MkdirIn in;
  std::string_view name;
};
struct Unlink {
  std::string_view name;
};
struct Rmdir {
  std::string_view name;
};
struct Rename {
  uint64_t newdir;
  uint32_t flags;
  std::string_view old_name;
  std::string_view new_name;
};
struct Link {
  wire::LinkIn in;
  std::string_view new_name;
};
struct Open {
  wire::OpenIn in;
};
struct Read {
  wire::ReadIn in;
};
struct Write {
  wire::WriteIn in;
  ConstBytes data;
};
struct Statfs {};
struct Release {
  wire::ReleaseIn in;
};
struct Fsync {
  wire::FsyncIn in;
};
struct Setxattr {
  wire::SetxattrIn in;
  std::string_view name;
  ConstBytes value;
};
struct Getxattr {
  wire::GetxattrIn in;
  std::string_view name;
};
struct Listxattr {
  wire::GetxattrIn in;
};
struct Removexattr {
  std::string_view name;
};
struct Flush {
  wire::FlushIn in;
};
struct Init {
  wire::InitIn in;
};
struct Opendir {
  wire::OpenIn in;
};
struct Readdir {
  wire::ReadIn in;
};
struct Releasedir {
  wire::ReleaseIn in;
};
struct Fsyncdir {
  wire::FsyncIn in;
};
struct Getlk {
  wire::LkIn in;
};
struct Setlk {
  wire::LkIn in;
  bool wait;
};  // wait: SETLKW
struct Access {
  wire::AccessIn in;
};
struct Create {
  wire::CreateIn in;
  std::string_view name;
};
struct Interrupt {
  wire::InterruptIn in;
};
struct Bmap {
  wire::BmapIn in;
};
struct Destroy {};
struct Ioctl {
  wire::IoctlIn in;
  ConstBytes in_data;
};
struct Poll {
  wire::PollIn in;
};
struct NotifyReply {
  wire::NotifyRetrieveIn in;
  ConstBytes data;
};
struct BatchForget {
  RecordArray<wire::ForgetOne> forgets;
};
struct Fallocate {
  wire::FallocateIn in;
};
struct Readdirplus {
  wire::ReadIn in;
};
struct Lseek {
  wire::LseekIn in;
};
struct CopyFileRange {
  wire::CopyFileRangeIn in;
  bool wide_reply;
};  // wide: COPY_FILE_RANGE_64
struct SetupMapping {
  wire::SetupMappingIn in;
};
struct RemoveMapping {
  RecordArray<wire::RemoveMappingOne> mappings;
};
struct Syncfs {
  wire::SyncfsIn in;
};
struct Tmpfile {
  wire::CreateIn in;
  std::string_view name;
};
struct Statx {
  wire::StatxIn in;
};
}  // namespace op

namespace detail {
/// `Variant` with each of `Rest` appended that it does not hold yet, in order.
template <typename Variant, typename... Rest>
struct WithNewAlternatives {
  using type = Variant;
};
template <typename... Kept, typename Next, typename... Rest>
struct WithNewAlternatives<std::variant<Kept...>, Next, Rest...>
    : WithNewAlternatives<std::conditional_t<(std::is_same_v<Kept, Next> || ...),
                                             std::variant<Kept...>, std::variant<Kept..., Next>>,
                          Rest...> {};
}  // namespace detail

/// One alternative per op struct, in opcode order, from RINGFUSE_FOR_EACH_OPCODE; opcodes that
/// share a struct share its alternative.
using RequestArgs = detail::WithNewAlternatives<std::variant<>
#define RINGFUSE_ARGS(name, number, kernel_name, op_struct, ...) , op::op_struct
                                                    RINGFUSE_FOR_EACH_OPCODE(RINGFUSE_ARGS)
#undef RINGFUSE_ARGS
                                                >::type;

// Request extensions (7.38): what the kernel appended after the arguments.
struct Extensions {
  ConstBytes raw;                     // every extension, headers included
  RecordArray<uint32_t> supp_groups;  // FUSE_EXT_GROUPS, empty when absent
  ConstBytes security_context;        // the security-context extension, empty when absent
};

struct Request {
  wire::InHeader header;
  Opcode opcode;
  RequestArgs args;
  Extensions extensions;
};

enum class ParseErrorKind {
  kShortHeader,        // fewer bytes than a fuse_in_header
  kLengthMismatch,     // header.len disagrees with the bytes received
  kUnknownOpcode,      // no such opcode in protocol 7.45
  kTruncatedArgument,  // an argument runs past the end of the message
  kNameWithoutNul,     // a name is not NUL-terminated inside the message
  kNameTooLong,        // a name is longer than the kernel itself allows
  kBadExtension,       // the request extensions are malformed
  kSizeTooLarge,       // a requested reply size beyond what the connection allows
};

std::string_view ParseErrorKindName(ParseErrorKind kind);

struct ParseError {
  ParseErrorKind kind;
  uint32_t opcode = 0;             // 0 when the header could not be read
  std::optional<uint64_t> unique;  // set when the header could be read
  std::string_view argument;       // which argument, where one is to blame

  std::string ToString() const;
  absl::Status ToStatus() const;
};

using ParseResult = std::variant<Request, ParseError>;

// A whole message as read from /dev/fuse: fuse_in_header, arguments, extensions.
ParseResult ParseRequest(ConstBytes message, const ParseContext& context);

// A request delivered over FUSE-over-io_uring, where the kernel splits it: the fuse_in_header
// (in_out), the fixed argument struct (op_in, stale for opcodes without one) and everything else
// (the payload, payload_sz bytes). NOTIFY_REPLY and REMOVEMAPPING carry their fixed struct at
// the start of the payload instead. header.len is not checked: the kernel does not keep it exact.
ParseResult ParseRingRequest(ConstBytes in_out, ConstBytes op_in, ConstBytes payload,
                             const ParseContext& context);

}  // namespace ringfuse

RINGFUSE_PUBLIC_END
