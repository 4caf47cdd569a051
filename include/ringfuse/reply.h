/// \file
/// Replies to the kernel: the move-only token a handler answers through, one typed reply per
/// kind of answer, and the structs they carry. Where replies go (ReplyChannel) and how a reply
/// message is encoded are ringfuse/protocol/reply_channel.h.
#pragma once

#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <span>
#include <string_view>
#include <type_traits>

#include "ringfuse/bytes.h"
#include "ringfuse/export.h"
#include "ringfuse/wire.h"

RINGFUSE_PUBLIC_BEGIN

namespace ringfuse {

/// Which request a reply answers: the kernel's unique, plus a value the transport chose when it
/// received the request (a ring entry, a buffer slot) so that it can find its state again.
struct ReplyTarget {
  uint64_t unique = 0;  ///< the request's unique
  uint64_t slot = 0;    ///< the transport's own value
};

class ReplyChannel;

/// Sees every reply a session sends; the reply half of RequestObserver.
class ReplyObserver {
 public:
  virtual ~ReplyObserver() = default;
  /// Called just before the reply goes to the channel, on the thread that answers.
  virtual void OnReply(const ReplyTarget& target, int32_t error,
                       std::span<const ConstBytes> body) = 0;
};

/// A promise to answer one request. Move-only; completes at most once, from any thread. A token
/// destroyed without an answer answers EIO, so a forgotten reply never hangs the caller.
class ReplyToken {
 public:
  /// A token that answers nothing (pending() is false).
  ReplyToken() = default;
  /// Takes over `other`'s promise; `other` is left not pending.
  ReplyToken(ReplyToken&& other) noexcept { *this = std::move(other); }
  /// Answers this token's own request with EIO if pending, then takes over `other`'s.
  ReplyToken& operator=(ReplyToken&& other) noexcept;
  ReplyToken(const ReplyToken&) = delete;
  ReplyToken& operator=(const ReplyToken&) = delete;
  ~ReplyToken();

  /// Whether the request still waits for its answer.
  bool pending() const { return channel_ != nullptr; }
  /// The unique of the request this token answers.
  uint64_t unique() const { return target_.unique; }

  /// Answers with an error: a positive errno below 512 as itself, anything else (0, negative,
  /// out of range, which the kernel would refuse) as EIO.
  void Error(int errno_value);
  /// Answers with success and `body`, the concatenation of its parts.
  void Send(std::span<const ConstBytes> body);
  /// Send, for a list of parts written in place.
  void Send(std::initializer_list<ConstBytes> body) { Send(std::span(body.begin(), body.size())); }

 private:
  friend class ReplyChannel;  // the only maker of pending tokens (ReplyChannel::Promise)
  ReplyToken(ReplyChannel* channel, ReplyTarget target, ReplyObserver* observer);

  ReplyChannel* channel_ = nullptr;
  ReplyTarget target_;
  ReplyObserver* observer_ = nullptr;  // a tracer; null unless one is attached

  void Deliver(int32_t error, std::span<const ConstBytes> body);
};

/// Typed replies: each kind of answer the protocol has, so a handler cannot send the wrong shape.
/// Which opcodes answer with which type is the `reply` column of RINGFUSE_FOR_EACH_OPCODE
/// (opcode_list.h), and each opcode's Handler virtual takes that type; the types below say only
/// what shape of answer they send.
class TypedReply {
 public:
  /// Answers through `token`.
  explicit TypedReply(ReplyToken token) : token_(std::move(token)) {}
  /// Answers with an error, as ReplyToken::Error does.
  void Error(int errno_value) { token_.Error(errno_value); }
  /// Whether the request still waits for its answer.
  bool pending() const { return token_.pending(); }

 protected:
  ReplyToken token_;  ///< the promise each kind of reply answers through
};

/// The reply of an opcode the kernel expects no answer to (its row in RINGFUSE_FOR_EACH_OPCODE
/// names NoReply): its Handler virtual takes no reply.
struct NoReply {};

/// Success with no body: the operation was done.
class EmptyReply : public TypedReply {
 public:
  using TypedReply::TypedReply;
  /// Answers success, with no body.
  void Ok() { token_.Send(std::span<const ConstBytes>{}); }
};

/// An entry (fuse_entry_out): a node with its attributes, or a negative entry.
class EntryReply : public TypedReply {
 public:
  using TypedReply::TypedReply;
  /// Answers the entry (MakeEntry, MakeNegativeEntry).
  void Ok(const wire::EntryOut& entry) { token_.Send({AsBytes(entry)}); }
};

/// An entry and the file opened on it (fuse_entry_out, then fuse_open_out).
class CreateReply : public TypedReply {
 public:
  using TypedReply::TypedReply;
  /// Answers the new entry and its open file.
  void Ok(const wire::EntryOut& entry, const wire::OpenOut& open) {
    token_.Send({AsBytes(entry), AsBytes(open)});
  }
};

/// Attributes (fuse_attr_out).
class AttrReply : public TypedReply {
 public:
  using TypedReply::TypedReply;
  /// Answers the attributes (MakeAttrOut).
  void Ok(const wire::AttrOut& attr) { token_.Send({AsBytes(attr)}); }
};

/// An open file or directory (fuse_open_out).
class OpenReply : public TypedReply {
 public:
  using TypedReply::TypedReply;
  /// Answers the open file (MakeOpenOut).
  void Ok(const wire::OpenOut& open) { token_.Send({AsBytes(open)}); }
};

/// Bytes, as they are: the answer is the data itself.
class DataReply : public TypedReply {
 public:
  using TypedReply::TypedReply;
  /// Answers the data.
  void Ok(ConstBytes data) { token_.Send({data}); }
  /// Answers the data, the concatenation of `parts`.
  void Ok(std::span<const ConstBytes> parts) { token_.Send(parts); }
};

/// A byte count, 32 or 64 bits wide as the request asked (fuse_write_out or
/// fuse_copy_file_range_out).
class CountReply : public TypedReply {
 public:
  /// `wide`: COPY_FILE_RANGE_64, answered with 64 bits.
  CountReply(ReplyToken token, bool wide) : TypedReply(std::move(token)), wide_(wide) {}
  /// Answers the byte count.
  void Ok(uint64_t count);

 private:
  bool wide_;
};

/// Filesystem statistics (fuse_statfs_out).
class StatfsReply : public TypedReply {
 public:
  using TypedReply::TypedReply;
  /// Answers the filesystem's statistics.
  void Ok(const wire::Kstatfs& statfs) { token_.Send({AsBytes(wire::StatfsOut{statfs})}); }
};

/// An extended attribute's value or a list of names; only the size it needs when the caller
/// asked for that (request size 0).
class XattrReply : public TypedReply {
 public:
  using TypedReply::TypedReply;
  /// Answers the size the value or the list needs.
  void Size(uint32_t size) { token_.Send({AsBytes(wire::GetxattrOut{size, 0})}); }
  /// Answers the value or the list.
  void Data(ConstBytes data) { token_.Send({data}); }
};

/// A lock (fuse_lk_out).
class LockReply : public TypedReply {
 public:
  using TypedReply::TypedReply;
  /// Answers the conflicting lock, or one of type F_UNLCK if none conflicts.
  void Ok(const wire::FileLock& lock) { token_.Send({AsBytes(wire::LkOut{lock})}); }
};

/// A device block number (fuse_bmap_out).
class BmapReply : public TypedReply {
 public:
  using TypedReply::TypedReply;
  /// Answers the device block.
  void Ok(uint64_t block) { token_.Send({AsBytes(wire::BmapOut{block})}); }
};

/// An ioctl's result and what it writes back (fuse_ioctl_out and the data), or a retry.
class IoctlReply : public TypedReply {
 public:
  using TypedReply::TypedReply;
  /// Answers the ioctl's result and the data it writes back.
  void Ok(int32_t result, ConstBytes out_data);
  /// Unrestricted ioctls only: ask the kernel to retry with these buffers.
  void Retry(std::span<const wire::IoctlIovec> in, std::span<const wire::IoctlIovec> out);
};

/// Ready poll events (fuse_poll_out).
class PollReply : public TypedReply {
 public:
  using TypedReply::TypedReply;
  /// Answers the ready events (POLLIN, ...).
  void Ok(uint32_t revents) { token_.Send({AsBytes(wire::PollOut{revents, 0})}); }
};

/// An offset (fuse_lseek_out).
class LseekReply : public TypedReply {
 public:
  using TypedReply::TypedReply;
  /// Answers the offset found.
  void Ok(uint64_t offset) { token_.Send({AsBytes(wire::LseekOut{offset})}); }
};

/// statx attributes (fuse_statx_out).
class StatxReply : public TypedReply {
 public:
  using TypedReply::TypedReply;
  /// Answers the statx result and how long it may be cached.
  void Ok(const wire::StatxOut& statx) { token_.Send({AsBytes(statx)}); }
};

// Encoders from local types to the wire structs.

/// How long the kernel may cache an entry or attributes: Timeout{seconds, nanoseconds}, or any
/// std::chrono duration (Timeout(std::chrono::milliseconds(500))); negative durations mean 0.
struct Timeout {
  uint64_t seconds = 0;      ///< whole seconds
  uint32_t nanoseconds = 0;  ///< and nanoseconds beyond them

  /// No caching.
  constexpr Timeout() = default;
  /// `whole_seconds` seconds and `nanos` nanoseconds.
  constexpr Timeout(uint64_t whole_seconds, uint32_t nanos = 0)  // NOLINT: Timeout{1} reads well
      : seconds(whole_seconds), nanoseconds(nanos) {}
  /// `duration`, 0 when negative, at most seconds::max().
  template <typename Rep, typename Period>
  constexpr Timeout(std::chrono::duration<Rep, Period> duration)  // NOLINT: implicit on purpose
      : Timeout(FromDuration(duration)) {}

 private:
  // Whole seconds first, so that "cache for centuries" does not overflow a count of nanoseconds
  // (which would come out as 0: no caching at all); longer than seconds::max() is capped there.
  template <typename Rep, typename Period>
  static constexpr Timeout FromDuration(std::chrono::duration<Rep, Period> duration) {
    using std::chrono::duration_cast;
    using Seconds = std::chrono::seconds;
    if (duration <= duration.zero()) return Timeout();
    if (std::chrono::duration<double>(duration).count() >=
        static_cast<double>(Seconds::max().count())) {
      return Timeout(static_cast<uint64_t>(Seconds::max().count()));
    }
    const Seconds whole = std::chrono::floor<Seconds>(duration);
    const auto rest = duration_cast<std::chrono::nanoseconds>(duration - whole);
    return Timeout(static_cast<uint64_t>(whole.count()), static_cast<uint32_t>(rest.count()));
  }
};

/// The attributes stat(2) gives, in the kernel's layout.
wire::Attr AttrFromStat(const struct stat& st);
/// An entry: node `nodeid` of `generation` with `attr`, cached for the two timeouts.
wire::EntryOut MakeEntry(uint64_t nodeid, uint64_t generation, const wire::Attr& attr,
                         Timeout entry_timeout, Timeout attr_timeout);
/// A negative entry: the kernel caches "no such name" for `timeout` (nodeid 0).
wire::EntryOut MakeNegativeEntry(Timeout timeout);
/// Attributes the kernel may cache for `timeout`.
wire::AttrOut MakeAttrOut(const wire::Attr& attr, Timeout timeout);
/// An open file `fh` with FOPEN_* `open_flags` (wire::kFopen*) and, for passthrough, a backing id.
wire::OpenOut MakeOpenOut(uint64_t fh, uint32_t open_flags, int32_t backing_id = 0);

/// Packs READDIR or READDIRPLUS entries into a caller's buffer, 8-byte aligned as the kernel
/// requires. Add returns false, and writes nothing, when the entry does not fit: the signal to
/// stop and send what is packed; the kernel asks again from the last offset. A name the kernel
/// would refuse (empty, containing '/' or NUL, longer than 1024 bytes: it fails the whole READDIR
/// with EIO) is skipped and counted in skipped(), so one bad name cannot hide a directory.
class DirentPacker {
 public:
  /// Packs into `buffer`, which must outlive the packer.
  explicit DirentPacker(MutableBytes buffer) : buffer_(buffer) {}
  /// A copy would pack into the same buffer but count apart: what it packed would not be sent.
  DirentPacker(const DirentPacker&) = delete;
  DirentPacker& operator=(const DirentPacker&) = delete;
  DirentPacker(DirentPacker&&) = default;             ///< takes over the buffer and the counts
  DirentPacker& operator=(DirentPacker&&) = default;  ///< takes over the buffer and the counts

  /// `offset` is the cookie of the *next* entry, which the kernel passes back to continue.
  bool Add(uint64_t ino, uint64_t offset, uint32_t type, std::string_view name);
  /// Add for READDIRPLUS: the entry with its lookup; the inode number is entry.attr.ino.
  bool AddPlus(const wire::EntryOut& entry, uint64_t offset, uint32_t type, std::string_view name);

  /// What is packed so far: what to send.
  ConstBytes packed() const { return ConstBytes(buffer_.data(), used_); }
  size_t count() const { return count_; }      ///< entries packed
  size_t skipped() const { return skipped_; }  ///< names skipped as refused

  /// Bytes a READDIR entry with a name of `name_length` takes, aligned.
  static size_t DirentSize(size_t name_length);
  /// Bytes a READDIRPLUS entry with a name of `name_length` takes, aligned.
  static size_t DirentPlusSize(size_t name_length);

 private:
  bool Append(ConstBytes head, std::string_view name, size_t record_size);

  MutableBytes buffer_;
  size_t used_ = 0;
  size_t count_ = 0;
  size_t skipped_ = 0;
};

/// A directory listing: a reply that owns a buffer of the size the kernel asked for and packs
/// entries into it. Each Add returns false, adding nothing, once the entry does not fit: then
/// send what is packed with Ok(); the kernel asks again from the last entry's cookie. Ok() with
/// nothing packed ends the listing.
///
/// An entry's cookie is the offset the kernel passes back to continue after it. Add numbers
/// entries by their place in the listing (the n-th added answers the request's offset + n), for
/// a directory listed by index: list from entry number `offset()`. AddAt takes the cookie given,
/// for a directory with cookies of its own (telldir).
class DirListingReply : public TypedReply {
 public:
  /// A buffer of `request.size` bytes, listing from `request.offset`.
  DirListingReply(ReplyToken token, const wire::ReadIn& request);

  /// The cookie the kernel continues from.
  uint64_t offset() const { return offset_; }
  /// Sends what is packed; with nothing packed, ends the listing.
  void Ok() { token_.Send({packer_.packed()}); }
  /// The packer itself, for protocol work: entries of both kinds, counts, skipped names.
  DirentPacker& packer() { return packer_; }

 protected:
  /// The cookie for the next entry Add packs: its place in the listing.
  uint64_t NextCookie() const { return offset_ + packer_.count() + packer_.skipped() + 1; }

 private:
  std::unique_ptr<std::byte[]> buffer_;  // not zero-filled: the packer writes what it sends
  DirentPacker packer_;
  uint64_t offset_;
};

/// A listing of names with their inode numbers and types.
class DirReply : public DirListingReply {
 public:
  using DirListingReply::DirListingReply;
  /// `type` is the file type as readdir(3)'s d_type has it (DT_REG, DT_DIR, ...).
  bool Add(std::string_view name, uint64_t ino, uint32_t type) {
    return AddAt(NextCookie(), name, ino, type);
  }
  /// Add with the cookie `next_offset` of the entry after it, for a directory with its own cookies.
  bool AddAt(uint64_t next_offset, std::string_view name, uint64_t ino, uint32_t type) {
    return packer().Add(ino, next_offset, type, name);
  }
};

/// A listing with lookups: each entry other than . and .. carries one (as LOOKUP would answer
/// it), which the kernel counts like a LOOKUP's, FORGET following, but only if it was packed: Add
/// says which. A name the kernel would refuse is skipped, its lookup never sent. An entry with
/// node id 0 gives the name only.
class DirPlusReply : public DirListingReply {
 public:
  /// What Add did with an entry.
  enum class Added {
    kPacked,   ///< packed, its lookup counted by the kernel
    kSkipped,  ///< skipped, a name the kernel would refuse; no lookup sent
    kFull,     ///< not added: the reply is full, send it
  };

  using DirListingReply::DirListingReply;
  /// Adds an entry with its lookup, numbered by its place in the listing.
  Added Add(std::string_view name, const wire::EntryOut& entry, uint32_t type) {
    return AddAt(NextCookie(), name, entry, type);
  }
  /// Add with the cookie `next_offset` of the entry after it, for a directory with its own cookies.
  Added AddAt(uint64_t next_offset, std::string_view name, const wire::EntryOut& entry,
              uint32_t type) {
    const size_t skipped = packer().skipped();
    if (!packer().AddPlus(entry, next_offset, type, name)) return Added::kFull;
    return packer().skipped() > skipped ? Added::kSkipped : Added::kPacked;
  }
};

}  // namespace ringfuse

RINGFUSE_PUBLIC_END
