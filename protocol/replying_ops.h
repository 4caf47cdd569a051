// The operations the dispatcher routes to a Handler virtual with a typed reply: name and reply
// type, in opcode order. The dispatcher is generated from this list, and a static_assert there
// checks each against ringfuse/handler.h's written-out virtual, so the two cannot drift.
#pragma once

#define RINGFUSE_FOR_EACH_REPLYING_OP(X) \
  X(Lookup, EntryReply)                  \
  X(Getattr, AttrReply)                  \
  X(Setattr, AttrReply)                  \
  X(Readlink, DataReply)                 \
  X(Symlink, EntryReply)                 \
  X(Mknod, EntryReply)                   \
  X(Mkdir, EntryReply)                   \
  X(Unlink, EmptyReply)                  \
  X(Rmdir, EmptyReply)                   \
  X(Rename, EmptyReply)                  \
  X(Link, EntryReply)                    \
  X(Open, OpenReply)                     \
  X(Read, DataReply)                     \
  X(Write, CountReply)                   \
  X(Statfs, StatfsReply)                 \
  X(Release, EmptyReply)                 \
  X(Fsync, EmptyReply)                   \
  X(Setxattr, EmptyReply)                \
  X(Getxattr, XattrReply)                \
  X(Listxattr, XattrReply)               \
  X(Removexattr, EmptyReply)             \
  X(Flush, EmptyReply)                   \
  X(Opendir, OpenReply)                  \
  X(Readdir, DirReply)                  \
  X(Releasedir, EmptyReply)              \
  X(Fsyncdir, EmptyReply)                \
  X(Getlk, LockReply)                    \
  X(Setlk, EmptyReply)                   \
  X(Access, EmptyReply)                  \
  X(Create, CreateReply)                 \
  X(Bmap, BmapReply)                     \
  X(Ioctl, IoctlReply)                   \
  X(Poll, PollReply)                     \
  X(Fallocate, EmptyReply)               \
  X(Readdirplus, DirPlusReply)              \
  X(Lseek, LseekReply)                   \
  X(CopyFileRange, CountReply)           \
  X(SetupMapping, EmptyReply)            \
  X(RemoveMapping, EmptyReply)           \
  X(Syncfs, EmptyReply)                  \
  X(Tmpfile, CreateReply)                \
  X(Statx, StatxReply)
