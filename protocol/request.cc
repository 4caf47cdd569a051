#include "ringfuse/request.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "protocol/reader.h"
#include "protocol/request_unique.h"

namespace ringfuse {
namespace {

// Bytes of the fixed argument struct this connection's kernel sends for an opcode.
size_t FixedSize(const OpcodeInfo& info, const ParseContext& context) {
  if (info.opcode == Opcode::kSetxattr && !context.setxattr_ext) return wire::kCompatSetxattrInSize;
  return info.fixed_size;
}

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

  const wire::InHeader& header_;
  internal::Reader fixed_;
  internal::Reader tail_;
  const ParseContext& context_;
  std::optional<ParseError> error_;
};

std::optional<RequestArgs> ArgumentParser::Parse(Opcode opcode) {
  using wire::kNameMax;
  RequestArgs args;
  switch (opcode) {
    case Opcode::kLookup: args = op::Lookup{EntryName()}; break;
    case Opcode::kForget: args = op::Forget{Fixed<wire::ForgetIn>()}; break;
    case Opcode::kGetattr: args = op::Getattr{Fixed<wire::GetattrIn>()}; break;
    case Opcode::kSetattr: args = op::Setattr{Fixed<wire::SetattrIn>()}; break;
    case Opcode::kReadlink: args = op::Readlink{}; break;
    case Opcode::kSymlink: {
      const std::string_view name = EntryName();
      args = op::Symlink{name, Name("symlink target", wire::kSymlinkTargetMax)};
      break;
    }
    case Opcode::kMknod: {
      const auto in = Fixed<wire::MknodIn>();
      args = op::Mknod{in, EntryName()};
      break;
    }
    case Opcode::kMkdir: {
      const auto in = Fixed<wire::MkdirIn>();
      args = op::Mkdir{in, EntryName()};
      break;
    }
    case Opcode::kUnlink: args = op::Unlink{EntryName()}; break;
    case Opcode::kRmdir: args = op::Rmdir{EntryName()}; break;
    case Opcode::kRename: {
      const auto in = Fixed<wire::RenameIn>();
      const std::string_view old_name = Name("old name", kNameMax);
      args = op::Rename{in.newdir, 0, old_name, Name("new name", kNameMax)};
      break;
    }
    case Opcode::kRename2: {
      const auto in = Fixed<wire::Rename2In>();
      const std::string_view old_name = Name("old name", kNameMax);
      args = op::Rename{in.newdir, in.flags, old_name, Name("new name", kNameMax)};
      break;
    }
    case Opcode::kLink: {
      const auto in = Fixed<wire::LinkIn>();
      args = op::Link{in, Name("new name", kNameMax)};
      break;
    }
    case Opcode::kOpen: args = op::Open{Fixed<wire::OpenIn>()}; break;
    case Opcode::kRead: args = op::Read{ReadSize("read size")}; break;
    case Opcode::kWrite: {
      const auto in = Fixed<wire::WriteIn>();
      args = op::Write{in, Data(in.size, "write data")};
      break;
    }
    case Opcode::kStatfs: args = op::Statfs{}; break;
    case Opcode::kRelease: args = op::Release{Fixed<wire::ReleaseIn>()}; break;
    case Opcode::kFsync: args = op::Fsync{Fixed<wire::FsyncIn>()}; break;
    case Opcode::kSetxattr: {
      const auto in = Fixed<wire::SetxattrIn>();
      const std::string_view name = XattrName();
      args = op::Setxattr{in, name, Data(in.size, "xattr value")};
      break;
    }
    case Opcode::kGetxattr: {
      const auto in = XattrSize();
      args = op::Getxattr{in, XattrName()};
      break;
    }
    case Opcode::kListxattr: args = op::Listxattr{XattrSize()}; break;
    case Opcode::kRemovexattr: args = op::Removexattr{XattrName()}; break;
    case Opcode::kFlush: args = op::Flush{Fixed<wire::FlushIn>()}; break;
    case Opcode::kInit: args = op::Init{Fixed<wire::InitIn>()}; break;
    case Opcode::kOpendir: args = op::Opendir{Fixed<wire::OpenIn>()}; break;
    case Opcode::kReaddir: args = op::Readdir{ReadSize("readdir size")}; break;
    case Opcode::kReleasedir: args = op::Releasedir{Fixed<wire::ReleaseIn>()}; break;
    case Opcode::kFsyncdir: args = op::Fsyncdir{Fixed<wire::FsyncIn>()}; break;
    case Opcode::kGetlk: args = op::Getlk{Fixed<wire::LkIn>()}; break;
    case Opcode::kSetlk: args = op::Setlk{Fixed<wire::LkIn>(), false}; break;
    case Opcode::kSetlkw: args = op::Setlk{Fixed<wire::LkIn>(), true}; break;
    case Opcode::kAccess: args = op::Access{Fixed<wire::AccessIn>()}; break;
    case Opcode::kCreate: {
      const auto in = Fixed<wire::CreateIn>();
      args = op::Create{in, EntryName()};
      break;
    }
    case Opcode::kInterrupt: args = op::Interrupt{Fixed<wire::InterruptIn>()}; break;
    case Opcode::kBmap: args = op::Bmap{Fixed<wire::BmapIn>()}; break;
    case Opcode::kDestroy: args = op::Destroy{}; break;
    case Opcode::kIoctl: {
      const auto in = Fixed<wire::IoctlIn>();
      args = op::Ioctl{in, Data(in.in_size, "ioctl input")};
      break;
    }
    case Opcode::kPoll: args = op::Poll{Fixed<wire::PollIn>()}; break;
    case Opcode::kNotifyReply: {
      const auto in = Fixed<wire::NotifyRetrieveIn>();
      args = op::NotifyReply{in, Data(in.size, "retrieved data")};
      break;
    }
    case Opcode::kBatchForget: {
      const auto in = Fixed<wire::BatchForgetIn>();
      args = op::BatchForget{Records<wire::ForgetOne>(in.count, "forget records")};
      break;
    }
    case Opcode::kFallocate: args = op::Fallocate{Fixed<wire::FallocateIn>()}; break;
    case Opcode::kReaddirplus: args = op::Readdirplus{ReadSize("readdirplus size")}; break;
    case Opcode::kLseek: args = op::Lseek{Fixed<wire::LseekIn>()}; break;
    case Opcode::kCopyFileRange:
      args = op::CopyFileRange{Fixed<wire::CopyFileRangeIn>(), false};
      break;
    case Opcode::kCopyFileRange64:
      args = op::CopyFileRange{Fixed<wire::CopyFileRangeIn>(), true};
      break;
    case Opcode::kSetupMapping: args = op::SetupMapping{Fixed<wire::SetupMappingIn>()}; break;
    case Opcode::kRemoveMapping: {
      const auto in = Fixed<wire::RemoveMappingIn>();
      args = op::RemoveMapping{Records<wire::RemoveMappingOne>(in.count, "mapping records")};
      break;
    }
    case Opcode::kSyncfs: args = op::Syncfs{Fixed<wire::SyncfsIn>()}; break;
    case Opcode::kTmpfile: {
      const auto in = Fixed<wire::CreateIn>();
      args = op::Tmpfile{in, EntryName()};
      break;
    }
    case Opcode::kStatx: args = op::Statx{Fixed<wire::StatxIn>()}; break;
  }
  if (error_) return std::nullopt;
  return args;
}

// Walks the extension list: each extension is an ExtHeader whose size covers itself.
std::optional<ParseError> ParseExtensions(const wire::InHeader& header, ConstBytes raw,
                                          Extensions& out) {
  const ParseError bad{ParseErrorKind::kBadExtension, header.opcode, header.unique, "extension"};
  out.raw = raw;
  internal::Reader reader(raw);
  while (reader.remaining() > 0) {
    const ConstBytes rest = reader.rest();
    const std::optional<wire::ExtHeader> ext = reader.Read<wire::ExtHeader>();
    if (!ext || ext->size < sizeof(wire::ExtHeader) || ext->size % 8 != 0 ||
        ext->size > rest.size()) {
      return bad;
    }
    const ConstBytes body =
        rest.subspan(sizeof(wire::ExtHeader), ext->size - sizeof(wire::ExtHeader));
    reader = internal::Reader(rest.subspan(ext->size));
    if (ext->type <= wire::kMaxNrSecctx) {
      out.security_context = rest.first(ext->size);
    } else if (ext->type == wire::kExtGroups) {
      internal::Reader groups(body);
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
  internal::Reader reader(message);
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
  const std::optional<wire::InHeader> header = internal::Reader(in_out).Read<wire::InHeader>();
  if (!header) return ParseError{ParseErrorKind::kShortHeader, 0, std::nullopt, {}};
  const std::optional<OpcodeInfo> info = LookupOpcode(header->opcode);
  if (info && info->fixed_in_ring_payload) {
    const size_t split = std::min(payload.size(), FixedSize(*info, context));
    return ParseParts(*header, payload.first(split), payload.subspan(split), context);
  }
  return ParseParts(*header, op_in, payload, context);
}

}  // namespace ringfuse
