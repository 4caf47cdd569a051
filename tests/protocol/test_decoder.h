// An independent decoder for reply and notification bytes, for tests.
//
// Every field is read at an offset written out here from the kernel's documented layout, one
// little-endian byte at a time, and never by copying bytes into a ringfuse/wire.h struct: a layout
// mistake in wire.h must not be able to hide by being made twice.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ringfuse::testing {

using Bytes = std::span<const std::byte>;

// A little-endian unsigned integer of `width` bytes at `at`; a read past the end fails the test
// and yields 0, so a short reply cannot crash the decoder.
inline uint64_t LoadLe(Bytes bytes, size_t at, size_t width) {
  if (at > bytes.size() || width > bytes.size() - at) {
    ADD_FAILURE() << "read of " << width << " bytes at offset " << at << " past the end ("
                  << bytes.size() << " bytes)";
    return 0;
  }
  uint64_t value = 0;
  for (size_t i = 0; i < width; ++i) {
    value |= static_cast<uint64_t>(std::to_integer<uint8_t>(bytes[at + i])) << (8 * i);
  }
  return value;
}

inline uint16_t U16At(Bytes b, size_t at) { return static_cast<uint16_t>(LoadLe(b, at, 2)); }
inline uint32_t U32At(Bytes b, size_t at) { return static_cast<uint32_t>(LoadLe(b, at, 4)); }
inline uint64_t U64At(Bytes b, size_t at) { return LoadLe(b, at, 8); }
inline int32_t I32At(Bytes b, size_t at) { return static_cast<int32_t>(U32At(b, at)); }
inline int64_t I64At(Bytes b, size_t at) { return static_cast<int64_t>(U64At(b, at)); }

inline std::string TextAt(Bytes b, size_t at, size_t length) {
  std::string text;
  for (size_t i = 0; i < length; ++i) text.push_back(static_cast<char>(LoadLe(b, at + i, 1)));
  return text;
}

inline std::vector<std::byte> BytesAt(Bytes b, size_t at, size_t length) {
  if (at > b.size() || length > b.size() - at) {
    ADD_FAILURE() << "slice of " << length << " bytes at offset " << at << " past the end";
    return {};
  }
  return {b.begin() + at, b.begin() + at + length};
}

inline bool AllZero(Bytes b, size_t at, size_t length) {
  for (size_t i = 0; i < length; ++i) {
    if (LoadLe(b, at + i, 1) != 0) return false;
  }
  return true;
}

// fuse_out_header: 16 bytes.
struct DecodedOutHeader {
  uint32_t len;
  int32_t error;
  uint64_t unique;
};
inline constexpr size_t kOutHeaderSize = 16;
inline DecodedOutHeader DecodeOutHeader(Bytes b) { return {U32At(b, 0), I32At(b, 4), U64At(b, 8)}; }

// fuse_attr: 88 bytes.
struct DecodedAttr {
  uint64_t ino, size, blocks, atime, mtime, ctime;
  uint32_t atimensec, mtimensec, ctimensec, mode, nlink, uid, gid, rdev, blksize, flags;
};
inline constexpr size_t kAttrSize = 88;
inline DecodedAttr DecodeAttr(Bytes b, size_t at) {
  return {U64At(b, at + 0),  U64At(b, at + 8),  U64At(b, at + 16), U64At(b, at + 24),
          U64At(b, at + 32), U64At(b, at + 40), U32At(b, at + 48), U32At(b, at + 52),
          U32At(b, at + 56), U32At(b, at + 60), U32At(b, at + 64), U32At(b, at + 68),
          U32At(b, at + 72), U32At(b, at + 76), U32At(b, at + 80), U32At(b, at + 84)};
}

// fuse_entry_out: 128 bytes.
struct DecodedEntryOut {
  uint64_t nodeid, generation, entry_valid, attr_valid;
  uint32_t entry_valid_nsec, attr_valid_nsec;
  DecodedAttr attr;
};
inline constexpr size_t kEntryOutSize = 128;
inline DecodedEntryOut DecodeEntryOut(Bytes b, size_t at) {
  return {U64At(b, at + 0),  U64At(b, at + 8),  U64At(b, at + 16),     U64At(b, at + 24),
          U32At(b, at + 32), U32At(b, at + 36), DecodeAttr(b, at + 40)};
}

// fuse_attr_out: 104 bytes.
struct DecodedAttrOut {
  uint64_t attr_valid;
  uint32_t attr_valid_nsec, dummy;
  DecodedAttr attr;
};
inline constexpr size_t kAttrOutSize = 104;
inline DecodedAttrOut DecodeAttrOut(Bytes b, size_t at) {
  return {U64At(b, at + 0), U32At(b, at + 8), U32At(b, at + 12), DecodeAttr(b, at + 16)};
}

// fuse_open_out: 16 bytes.
struct DecodedOpenOut {
  uint64_t fh;
  uint32_t open_flags;
  int32_t backing_id;
};
inline constexpr size_t kOpenOutSize = 16;
inline DecodedOpenOut DecodeOpenOut(Bytes b, size_t at) {
  return {U64At(b, at + 0), U32At(b, at + 8), I32At(b, at + 12)};
}

// fuse_write_out, fuse_getxattr_out, fuse_poll_out: a u32 and 4 bytes of padding.
struct DecodedU32Out {
  uint32_t value, padding;
};
inline constexpr size_t kU32OutSize = 8;
inline DecodedU32Out DecodeU32Out(Bytes b, size_t at) {
  return {U32At(b, at + 0), U32At(b, at + 4)};
}

// fuse_bmap_out, fuse_lseek_out, fuse_copy_file_range_out: one u64.
inline constexpr size_t kU64OutSize = 8;

// fuse_statfs_out (fuse_kstatfs): 80 bytes.
struct DecodedStatfsOut {
  uint64_t blocks, bfree, bavail, files, ffree;
  uint32_t bsize, namelen, frsize, padding;
  uint32_t spare[6];
};
inline constexpr size_t kStatfsOutSize = 80;
inline DecodedStatfsOut DecodeStatfsOut(Bytes b, size_t at) {
  DecodedStatfsOut out{
      U64At(b, at + 0),  U64At(b, at + 8),  U64At(b, at + 16), U64At(b, at + 24), U64At(b, at + 32),
      U32At(b, at + 40), U32At(b, at + 44), U32At(b, at + 48), U32At(b, at + 52), {}};
  for (size_t i = 0; i < 6; ++i) out.spare[i] = U32At(b, at + 56 + 4 * i);
  return out;
}

// fuse_lk_out (fuse_file_lock): 24 bytes.
struct DecodedLkOut {
  uint64_t start, end;
  uint32_t type, pid;
};
inline constexpr size_t kLkOutSize = 24;
inline DecodedLkOut DecodeLkOut(Bytes b, size_t at) {
  return {U64At(b, at + 0), U64At(b, at + 8), U32At(b, at + 16), U32At(b, at + 20)};
}

// fuse_ioctl_out: 16 bytes, then data or (for a retry) in and out fuse_ioctl_iovec (16 bytes each).
struct DecodedIoctlOut {
  int32_t result;
  uint32_t flags, in_iovs, out_iovs;
};
inline constexpr size_t kIoctlOutSize = 16;
inline constexpr size_t kIoctlIovecSize = 16;
inline DecodedIoctlOut DecodeIoctlOut(Bytes b, size_t at) {
  return {I32At(b, at + 0), U32At(b, at + 4), U32At(b, at + 8), U32At(b, at + 12)};
}

// fuse_sx_time: 16 bytes.
struct DecodedSxTime {
  int64_t tv_sec;
  uint32_t tv_nsec;
  int32_t reserved;
};
inline DecodedSxTime DecodeSxTime(Bytes b, size_t at) {
  return {I64At(b, at + 0), U32At(b, at + 8), I32At(b, at + 12)};
}

// fuse_statx_out: 32 bytes, then fuse_statx (256 bytes).
struct DecodedStatx {
  uint32_t mask, blksize;
  uint64_t attributes;
  uint32_t nlink, uid, gid;
  uint16_t mode, spare0;
  uint64_t ino, size, blocks, attributes_mask;
  DecodedSxTime atime, btime, ctime, mtime;
  uint32_t rdev_major, rdev_minor, dev_major, dev_minor;
  uint64_t spare2[14];
};
struct DecodedStatxOut {
  uint64_t attr_valid;
  uint32_t attr_valid_nsec, flags;
  uint64_t spare[2];
  DecodedStatx stat;
};
inline constexpr size_t kStatxOutSize = 288;
inline DecodedStatxOut DecodeStatxOut(Bytes b, size_t at) {
  DecodedStatxOut out{};
  out.attr_valid = U64At(b, at + 0);
  out.attr_valid_nsec = U32At(b, at + 8);
  out.flags = U32At(b, at + 12);
  out.spare[0] = U64At(b, at + 16);
  out.spare[1] = U64At(b, at + 24);
  const size_t s = at + 32;
  DecodedStatx& x = out.stat;
  x.mask = U32At(b, s + 0);
  x.blksize = U32At(b, s + 4);
  x.attributes = U64At(b, s + 8);
  x.nlink = U32At(b, s + 16);
  x.uid = U32At(b, s + 20);
  x.gid = U32At(b, s + 24);
  x.mode = U16At(b, s + 28);
  x.spare0 = U16At(b, s + 30);
  x.ino = U64At(b, s + 32);
  x.size = U64At(b, s + 40);
  x.blocks = U64At(b, s + 48);
  x.attributes_mask = U64At(b, s + 56);
  x.atime = DecodeSxTime(b, s + 64);
  x.btime = DecodeSxTime(b, s + 80);
  x.ctime = DecodeSxTime(b, s + 96);
  x.mtime = DecodeSxTime(b, s + 112);
  x.rdev_major = U32At(b, s + 128);
  x.rdev_minor = U32At(b, s + 132);
  x.dev_major = U32At(b, s + 136);
  x.dev_minor = U32At(b, s + 140);
  for (size_t i = 0; i < 14; ++i) x.spare2[i] = U64At(b, s + 144 + 8 * i);
  return out;
}

// fuse_init_out: 64 bytes.
struct DecodedInitOut {
  uint32_t major, minor, max_readahead, flags;
  uint16_t max_background, congestion_threshold;
  uint32_t max_write, time_gran;
  uint16_t max_pages, map_alignment;
  uint32_t flags2, max_stack_depth;
  uint16_t request_timeout;
  uint16_t unused[11];
};
inline constexpr size_t kInitOutSize = 64;
inline DecodedInitOut DecodeInitOut(Bytes b, size_t at) {
  DecodedInitOut out{};
  out.major = U32At(b, at + 0);
  out.minor = U32At(b, at + 4);
  out.max_readahead = U32At(b, at + 8);
  out.flags = U32At(b, at + 12);
  out.max_background = U16At(b, at + 16);
  out.congestion_threshold = U16At(b, at + 18);
  out.max_write = U32At(b, at + 20);
  out.time_gran = U32At(b, at + 24);
  out.max_pages = U16At(b, at + 28);
  out.map_alignment = U16At(b, at + 30);
  out.flags2 = U32At(b, at + 32);
  out.max_stack_depth = U32At(b, at + 36);
  out.request_timeout = U16At(b, at + 40);
  for (size_t i = 0; i < 11; ++i) out.unused[i] = U16At(b, at + 42 + 2 * i);
  return out;
}

// A directory stream: fuse_dirent (24 bytes) + name, or fuse_direntplus (fuse_entry_out, then
// fuse_dirent) + name, each record padded with zeros to a multiple of 8 bytes.
struct DecodedDirent {
  DecodedEntryOut entry{};  // READDIRPLUS only
  uint64_t ino, off;
  uint32_t namelen, type;
  std::string name;
};
inline constexpr size_t kDirentSize = 24;

inline size_t Align8(size_t n) { return (n + 7) / 8 * 8; }

// Decodes a whole stream; a record that runs past the end or has non-zero padding fails the test.
inline std::vector<DecodedDirent> DecodeDirents(Bytes b, bool plus) {
  std::vector<DecodedDirent> out;
  size_t at = 0;
  while (at < b.size()) {
    DecodedDirent d{};
    const size_t dirent_at = at + (plus ? kEntryOutSize : 0);
    if (plus) d.entry = DecodeEntryOut(b, at);
    d.ino = U64At(b, dirent_at + 0);
    d.off = U64At(b, dirent_at + 8);
    d.namelen = U32At(b, dirent_at + 16);
    d.type = U32At(b, dirent_at + 20);
    const size_t name_at = dirent_at + kDirentSize;
    const size_t end = Align8(name_at + d.namelen);
    if (end > b.size()) {
      ADD_FAILURE() << "dirent at " << at << " runs past the end of the stream";
      return out;
    }
    d.name = TextAt(b, name_at, d.namelen);
    EXPECT_TRUE(AllZero(b, name_at + d.namelen, end - name_at - d.namelen))
        << "dirent padding at " << at;
    out.push_back(std::move(d));
    at = end;
  }
  return out;
}

// Notifications: fuse_out_header with unique 0 and error = the notify code, then the payload.
struct DecodedNotifyInvalInode {
  uint64_t ino;
  int64_t off, len;
};
inline DecodedNotifyInvalInode DecodeNotifyInvalInode(Bytes b) {
  return {U64At(b, 16), I64At(b, 24), I64At(b, 32)};
}

// INVAL_ENTRY (parent, namelen, flags) and DELETE (parent, child, namelen, padding), then name
// and NUL.
struct DecodedNotifyEntry {
  uint64_t parent, child;
  uint32_t namelen, flags_or_padding;
  std::string name;
  uint8_t terminator;
};
inline DecodedNotifyEntry DecodeNotifyInvalEntry(Bytes b) {
  DecodedNotifyEntry d{U64At(b, 16), 0, U32At(b, 24), U32At(b, 28), {}, 0};
  d.name = TextAt(b, 32, d.namelen);
  d.terminator = static_cast<uint8_t>(LoadLe(b, 32 + d.namelen, 1));
  return d;
}
inline DecodedNotifyEntry DecodeNotifyDelete(Bytes b) {
  DecodedNotifyEntry d{U64At(b, 16), U64At(b, 24), U32At(b, 32), U32At(b, 36), {}, 0};
  d.name = TextAt(b, 40, d.namelen);
  d.terminator = static_cast<uint8_t>(LoadLe(b, 40 + d.namelen, 1));
  return d;
}

struct DecodedNotifyStore {
  uint64_t nodeid, offset;
  uint32_t size, padding;
  std::vector<std::byte> data;
};
inline DecodedNotifyStore DecodeNotifyStore(Bytes b) {
  DecodedNotifyStore d{U64At(b, 16), U64At(b, 24), U32At(b, 32), U32At(b, 36), {}};
  d.data = BytesAt(b, 40, d.size);
  return d;
}

struct DecodedNotifyRetrieve {
  uint64_t notify_unique, nodeid, offset;
  uint32_t size, padding;
};
inline DecodedNotifyRetrieve DecodeNotifyRetrieve(Bytes b) {
  return {U64At(b, 16), U64At(b, 24), U64At(b, 32), U32At(b, 40), U32At(b, 44)};
}

struct DecodedNotifyPrune {
  uint32_t count, padding;
  uint64_t spare;
  std::vector<uint64_t> nodeids;
};
inline DecodedNotifyPrune DecodeNotifyPrune(Bytes b) {
  DecodedNotifyPrune d{U32At(b, 16), U32At(b, 20), U64At(b, 24), {}};
  for (size_t i = 0; i < d.count; ++i) d.nodeids.push_back(U64At(b, 32 + 8 * i));
  return d;
}

}  // namespace ringfuse::testing
