#include "ringfuse/reply.h"

#include <cerrno>
#include <utility>

#include "protocol/reply_parts.h"
#include "ringfuse/protocol/reply_channel.h"

namespace ringfuse {
namespace {

// The kernel accepts reply errors in (-ERESTARTSYS, 0]; ERESTARTSYS is 512.
constexpr int kFirstRejectedErrno = 512;

bool IsValidDirentName(std::string_view name) {
  return !name.empty() && name.size() <= wire::kNameMax &&
         name.find_first_of(std::string_view("/\0", 2)) == std::string_view::npos;
}

size_t AlignDirent(size_t size) {
  return (size + wire::kDirentAlignment - 1) & ~(wire::kDirentAlignment - 1);
}

}  // namespace

int32_t KernelError(int errno_value) {
  if (errno_value <= 0 || errno_value >= kFirstRejectedErrno) return -EIO;
  return -errno_value;
}

ReplyToken::ReplyToken(ReplyChannel* channel, ReplyTarget target, ReplyObserver* observer)
    : channel_(channel), target_(target), observer_(observer) {
  if (channel_ != nullptr) channel_->outstanding_.fetch_add(1, std::memory_order_relaxed);
}

ReplyToken& ReplyToken::operator=(ReplyToken&& other) noexcept {
  if (this != &other) {
    if (pending()) Error(EIO);
    channel_ = other.channel_;
    target_ = other.target_;
    observer_ = other.observer_;
    other.channel_ = nullptr;
  }
  return *this;
}

ReplyToken::~ReplyToken() {
  if (pending()) Error(EIO);
}

void ReplyToken::Error(int errno_value) {
  if (pending()) Deliver(KernelError(errno_value), {});
}

void ReplyToken::Send(std::span<const ConstBytes> body) {
  if (pending()) Deliver(0, body);
}

void ReplyToken::Deliver(int32_t error, std::span<const ConstBytes> body) {
  ReplyChannel* channel = std::exchange(channel_, nullptr);
  if (observer_ != nullptr) observer_->OnReply(target_, error, body);
  if (!channel->closed()) channel->SendReply(target_, error, body);
  // Last: once the count drops, the transport may free the channel.
  channel->outstanding_.fetch_sub(1, std::memory_order_acq_rel);
}

void CountReply::Ok(uint64_t count) {
  if (wide_) {
    token_.Send({AsBytes(wire::CopyFileRangeOut{count})});
  } else {
    token_.Send({AsBytes(wire::WriteOut{static_cast<uint32_t>(count), 0})});
  }
}

void IoctlReply::Ok(int32_t result, ConstBytes out_data) {
  const wire::IoctlOut out{result, 0, 0, 0};
  token_.Send({AsBytes(out), out_data});
}

void IoctlReply::Retry(std::span<const wire::IoctlIovec> in,
                       std::span<const wire::IoctlIovec> out) {
  const wire::IoctlOut head{0, wire::kIoctlRetry, static_cast<uint32_t>(in.size()),
                            static_cast<uint32_t>(out.size())};
  token_.Send({AsBytes(head), std::as_bytes(in), std::as_bytes(out)});
}

wire::Attr AttrFromStat(const struct stat& st) {
  wire::Attr attr{};
  attr.ino = st.st_ino;
  attr.size = static_cast<uint64_t>(st.st_size);
  attr.blocks = static_cast<uint64_t>(st.st_blocks);
  attr.atime = static_cast<uint64_t>(st.st_atim.tv_sec);
  attr.mtime = static_cast<uint64_t>(st.st_mtim.tv_sec);
  attr.ctime = static_cast<uint64_t>(st.st_ctim.tv_sec);
  attr.atimensec = static_cast<uint32_t>(st.st_atim.tv_nsec);
  attr.mtimensec = static_cast<uint32_t>(st.st_mtim.tv_nsec);
  attr.ctimensec = static_cast<uint32_t>(st.st_ctim.tv_nsec);
  attr.mode = st.st_mode;
  attr.nlink = static_cast<uint32_t>(st.st_nlink);
  attr.uid = st.st_uid;
  attr.gid = st.st_gid;
  attr.rdev = static_cast<uint32_t>(st.st_rdev);
  attr.blksize = static_cast<uint32_t>(st.st_blksize);
  return attr;
}

wire::EntryOut MakeEntry(uint64_t nodeid, uint64_t generation, const wire::Attr& attr,
                         Timeout entry_timeout, Timeout attr_timeout) {
  wire::EntryOut entry{};
  entry.nodeid = nodeid;
  entry.generation = generation;
  entry.entry_valid = entry_timeout.seconds;
  entry.entry_valid_nsec = entry_timeout.nanoseconds;
  entry.attr_valid = attr_timeout.seconds;
  entry.attr_valid_nsec = attr_timeout.nanoseconds;
  entry.attr = attr;
  return entry;
}

wire::EntryOut MakeNegativeEntry(Timeout timeout) {
  return MakeEntry(0, 0, wire::Attr{}, timeout, Timeout{});
}

wire::AttrOut MakeAttrOut(const wire::Attr& attr, Timeout timeout) {
  wire::AttrOut out{};
  out.attr_valid = timeout.seconds;
  out.attr_valid_nsec = timeout.nanoseconds;
  out.attr = attr;
  return out;
}

wire::OpenOut MakeOpenOut(uint64_t fh, uint32_t open_flags, int32_t backing_id) {
  return wire::OpenOut{fh, open_flags, backing_id};
}

size_t EncodeReplyMessage(uint64_t unique, int32_t error, std::span<const ConstBytes> body,
                          MutableBytes out) {
  const std::span<const ConstBytes> parts = internal::ReplyParts(error, body);
  const size_t length = sizeof(wire::OutHeader) + internal::PartsSize(parts);
  if (length > out.size()) return 0;
  const wire::OutHeader header{static_cast<uint32_t>(length), error, unique};
  std::memcpy(out.data(), &header, sizeof(header));
  internal::JoinParts(parts, out.subspan(sizeof(header)));
  return length;
}

size_t DirentPacker::DirentSize(size_t name_length) {
  return AlignDirent(sizeof(wire::Dirent) + name_length);
}

size_t DirentPacker::DirentPlusSize(size_t name_length) {
  return AlignDirent(sizeof(wire::DirentPlus) + name_length);
}

bool DirentPacker::Append(ConstBytes head, std::string_view name, size_t record_size) {
  if (!IsValidDirentName(name)) {
    ++skipped_;
    return true;
  }
  if (record_size > buffer_.size() - used_) return false;
  std::byte* at = buffer_.data() + used_;
  std::memcpy(at, head.data(), head.size());
  std::memcpy(at + head.size(), name.data(), name.size());
  const size_t written = head.size() + name.size();
  std::memset(at + written, 0, record_size - written);  // padding must not leak memory
  used_ += record_size;
  ++count_;
  return true;
}

DirListingReply::DirListingReply(ReplyToken token, const wire::ReadIn& request)
    : TypedReply(std::move(token)),
      buffer_(std::make_unique_for_overwrite<std::byte[]>(request.size)),
      packer_(MutableBytes(buffer_.get(), request.size)),
      offset_(request.offset) {}

bool DirentPacker::Add(uint64_t ino, uint64_t offset, uint32_t type, std::string_view name) {
  const wire::Dirent dirent{ino, offset, static_cast<uint32_t>(name.size()), type};
  return Append(AsBytes(dirent), name, DirentSize(name.size()));
}

bool DirentPacker::AddPlus(const wire::EntryOut& entry, uint64_t offset, uint32_t type,
                           std::string_view name) {
  const wire::DirentPlus plus{
      entry, wire::Dirent{entry.attr.ino, offset, static_cast<uint32_t>(name.size()), type}};
  return Append(AsBytes(plus), name, DirentPlusSize(name.size()));
}

}  // namespace ringfuse
