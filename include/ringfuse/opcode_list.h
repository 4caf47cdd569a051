/// @file
/// The one list of FUSE opcodes: every fact about an opcode is written here once, and the rest of
/// the library is generated from it or checked against it at compile time: the `Opcode` enum and
/// the opcode table (opcode.h), the `RequestArgs` variant (request.h), the parser, the
/// dispatcher, and the check that each `Handler` virtual takes the listed arguments and reply.
///
/// Adding an opcode: a row here and its `Make` in protocol/request.cc, which assembles the op
/// struct from what the parser read as the row says (the parser does not compile without one,
/// nor with one that takes other parts than the row lists); a rule for each of its names there
/// (`NameRuleOf`) and, for a Data or Records tail, a `TailOf` for its fixed struct; unless it
/// shares one, its op struct (request.h) and Handler virtual (handler.h, checked against the
/// row); a new shape of answer needs its reply type and encoder (reply.h).
#pragma once

/// Calls `X(name, number, kernel_name, op_struct, reply, fixed, names, tail, since, in_payload)`
/// once per opcode, in ascending wire order. What reads each column:
/// - `name`: the enumerator without its `k` (`Opcode::kLookup`): the enum, and every expansion
///   that selects code per opcode (the parser's `Make`, the dispatcher's switch);
/// - `number`: the wire opcode: the enum's values, hence LookupOpcode's index;
/// - `kernel_name`: the kernel's name without `FUSE_`, as a token (stringize it with `#`):
///   OpcodeInfo::name, which OpcodeName, parse errors, diagnostics and traces show;
/// - `op_struct`: the op struct in `ringfuse::op` and the `Handler` virtual of that name:
///   RequestArgs, the parser (an opcode's `Make` must give exactly this struct) and the
///   dispatcher, which calls that virtual; opcodes that differ only in their wire form share one
///   (RENAME and RENAME2, SETLK and SETLKW, COPY_FILE_RANGE and COPY_FILE_RANGE_64);
/// - `reply`: the typed reply the handler answers with; `NoReply` where the kernel expects no
///   answer, `ReplyToken` where the dispatcher answers itself (INIT, DESTROY): the dispatcher
///   makes it and checks the Handler virtual takes it, and OpcodeInfo::replies (whether the
///   dispatcher and the ring transport answer at all) is derived from it; reply.h does not
///   list which opcodes use each type: this column does;
/// - `fixed`: the fixed argument struct in `ringfuse::wire` at the current protocol, or `None`:
///   OpcodeInfo::fixed_size, where the parser splits the message and checks it is long enough,
///   and the struct the parser reads and hands to the opcode's `Make`;
/// - `names`: how many NUL-terminated strings follow the fixed struct: the parser reads exactly
///   that many (each checked by its rule, `NameRuleOf` in protocol/request.cc) and hands them to
///   `Make`; OpcodeInfo::names;
/// - `tail`: what follows the fixed struct, a `ringfuse::Tail` without its `k`: after the names
///   the parser reads nothing more (None, Names), the bytes (Data, NameAndData) or the records
///   (Records) whose length `TailOf` takes from the fixed struct, and hands them to `Make`;
///   OpcodeInfo::tail;
/// - `since`: the first protocol minor that has the opcode: OpcodeInfo::since_minor, information
///   for protocol tools that nothing in the library acts on (the parser and the dispatcher need
///   not: a kernel sends no opcode newer than the minor it negotiated); the table's self-check
///   holds it to the ABI (wire::kKernelMinor), tests to the system header and to the opcodes a
///   kernel of the oldest supported minor may not send;
/// - `in_payload`: FUSE-over-io_uring carries the fixed struct at the start of the payload rather
///   than in op_in (the kernel sends an empty first argument, fuse_set_zero_arg0):
///   OpcodeInfo::fixed_in_ring_payload, which ParseRingRequest reads.
///
/// The table's self-check (OpcodeTableProblem, asserted at compile time) holds the rows to their
/// order and `names` to `tail`. The list names types it does not declare: expand it where they
/// are visible.
// clang-format off
//  name            no. kernel name         op struct      reply         fixed          names tail        since in_payload
#define RINGFUSE_FOR_EACH_OPCODE(X)                                                                                        \
  X(Lookup,           1, LOOKUP,             Lookup,        EntryReply,   None,             1, Names,        1, false) \
  X(Forget,           2, FORGET,             Forget,        NoReply,      ForgetIn,         0, None,         1, false) \
  X(Getattr,          3, GETATTR,            Getattr,       AttrReply,    GetattrIn,        0, None,         1, false) \
  X(Setattr,          4, SETATTR,            Setattr,       AttrReply,    SetattrIn,        0, None,         1, false) \
  X(Readlink,         5, READLINK,           Readlink,      DataReply,    None,             0, None,         1, false) \
  X(Symlink,          6, SYMLINK,            Symlink,       EntryReply,   None,             2, Names,        1, false) \
  X(Mknod,            8, MKNOD,              Mknod,         EntryReply,   MknodIn,          1, Names,        1, false) \
  X(Mkdir,            9, MKDIR,              Mkdir,         EntryReply,   MkdirIn,          1, Names,        1, false) \
  X(Unlink,          10, UNLINK,             Unlink,        EmptyReply,   None,             1, Names,        1, false) \
  X(Rmdir,           11, RMDIR,              Rmdir,         EmptyReply,   None,             1, Names,        1, false) \
  X(Rename,          12, RENAME,             Rename,        EmptyReply,   RenameIn,         2, Names,        1, false) \
  X(Link,            13, LINK,               Link,          EntryReply,   LinkIn,           1, Names,        1, false) \
  X(Open,            14, OPEN,               Open,          OpenReply,    OpenIn,           0, None,         1, false) \
  X(Read,            15, READ,               Read,          DataReply,    ReadIn,           0, None,         1, false) \
  X(Write,           16, WRITE,              Write,         CountReply,   WriteIn,          0, Data,         1, false) \
  X(Statfs,          17, STATFS,             Statfs,        StatfsReply,  None,             0, None,         1, false) \
  X(Release,         18, RELEASE,            Release,       EmptyReply,   ReleaseIn,        0, None,         1, false) \
  X(Fsync,           20, FSYNC,              Fsync,         EmptyReply,   FsyncIn,          0, None,         1, false) \
  X(Setxattr,        21, SETXATTR,           Setxattr,      EmptyReply,   SetxattrIn,       1, NameAndData,  1, false) \
  X(Getxattr,        22, GETXATTR,           Getxattr,      XattrReply,   GetxattrIn,       1, Names,        1, false) \
  X(Listxattr,       23, LISTXATTR,          Listxattr,     XattrReply,   GetxattrIn,       0, None,         1, false) \
  X(Removexattr,     24, REMOVEXATTR,        Removexattr,   EmptyReply,   None,             1, Names,        1, false) \
  X(Flush,           25, FLUSH,              Flush,         EmptyReply,   FlushIn,          0, None,         1, false) \
  X(Init,            26, INIT,               Init,          ReplyToken,   InitIn,           0, None,         1, false) \
  X(Opendir,         27, OPENDIR,            Opendir,       OpenReply,    OpenIn,           0, None,         1, false) \
  X(Readdir,         28, READDIR,            Readdir,       DirReply,     ReadIn,           0, None,         1, false) \
  X(Releasedir,      29, RELEASEDIR,         Releasedir,    EmptyReply,   ReleaseIn,        0, None,         1, false) \
  X(Fsyncdir,        30, FSYNCDIR,           Fsyncdir,      EmptyReply,   FsyncIn,          0, None,         2, false) \
  X(Getlk,           31, GETLK,              Getlk,         LockReply,    LkIn,             0, None,         7, false) \
  X(Setlk,           32, SETLK,              Setlk,         EmptyReply,   LkIn,             0, None,         7, false) \
  X(Setlkw,          33, SETLKW,             Setlk,         EmptyReply,   LkIn,             0, None,         7, false) \
  X(Access,          34, ACCESS,             Access,        EmptyReply,   AccessIn,         0, None,         3, false) \
  X(Create,          35, CREATE,             Create,        CreateReply,  CreateIn,         1, Names,        3, false) \
  X(Interrupt,       36, INTERRUPT,          Interrupt,     NoReply,      InterruptIn,      0, None,         7, false) \
  X(Bmap,            37, BMAP,               Bmap,          BmapReply,    BmapIn,           0, None,         8, false) \
  X(Destroy,         38, DESTROY,            Destroy,       ReplyToken,   None,             0, None,         8, false) \
  X(Ioctl,           39, IOCTL,              Ioctl,         IoctlReply,   IoctlIn,          0, Data,        11, false) \
  X(Poll,            40, POLL,               Poll,          PollReply,    PollIn,           0, None,        11, false) \
  X(NotifyReply,     41, NOTIFY_REPLY,       NotifyReply,   NoReply,      NotifyRetrieveIn, 0, Data,        15, true)  \
  X(BatchForget,     42, BATCH_FORGET,       BatchForget,   NoReply,      BatchForgetIn,    0, Records,     16, false) \
  X(Fallocate,       43, FALLOCATE,          Fallocate,     EmptyReply,   FallocateIn,      0, None,        19, false) \
  X(Readdirplus,     44, READDIRPLUS,        Readdirplus,   DirPlusReply, ReadIn,           0, None,        21, false) \
  X(Rename2,         45, RENAME2,            Rename,        EmptyReply,   Rename2In,        2, Names,       23, false) \
  X(Lseek,           46, LSEEK,              Lseek,         LseekReply,   LseekIn,          0, None,        24, false) \
  X(CopyFileRange,   47, COPY_FILE_RANGE,    CopyFileRange, CountReply,   CopyFileRangeIn,  0, None,        28, false) \
  X(SetupMapping,    48, SETUPMAPPING,       SetupMapping,  EmptyReply,   SetupMappingIn,   0, None,        31, false) \
  X(RemoveMapping,   49, REMOVEMAPPING,      RemoveMapping, EmptyReply,   RemoveMappingIn,  0, Records,     31, true)  \
  X(Syncfs,          50, SYNCFS,             Syncfs,        EmptyReply,   SyncfsIn,         0, None,        34, false) \
  X(Tmpfile,         51, TMPFILE,            Tmpfile,       CreateReply,  CreateIn,         1, Names,       37, false) \
  X(Statx,           52, STATX,              Statx,         StatxReply,   StatxIn,          0, None,        39, false) \
  X(CopyFileRange64, 53, COPY_FILE_RANGE_64, CopyFileRange, CountReply,   CopyFileRangeIn,  0, None,        45, false)
// clang-format on
