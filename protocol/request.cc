#include "ringfuse/request.h"

#include <algorithm>
#include <array>
#include <concepts>
#include <tuple>
#include <type_traits>
#include <utility>

#include "absl/strings/str_format.h"
#include "base/reader.h"
#include "protocol/request_unique.h"
#include "ringfuse/protocol/frames.h"
#include "ringfuse/protocol/parse.h"

namespace ringfuse {
namespace {

// Bytes of the fixed argument struct this connection's kernel sends for an opcode.
size_t FixedSize(const OpcodeInfo& info, const ParseContext& context) {
  if (info.opcode == Opcode::kSetxattr && !context.setxattr_ext) return wire::kCompatSetxattrInSize;
  return info.fixed_size;
}

// The list's fixed structs, named as ringfuse::wire names them, and None (as in opcode.cc).
namespace fixed {
using namespace wire;  // NOLINT(google-build-using-namespace): the list's bare struct names
struct None {};
}  // namespace fixed

// An opcode's row of RINGFUSE_FOR_EACH_OPCODE, as the parser reads it: the op struct it makes,
// the fixed struct, how many names follow it and what comes after them.
template <Opcode>
struct Row;
#define RINGFUSE_ROW(enumerator, number, kernel_name, op_struct, reply, fixed_struct, name_count, \
                     tail_kind, ...)                                                              \
  template <>                                                                                     \
  struct Row<Opcode::k##enumerator> {                                                             \
    using Op = op::op_struct;                                                                     \
    using Fixed = fixed::fixed_struct;                                                            \
    static constexpr size_t kNames = name_count;                                                  \
    static constexpr Tail kTail = Tail::k##tail_kind;                                             \
  };
RINGFUSE_FOR_EACH_OPCODE(RINGFUSE_ROW)
#undef RINGFUSE_ROW

// Selects an opcode's rules and its Make.
template <Opcode>
struct Tag {};

// How the parser checks a name: what a ParseError calls it and the longest the kernel sends.
struct NameRule {
  std::string_view what;
  size_t max_length = 0;
};
constexpr NameRule kEntryName{"name", wire::kNameMax};
constexpr NameRule kSymlinkTarget{"symlink target", wire::kSymlinkTargetMax};
constexpr NameRule kOldName{"old name", wire::kNameMax};
constexpr NameRule kNewName{"new name", wire::kNameMax};
constexpr NameRule kXattrName{"xattr name", wire::kXattrNameMax};

// The rule for name `index` of an opcode whose row has names; none (an empty `what`, which does
// not compile where the parser reads it) for any other.
constexpr NameRule NameRuleOf(Opcode opcode, size_t index) {
  switch (opcode) {
    case Opcode::kLookup:
    case Opcode::kMknod:
    case Opcode::kMkdir:
    case Opcode::kUnlink:
    case Opcode::kRmdir:
    case Opcode::kCreate:
    case Opcode::kTmpfile: return index == 0 ? kEntryName : NameRule{};
    case Opcode::kSymlink:
      return index == 0 ? kEntryName : index == 1 ? kSymlinkTarget : NameRule{};
    case Opcode::kRename:
    case Opcode::kRename2: return index == 0 ? kOldName : index == 1 ? kNewName : NameRule{};
    case Opcode::kLink: return index == 0 ? kNewName : NameRule{};
    case Opcode::kSetxattr:
    case Opcode::kGetxattr:
    case Opcode::kRemovexattr: return index == 0 ? kXattrName : NameRule{};
    default: return {};
  }
}

// The tail that follows the names where the row says Data or NameAndData: its length, given by
// the fixed struct, and what a ParseError calls it. One per fixed struct of such a row.
struct DataTail {
  uint64_t size;
  std::string_view what;
};
DataTail TailOf(const wire::WriteIn& in) { return {in.size, "write data"}; }
DataTail TailOf(const wire::SetxattrIn& in) { return {in.size, "xattr value"}; }
DataTail TailOf(const wire::IoctlIn& in) { return {in.in_size, "ioctl input"}; }
DataTail TailOf(const wire::NotifyRetrieveIn& in) { return {in.size, "retrieved data"}; }

// The tail where the row says Records: how many records of which type the fixed struct announces.
template <typename T>
struct RecordsTail {
  using Record = T;
  uint32_t count;
  std::string_view what;
};
RecordsTail<wire::ForgetOne> TailOf(const wire::BatchForgetIn& in) {
  return {in.count, "forget records"};
}
RecordsTail<wire::RemoveMappingOne> TailOf(const wire::RemoveMappingIn& in) {
  return {in.count, "mapping records"};
}

// What the parser read of a row's tail where the row says None or Names: nothing.
struct NoTail {};

// One per opcode: the op struct from what the parser read as its row says, and nothing else:
// the fixed struct (unless None), then each of the `names` names, then the tail (Data and
// NameAndData: ConstBytes; Records: a RecordArray). A row and its Make that disagree do not
// compile, since the parser calls Make with exactly what it read.
op::Lookup Make(Tag<Opcode::kLookup>, std::string_view name) { return {name}; }
op::Forget Make(Tag<Opcode::kForget>, const wire::ForgetIn& in) { return {in}; }
op::Getattr Make(Tag<Opcode::kGetattr>, const wire::GetattrIn& in) { return {in}; }
op::Setattr Make(Tag<Opcode::kSetattr>, const wire::SetattrIn& in) { return {in}; }
op::Readlink Make(Tag<Opcode::kReadlink>) { return {}; }
op::Symlink Make(Tag<Opcode::kSymlink>, std::string_view name, std::string_view target) {
  return {name, target};
}
op::Mknod Make(Tag<Opcode::kMknod>, const wire::MknodIn& in, std::string_view name) {
  return {in, name};
}
op::Mkdir Make(Tag<Opcode::kMkdir>, const wire::MkdirIn& in, std::string_view name) {
  return {in, name};
}
op::Unlink Make(Tag<Opcode::kUnlink>, std::string_view name) { return {name}; }
op::Rmdir Make(Tag<Opcode::kRmdir>, std::string_view name) { return {name}; }
op::Rename Make(Tag<Opcode::kRename>, const wire::RenameIn& in, std::string_view old_name,
                std::string_view new_name) {
  // RENAME has no flags: the same struct as RENAME2 with flags 0.
  return {wire::Rename2In{.newdir = in.newdir, .flags = 0, .padding = 0}, old_name, new_name};
}
op::Link Make(Tag<Opcode::kLink>, const wire::LinkIn& in, std::string_view new_name) {
  return {in, new_name};
}
op::Open Make(Tag<Opcode::kOpen>, const wire::OpenIn& in) { return {in}; }
op::Read Make(Tag<Opcode::kRead>, const wire::ReadIn& in) { return {in}; }
op::Write Make(Tag<Opcode::kWrite>, const wire::WriteIn& in, ConstBytes data) { return {in, data}; }
op::Statfs Make(Tag<Opcode::kStatfs>) { return {}; }
op::Release Make(Tag<Opcode::kRelease>, const wire::ReleaseIn& in) { return {in}; }
op::Fsync Make(Tag<Opcode::kFsync>, const wire::FsyncIn& in) { return {in}; }
op::Setxattr Make(Tag<Opcode::kSetxattr>, const wire::SetxattrIn& in, std::string_view name,
                  ConstBytes value) {
  return {in, name, value};
}
op::Getxattr Make(Tag<Opcode::kGetxattr>, const wire::GetxattrIn& in, std::string_view name) {
  return {in, name};
}
op::Listxattr Make(Tag<Opcode::kListxattr>, const wire::GetxattrIn& in) { return {in}; }
op::Removexattr Make(Tag<Opcode::kRemovexattr>, std::string_view name) { return {name}; }
op::Flush Make(Tag<Opcode::kFlush>, const wire::FlushIn& in) { return {in}; }
op::Init Make(Tag<Opcode::kInit>, const wire::InitIn& in) { return {in}; }
op::Opendir Make(Tag<Opcode::kOpendir>, const wire::OpenIn& in) { return {in}; }
op::Readdir Make(Tag<Opcode::kReaddir>, const wire::ReadIn& in) { return {in}; }
op::Releasedir Make(Tag<Opcode::kReleasedir>, const wire::ReleaseIn& in) { return {in}; }
op::Fsyncdir Make(Tag<Opcode::kFsyncdir>, const wire::FsyncIn& in) { return {in}; }
op::Getlk Make(Tag<Opcode::kGetlk>, const wire::LkIn& in) { return {in}; }
op::Setlk Make(Tag<Opcode::kSetlk>, const wire::LkIn& in) { return {in, false}; }
op::Setlk Make(Tag<Opcode::kSetlkw>, const wire::LkIn& in) { return {in, true}; }
op::Access Make(Tag<Opcode::kAccess>, const wire::AccessIn& in) { return {in}; }
op::Create Make(Tag<Opcode::kCreate>, const wire::CreateIn& in, std::string_view name) {
  return {in, name};
}
op::Interrupt Make(Tag<Opcode::kInterrupt>, const wire::InterruptIn& in) { return {in}; }
op::Bmap Make(Tag<Opcode::kBmap>, const wire::BmapIn& in) { return {in}; }
op::Destroy Make(Tag<Opcode::kDestroy>) { return {}; }
op::Ioctl Make(Tag<Opcode::kIoctl>, const wire::IoctlIn& in, ConstBytes in_data) {
  return {in, in_data};
}
op::Poll Make(Tag<Opcode::kPoll>, const wire::PollIn& in) { return {in}; }
op::NotifyReply Make(Tag<Opcode::kNotifyReply>, const wire::NotifyRetrieveIn& in, ConstBytes data) {
  return {in, data};
}
op::BatchForget Make(Tag<Opcode::kBatchForget>, const wire::BatchForgetIn& /*in*/,
                     RecordArray<wire::ForgetOne> forgets) {
  return {forgets};
}
op::Fallocate Make(Tag<Opcode::kFallocate>, const wire::FallocateIn& in) { return {in}; }
op::Readdirplus Make(Tag<Opcode::kReaddirplus>, const wire::ReadIn& in) { return {in}; }
op::Rename Make(Tag<Opcode::kRename2>, const wire::Rename2In& in, std::string_view old_name,
                std::string_view new_name) {
  return {in, old_name, new_name};
}
op::Lseek Make(Tag<Opcode::kLseek>, const wire::LseekIn& in) { return {in}; }
op::CopyFileRange Make(Tag<Opcode::kCopyFileRange>, const wire::CopyFileRangeIn& in) {
  return {in, false};
}
op::SetupMapping Make(Tag<Opcode::kSetupMapping>, const wire::SetupMappingIn& in) { return {in}; }
op::RemoveMapping Make(Tag<Opcode::kRemoveMapping>, const wire::RemoveMappingIn& /*in*/,
                       RecordArray<wire::RemoveMappingOne> mappings) {
  return {mappings};
}
op::Syncfs Make(Tag<Opcode::kSyncfs>, const wire::SyncfsIn& in) { return {in}; }
op::Tmpfile Make(Tag<Opcode::kTmpfile>, const wire::CreateIn& in, std::string_view name) {
  return {in, name};
}
op::Statx Make(Tag<Opcode::kStatx>, const wire::StatxIn& in) { return {in}; }
op::CopyFileRange Make(Tag<Opcode::kCopyFileRange64>, const wire::CopyFileRangeIn& in) {
  return {in, true};
}

// An opcode's Make gives exactly the op struct its row lists, not one convertible to it.
template <typename ListedArgs, typename ParsedArgs>
requires std::same_as<ListedArgs, ParsedArgs> ListedArgs Listed(ParsedArgs args) { return args; }

// Reads one request's arguments from its fixed struct and its tail, as the opcode's row says:
// the row's fixed struct, its `names` names, then its tail; the opcode's Make assembles them.
// The first failure is kept; every read returns nothing after it.
class ArgumentParser {
 public:
  ArgumentParser(const wire::InHeader& header, ConstBytes fixed, ConstBytes tail,
                 const ParseContext& context)
      : header_(header), fixed_(fixed), tail_(tail), context_(context) {}

  std::optional<RequestArgs> Parse(Opcode opcode);
  const std::optional<ParseError>& error() const { return error_; }

 private:
  // The opcode's row, read in wire order and assembled by its Make.
  template <Opcode kOpcode>
  typename Row<kOpcode>::Op Read() {
    using ThisRow = Row<kOpcode>;
    const auto in = Fixed<typename ThisRow::Fixed>();
    CheckFixed(Tag<kOpcode>{}, in);
    const std::array<std::string_view, ThisRow::kNames> names =
        Names<kOpcode>(std::make_index_sequence<ThisRow::kNames>{});
    const auto tail = ReadTail<ThisRow::kTail>(in);
    // Make takes exactly what was read: the fixed struct unless None, the names, the tail if any.
    const auto parts = std::tuple_cat(FixedPart(in), NamesPart(names), TailPart(tail));
    return Listed<typename ThisRow::Op>(
        std::apply([](const auto&... part) { return Make(Tag<kOpcode>{}, part...); }, parts));
  }

  template <typename T>
  static std::tuple<T> FixedPart(const T& in) {
    return std::tuple<T>(in);
  }
  static std::tuple<> FixedPart(fixed::None /*none*/) { return {}; }
  template <size_t kCount>
  static auto NamesPart(const std::array<std::string_view, kCount>& names) {
    return std::apply([](auto... name) { return std::tuple(name...); }, names);
  }
  template <typename T>
  static std::tuple<T> TailPart(const T& tail) {
    return std::tuple<T>(tail);
  }
  static std::tuple<> TailPart(NoTail /*none*/) { return {}; }

  template <typename T>
  T Fixed() {
    T value{};
    if constexpr (std::is_same_v<T, fixed::None>) {
      return value;
    } else {
      if (error_) return value;
      const std::optional<T> read = fixed_.ReadPrefix<T>(std::min(fixed_.remaining(), sizeof(T)));
      return read.value_or(value);
    }
  }

  // Before the names: a request asking for a reply larger than the connection (READ, READDIR,
  // READDIRPLUS) or the VFS (GETXATTR, LISTXATTR) allows.
  template <Opcode kOpcode, typename T>
  void CheckFixed(Tag<kOpcode> /*tag*/, const T& /*in*/) {}
  void CheckFixed(Tag<Opcode::kRead> /*tag*/, const wire::ReadIn& in) {
    ReplySize(in.size, context_.max_reply, "read size");
  }
  void CheckFixed(Tag<Opcode::kReaddir> /*tag*/, const wire::ReadIn& in) {
    ReplySize(in.size, context_.max_reply, "readdir size");
  }
  void CheckFixed(Tag<Opcode::kReaddirplus> /*tag*/, const wire::ReadIn& in) {
    ReplySize(in.size, context_.max_reply, "readdirplus size");
  }
  void CheckFixed(Tag<Opcode::kGetxattr> /*tag*/, const wire::GetxattrIn& in) {
    ReplySize(in.size, wire::kXattrSizeMax, "size");
  }
  void CheckFixed(Tag<Opcode::kListxattr> /*tag*/, const wire::GetxattrIn& in) {
    ReplySize(in.size, wire::kXattrSizeMax, "size");
  }
  void ReplySize(uint32_t size, uint32_t limit, std::string_view what) {
    if (!error_ && size > limit) Fail(ParseErrorKind::kSizeTooLarge, what);
  }

  // The row's names, each checked by its NameRuleOf.
  template <Opcode kOpcode, size_t... kIndex>
  std::array<std::string_view, sizeof...(kIndex)> Names(std::index_sequence<kIndex...> /*seq*/) {
    return {NameAt<kOpcode, kIndex>()...};  // a braced list: read in order
  }
  template <Opcode kOpcode, size_t kIndex>
  std::string_view NameAt() {
    constexpr NameRule kRule = NameRuleOf(kOpcode, kIndex);
    static_assert(!kRule.what.empty(), "an opcode row has a name NameRuleOf has no rule for");
    return Name(kRule.what, kRule.max_length);
  }

  // The row's tail after the names: nothing, the data or the records its fixed struct announces.
  template <Tail kTail, typename T>
  auto ReadTail(const T& in) {
    if constexpr (kTail == Tail::kNone || kTail == Tail::kNames) {
      return NoTail{};
    } else if constexpr (kTail == Tail::kData || kTail == Tail::kNameAndData) {
      const DataTail tail = TailOf(in);
      return Data(tail.size, tail.what);
    } else {
      static_assert(kTail == Tail::kRecords);
      const auto tail = TailOf(in);
      return Records<typename decltype(tail)::Record>(tail.count, tail.what);
    }
  }

  std::string_view Name(std::string_view what, size_t max_length) {
    if (error_) return {};
    const std::optional<std::string_view> name = tail_.ReadCString();
    if (!name) {
      Fail(tail_.remaining() == 0 ? ParseErrorKind::kTruncatedArgument
                                  : ParseErrorKind::kNameWithoutNul,
           what);
      return {};
    }
    if (name->size() > max_length) Fail(ParseErrorKind::kNameTooLong, what);
    return *name;
  }

  ConstBytes Data(uint64_t size, std::string_view what) {
    if (error_) return {};
    const std::optional<ConstBytes> data =
        size <= tail_.remaining() ? tail_.ReadBytes(size) : std::nullopt;
    if (!data) Fail(ParseErrorKind::kTruncatedArgument, what);
    return data.value_or(ConstBytes{});
  }

  template <typename T>
  RecordArray<T> Records(uint32_t count, std::string_view what) {
    const ConstBytes bytes = Data(uint64_t{count} * sizeof(T), what);
    return error_ ? RecordArray<T>{} : RecordArray<T>(bytes, count);
  }

  void Fail(ParseErrorKind kind, std::string_view what) {
    if (!error_) error_ = ParseError{kind, header_.opcode, header_.unique, what};
  }

  const wire::InHeader& header_;
  base::Reader fixed_;
  base::Reader tail_;
  const ParseContext& context_;
  std::optional<ParseError> error_;
};

std::optional<RequestArgs> ArgumentParser::Parse(Opcode opcode) {
  RequestArgs args;
  switch (opcode) {
#define RINGFUSE_PARSE(name, ...) \
  case Opcode::k##name: args = Read<Opcode::k##name>(); break;
    RINGFUSE_FOR_EACH_OPCODE(RINGFUSE_PARSE)
#undef RINGFUSE_PARSE
  }
  if (error_) return std::nullopt;
  return args;
}

// Walks the extension list: each extension is an ExtHeader whose size covers itself.
std::optional<ParseError> ParseExtensions(const wire::InHeader& header, ConstBytes raw,
                                          Extensions& out) {
  const ParseError bad{ParseErrorKind::kBadExtension, header.opcode, header.unique, "extension"};
  out.raw = raw;
  base::Reader reader(raw);
  while (reader.remaining() > 0) {
    const ConstBytes rest = reader.rest();
    const std::optional<wire::ExtHeader> ext = reader.Read<wire::ExtHeader>();
    if (!ext || ext->size < sizeof(wire::ExtHeader) || ext->size % 8 != 0 ||
        ext->size > rest.size()) {
      return bad;
    }
    const ConstBytes body =
        rest.subspan(sizeof(wire::ExtHeader), ext->size - sizeof(wire::ExtHeader));
    reader = base::Reader(rest.subspan(ext->size));
    if (ext->type <= wire::kMaxNrSecctx) {
      out.security_context = rest.first(ext->size);
    } else if (ext->type == wire::kExtGroups) {
      base::Reader groups(body);
      const std::optional<wire::SuppGroups> head = groups.Read<wire::SuppGroups>();
      if (!head || uint64_t{head->nr_groups} * sizeof(uint32_t) > groups.remaining()) return bad;
      out.supp_groups = RecordArray<uint32_t>(groups.rest(), head->nr_groups);
    }
  }
  return std::nullopt;
}

// Shared by both entry points once the header is read and the message split in three parts.
ParseResult ParseParts(const wire::InHeader& header, ConstBytes fixed_area, ConstBytes tail_and_ext,
                       const ParseContext& context) {
  const std::optional<OpcodeInfo> info = LookupOpcode(header.opcode);
  if (!info) return ParseError{ParseErrorKind::kUnknownOpcode, header.opcode, header.unique, {}};

  // Extensions exist from 7.38 on; before that the field was padding and must be ignored.
  const size_t ext_bytes = context.minor >= 38 ? size_t{header.total_extlen} * 8 : 0;
  if (ext_bytes > tail_and_ext.size()) {
    return ParseError{ParseErrorKind::kBadExtension, header.opcode, header.unique, "extension"};
  }
  const ConstBytes tail = tail_and_ext.first(tail_and_ext.size() - ext_bytes);

  const size_t fixed_size = FixedSize(*info, context);
  const size_t minimum_fixed = info->opcode == Opcode::kInit ? wire::kCompatInitInSize : fixed_size;
  if (fixed_area.size() < minimum_fixed) {
    return ParseError{ParseErrorKind::kTruncatedArgument, header.opcode, header.unique,
                      "fixed argument"};
  }

  Request request{header, info->opcode, {}, {}};
  if (auto error = ParseExtensions(header, tail_and_ext.last(ext_bytes), request.extensions)) {
    return *error;
  }
  ArgumentParser parser(header, fixed_area.first(std::min(fixed_area.size(), fixed_size)), tail,
                        context);
  std::optional<RequestArgs> args = parser.Parse(info->opcode);
  if (!args) return *parser.error();
  request.args = std::move(*args);
  return request;
}

}  // namespace

std::string_view ParseErrorKindName(ParseErrorKind kind) {
  switch (kind) {
    case ParseErrorKind::kShortHeader: return "short header";
    case ParseErrorKind::kLengthMismatch: return "length mismatch";
    case ParseErrorKind::kUnknownOpcode: return "unknown opcode";
    case ParseErrorKind::kTruncatedArgument: return "truncated argument";
    case ParseErrorKind::kNameWithoutNul: return "name without NUL";
    case ParseErrorKind::kNameTooLong: return "name too long";
    case ParseErrorKind::kBadExtension: return "malformed request extension";
    case ParseErrorKind::kSizeTooLarge: return "reply size beyond what was negotiated";
  }
  return "unknown parse error";
}

std::string ParseError::ToString() const {
  std::string text =
      absl::StrFormat("%s in %s (opcode %u", ParseErrorKindName(kind), OpcodeName(opcode), opcode);
  if (unique) absl::StrAppendFormat(&text, ", unique %u", *unique);
  text += ")";
  if (!argument.empty()) absl::StrAppendFormat(&text, ": %s", argument);
  return text;
}

absl::Status ParseError::ToStatus() const { return absl::InvalidArgumentError(ToString()); }

ParseResult ParseRequest(ConstBytes message, const ParseContext& context) {
  base::Reader reader(message);
  const std::optional<wire::InHeader> header = reader.Read<wire::InHeader>();
  if (!header) {
    ParseError error{ParseErrorKind::kShortHeader, 0, std::nullopt, {}};
    // Answerable even when the rest of the header is missing.
    error.unique = internal::ReadUnique(message);
    if (error.unique) {
      std::memcpy(&error.opcode, message.data() + offsetof(wire::InHeader, opcode),
                  sizeof(error.opcode));
    }
    return error;
  }
  if (header->len != message.size()) {
    return ParseError{ParseErrorKind::kLengthMismatch, header->opcode, header->unique, {}};
  }
  const std::optional<OpcodeInfo> info = LookupOpcode(header->opcode);
  const size_t fixed_size = info ? FixedSize(*info, context) : 0;
  const ConstBytes body = reader.rest();
  // INIT's struct grew over time: whatever the kernel sent, up to our size, is the fixed part.
  const size_t split = std::min(body.size(), fixed_size);
  return ParseParts(*header, body.first(split), body.subspan(split), context);
}

ParseResult ParseRingRequest(ConstBytes in_out, ConstBytes op_in, ConstBytes payload,
                             const ParseContext& context) {
  const std::optional<wire::InHeader> header = base::Reader(in_out).Read<wire::InHeader>();
  if (!header) return ParseError{ParseErrorKind::kShortHeader, 0, std::nullopt, {}};
  const std::optional<OpcodeInfo> info = LookupOpcode(header->opcode);
  if (info && info->fixed_in_ring_payload) {
    const size_t split = std::min(payload.size(), FixedSize(*info, context));
    return ParseParts(*header, payload.first(split), payload.subspan(split), context);
  }
  return ParseParts(*header, op_in, payload, context);
}

}  // namespace ringfuse
