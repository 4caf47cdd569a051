#include "ringfuse/request.h"

#include <algorithm>
#include <concepts>

#include "absl/strings/str_format.h"
#include "base/reader.h"
#include "protocol/request_unique.h"
#include "ringfuse/protocol/parse.h"

namespace ringfuse {
namespace {

// Bytes of the fixed argument struct this connection's kernel sends for an opcode.
size_t FixedSize(const OpcodeInfo& info, const ParseContext& context) {
  if (info.opcode == Opcode::kSetxattr && !context.setxattr_ext) return wire::kCompatSetxattrInSize;
  return info.fixed_size;
}

// Selects an opcode's parse function.
template <Opcode>
struct Tag {};

// An opcode's parse gives exactly the op struct its row lists, not one convertible to it.
template <typename ListedArgs, typename ParsedArgs>
requires std::same_as<ListedArgs, ParsedArgs> ListedArgs Listed(ParsedArgs args) { return args; }

// Reads one request's arguments from its fixed struct and its tail. The first failure is kept;
// every accessor returns nothing after it, so a per-opcode parse is a straight line of reads.
class ArgumentParser {
 public:
  ArgumentParser(const wire::InHeader& header, ConstBytes fixed, ConstBytes tail,
                 const ParseContext& context)
      : header_(header), fixed_(fixed), tail_(tail), context_(context) {}

  std::optional<RequestArgs> Parse(Opcode opcode);
  const std::optional<ParseError>& error() const { return error_; }

 private:
  template <typename T>
  T Fixed() {
    T value{};
    if (error_) return value;
    const std::optional<T> read = fixed_.ReadPrefix<T>(std::min(fixed_.remaining(), sizeof(T)));
    return read.value_or(value);
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

  // A fixed struct whose `size` asks for a reply of that many bytes, at most `limit`.
  template <typename T>
  T SizedReply(uint32_t limit, std::string_view what) {
    const T in = Fixed<T>();
    if (!error_ && in.size > limit) Fail(ParseErrorKind::kSizeTooLarge, what);
    return in;
  }
  wire::ReadIn ReadSize(std::string_view what) {
    return SizedReply<wire::ReadIn>(context_.max_reply, what);
  }
  wire::GetxattrIn XattrSize() { return SizedReply<wire::GetxattrIn>(wire::kXattrSizeMax, "size"); }

  template <typename T>
  RecordArray<T> Records(uint32_t count, std::string_view what) {
    const ConstBytes bytes = Data(uint64_t{count} * sizeof(T), what);
    return error_ ? RecordArray<T>{} : RecordArray<T>(bytes, count);
  }

  void Fail(ParseErrorKind kind, std::string_view what) {
    if (!error_) error_ = ParseError{kind, header_.opcode, header_.unique, what};
  }

  std::string_view EntryName() { return Name("name", wire::kNameMax); }
  std::string_view XattrName() { return Name("xattr name", wire::kXattrNameMax); }

  // One per opcode: its op struct, read in wire order.
  op::Lookup Parse(Tag<Opcode::kLookup>) { return {EntryName()}; }
  op::Forget Parse(Tag<Opcode::kForget>) { return {Fixed<wire::ForgetIn>()}; }
  op::Getattr Parse(Tag<Opcode::kGetattr>) { return {Fixed<wire::GetattrIn>()}; }
  op::Setattr Parse(Tag<Opcode::kSetattr>) { return {Fixed<wire::SetattrIn>()}; }
  op::Readlink Parse(Tag<Opcode::kReadlink>) { return {}; }
  op::Symlink Parse(Tag<Opcode::kSymlink>) {
    const std::string_view name = EntryName();
    return {name, Name("symlink target", wire::kSymlinkTargetMax)};
  }
  op::Mknod Parse(Tag<Opcode::kMknod>) {
    const auto in = Fixed<wire::MknodIn>();
    return {in, EntryName()};
  }
  op::Mkdir Parse(Tag<Opcode::kMkdir>) {
    const auto in = Fixed<wire::MkdirIn>();
    return {in, EntryName()};
  }
  op::Unlink Parse(Tag<Opcode::kUnlink>) { return {EntryName()}; }
  op::Rmdir Parse(Tag<Opcode::kRmdir>) { return {EntryName()}; }
  op::Rename Parse(Tag<Opcode::kRename>) {
    const auto in = Fixed<wire::RenameIn>();
    return Rename(wire::Rename2In{.newdir = in.newdir, .flags = 0, .padding = 0});
  }
  op::Link Parse(Tag<Opcode::kLink>) {
    const auto in = Fixed<wire::LinkIn>();
    return {in, Name("new name", wire::kNameMax)};
  }
  op::Open Parse(Tag<Opcode::kOpen>) { return {Fixed<wire::OpenIn>()}; }
  op::Read Parse(Tag<Opcode::kRead>) { return {ReadSize("read size")}; }
  op::Write Parse(Tag<Opcode::kWrite>) {
    const auto in = Fixed<wire::WriteIn>();
    return {in, Data(in.size, "write data")};
  }
  op::Statfs Parse(Tag<Opcode::kStatfs>) { return {}; }
  op::Release Parse(Tag<Opcode::kRelease>) { return {Fixed<wire::ReleaseIn>()}; }
  op::Fsync Parse(Tag<Opcode::kFsync>) { return {Fixed<wire::FsyncIn>()}; }
  op::Setxattr Parse(Tag<Opcode::kSetxattr>) {
    const auto in = Fixed<wire::SetxattrIn>();
    const std::string_view name = XattrName();
    return {in, name, Data(in.size, "xattr value")};
  }
  op::Getxattr Parse(Tag<Opcode::kGetxattr>) {
    const auto in = XattrSize();
    return {in, XattrName()};
  }
  op::Listxattr Parse(Tag<Opcode::kListxattr>) { return {XattrSize()}; }
  op::Removexattr Parse(Tag<Opcode::kRemovexattr>) { return {XattrName()}; }
  op::Flush Parse(Tag<Opcode::kFlush>) { return {Fixed<wire::FlushIn>()}; }
  op::Init Parse(Tag<Opcode::kInit>) { return {Fixed<wire::InitIn>()}; }
  op::Opendir Parse(Tag<Opcode::kOpendir>) { return {Fixed<wire::OpenIn>()}; }
  op::Readdir Parse(Tag<Opcode::kReaddir>) { return {ReadSize("readdir size")}; }
  op::Releasedir Parse(Tag<Opcode::kReleasedir>) { return {Fixed<wire::ReleaseIn>()}; }
  op::Fsyncdir Parse(Tag<Opcode::kFsyncdir>) { return {Fixed<wire::FsyncIn>()}; }
  op::Getlk Parse(Tag<Opcode::kGetlk>) { return {Fixed<wire::LkIn>()}; }
  op::Setlk Parse(Tag<Opcode::kSetlk>) { return {Fixed<wire::LkIn>(), false}; }
  op::Setlk Parse(Tag<Opcode::kSetlkw>) { return {Fixed<wire::LkIn>(), true}; }
  op::Access Parse(Tag<Opcode::kAccess>) { return {Fixed<wire::AccessIn>()}; }
  op::Create Parse(Tag<Opcode::kCreate>) {
    const auto in = Fixed<wire::CreateIn>();
    return {in, EntryName()};
  }
  op::Interrupt Parse(Tag<Opcode::kInterrupt>) { return {Fixed<wire::InterruptIn>()}; }
  op::Bmap Parse(Tag<Opcode::kBmap>) { return {Fixed<wire::BmapIn>()}; }
  op::Destroy Parse(Tag<Opcode::kDestroy>) { return {}; }
  op::Ioctl Parse(Tag<Opcode::kIoctl>) {
    const auto in = Fixed<wire::IoctlIn>();
    return {in, Data(in.in_size, "ioctl input")};
  }
  op::Poll Parse(Tag<Opcode::kPoll>) { return {Fixed<wire::PollIn>()}; }
  op::NotifyReply Parse(Tag<Opcode::kNotifyReply>) {
    const auto in = Fixed<wire::NotifyRetrieveIn>();
    return {in, Data(in.size, "retrieved data")};
  }
  op::BatchForget Parse(Tag<Opcode::kBatchForget>) {
    const auto in = Fixed<wire::BatchForgetIn>();
    return {Records<wire::ForgetOne>(in.count, "forget records")};
  }
  op::Fallocate Parse(Tag<Opcode::kFallocate>) { return {Fixed<wire::FallocateIn>()}; }
  op::Readdirplus Parse(Tag<Opcode::kReaddirplus>) { return {ReadSize("readdirplus size")}; }
  op::Rename Parse(Tag<Opcode::kRename2>) { return Rename(Fixed<wire::Rename2In>()); }
  op::Lseek Parse(Tag<Opcode::kLseek>) { return {Fixed<wire::LseekIn>()}; }
  op::CopyFileRange Parse(Tag<Opcode::kCopyFileRange>) {
    return {Fixed<wire::CopyFileRangeIn>(), false};
  }
  op::SetupMapping Parse(Tag<Opcode::kSetupMapping>) { return {Fixed<wire::SetupMappingIn>()}; }
  op::RemoveMapping Parse(Tag<Opcode::kRemoveMapping>) {
    const auto in = Fixed<wire::RemoveMappingIn>();
    return {Records<wire::RemoveMappingOne>(in.count, "mapping records")};
  }
  op::Syncfs Parse(Tag<Opcode::kSyncfs>) { return {Fixed<wire::SyncfsIn>()}; }
  op::Tmpfile Parse(Tag<Opcode::kTmpfile>) {
    const auto in = Fixed<wire::CreateIn>();
    return {in, EntryName()};
  }
  op::Statx Parse(Tag<Opcode::kStatx>) { return {Fixed<wire::StatxIn>()}; }
  op::CopyFileRange Parse(Tag<Opcode::kCopyFileRange64>) {
    return {Fixed<wire::CopyFileRangeIn>(), true};
  }

  // RENAME and RENAME2 after their fixed structs: the two names.
  op::Rename Rename(const wire::Rename2In& in) {
    const std::string_view old_name = Name("old name", wire::kNameMax);
    return {in, old_name, Name("new name", wire::kNameMax)};
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
#define RINGFUSE_PARSE(name, number, kernel_name, op_struct, ...) \
  case Opcode::k##name: args = Listed<op::op_struct>(Parse(Tag<Opcode::k##name>{})); break;
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
