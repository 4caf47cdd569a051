#!/usr/bin/env python3
"""Writes the fuzzer's seed corpus: one small valid request per opcode, in each of the modes
(parse, ring split, dispatch, ring dispatch with its header/op_in split), and conversations
(an INIT offer, then length-prefixed requests), built from the FUSE 7.45 layout; the
passthrough fuzzer's request sequences over its scratch tree; and the seeds of the fuzzers over
what a daemon reads from outside the kernel (the three journals, the handover record and state,
the keeper protocol), each in the layout its encoder writes (the file named in each section),
with the stand-ins those fuzzers replace by the scratch tree's handles and inode numbers. Run
from anywhere; it rewrites tests/fuzz/*corpus/ next to this script (daemon_corpus/ aside)."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
PASSTHROUGH_CORPUS = os.path.join(HERE, "passthrough_corpus")


def header(opcode, body, unique=10, nodeid=1, uid=1000):
    return struct.pack("<IIQQIIIHH", 40 + len(body), opcode, unique, nodeid, uid, uid, 42, 0, 0) + body


def cstr(s):
    return s.encode() + b"\0"


READ_IN = struct.pack("<QQIIQII", 5, 0, 4096, 0, 0, 0, 0)
LK_IN = struct.pack("<QQQQIIII", 5, 7, 0, 100, 1, 42, 0, 0)
BODIES = {
    1: cstr("hello"),                                           # LOOKUP
    2: struct.pack("<Q", 3),                                    # FORGET
    3: struct.pack("<IIQ", 0, 0, 0),                            # GETATTR
    4: struct.pack("<IIQQQQQQIIIIIIII", 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0o644, 0, 0, 0, 0),
    5: b"",                                                     # READLINK
    6: cstr("link") + cstr("target"),                           # SYMLINK
    8: struct.pack("<IIII", 0o100644, 0, 0o22, 0) + cstr("node"),
    9: struct.pack("<II", 0o755, 0o22) + cstr("dir"),
    10: cstr("gone"),
    11: cstr("gonedir"),
    12: struct.pack("<Q", 1) + cstr("a") + cstr("b"),
    13: struct.pack("<Q", 2) + cstr("hard"),
    14: struct.pack("<II", 0, 0),
    15: READ_IN,
    16: struct.pack("<QQIIQII", 5, 0, 5, 0, 0, 0, 0) + b"hello",
    17: b"",
    18: struct.pack("<QIIQ", 5, 0, 0, 0),
    20: struct.pack("<QII", 5, 0, 0),
    21: struct.pack("<IIII", 3, 0, 0, 0) + cstr("user.x") + b"abc",
    22: struct.pack("<II", 64, 0) + cstr("user.x"),
    23: struct.pack("<II", 0, 0),
    24: cstr("user.x"),
    25: struct.pack("<QIIQ", 5, 0, 0, 0),
    26: struct.pack("<IIIII", 7, 45, 131072, 0x73FFFFFB, 0x7FD) + b"\0" * 44,
    27: struct.pack("<II", 0, 0),
    28: READ_IN,
    29: struct.pack("<QIIQ", 5, 0, 0, 0),
    30: struct.pack("<QII", 5, 0, 0),
    31: LK_IN,
    32: LK_IN,
    33: LK_IN,
    34: struct.pack("<II", 4, 0),
    35: struct.pack("<IIII", 0o101, 0o644, 0o22, 0) + cstr("new"),
    36: struct.pack("<Q", 9),
    37: struct.pack("<QII", 0, 4096, 0),
    38: b"",
    39: struct.pack("<QIIQII", 5, 0, 0x5401, 0, 4, 4) + b"abcd",
    40: struct.pack("<QQII", 5, 1, 1, 1),
    41: struct.pack("<QQIIQQ", 0, 0, 3, 0, 0, 0) + b"xyz",
    42: struct.pack("<II", 2, 0) + struct.pack("<QQQQ", 2, 1, 3, 1),
    43: struct.pack("<QQQII", 5, 0, 4096, 0, 0),
    44: READ_IN,
    45: struct.pack("<QII", 1, 1, 0) + cstr("a") + cstr("b"),
    46: struct.pack("<QQII", 5, 0, 3, 0),
    47: struct.pack("<QQQQQQQ", 5, 0, 3, 6, 0, 4096, 0),
    48: struct.pack("<QQQQQ", 5, 0, 4096, 1, 0),
    49: struct.pack("<I", 1) + struct.pack("<QQ", 0, 4096),
    50: struct.pack("<Q", 0),
    51: struct.pack("<IIII", 2, 0o600, 0o22, 0) + cstr("/"),
    52: struct.pack("<IIQII", 0, 0, 0, 0, 0x7FF),
    53: struct.pack("<QQQQQQQ", 5, 0, 3, 6, 0, 4096, 0),
}


MODE_RING_DISPATCH = 3
MODE_CONVERSATION = 4
# A conversation's requests: work, an interrupt of a request before and after it, a forget,
# a retrieve answer nobody waits for, DESTROY, and a request after it (EIO).
CONVERSATION = [(1, cstr("a"), 20), (36, struct.pack("<Q", 22), 21), (3, BODIES[3], 22),
                (36, struct.pack("<Q", 22), 23), (2, struct.pack("<Q", 1), 24),
                (41, BODIES[41], 25), (38, b"", 26), (1, cstr("late"), 27)]


# The passthrough fuzzer's tree (passthrough_fuzzer.cc): file, dir/inner, dir/nested, fifo, and
# symlinks out (-> ../canary), outfile (-> ../canary/secret), absolute (-> BASE/canary/secret).
# Node ids are 1 for the root, then given in the order names are first looked up; fh values 1, 2,
# ... in the order opens are answered; each message's unique is its place in the sequence from 3.
O_RDONLY, O_WRONLY, O_RDWR, O_TRUNC = 0, 1, 2, 0o1000
F_RDLCK, F_WRLCK, F_UNLCK = 0, 1, 2
FATTR_MODE, FATTR_SIZE, FATTR_FH = 1, 8, 64


def lookup(name, dir=1):
    return (1, cstr(name), dir)


def create(name, flags=O_RDWR, mode=0o644, dir=1):
    return (35, struct.pack("<IIII", flags, mode, 0o22, 0) + cstr(name), dir)


def open_file(node, flags=O_RDWR):
    return (14, struct.pack("<II", flags, 0), node)


def read(fh, size=4096, offset=0, opcode=15):
    return (opcode, struct.pack("<QQIIQII", fh, offset, size, 0, 0, 0, 0), 1)


def write_data(fh, data, offset=0):
    return (16, struct.pack("<QQIIQII", fh, offset, len(data), 0, 0, 0, 0) + data, 1)


def setattr(node, valid, fh=0, size=0, mode=0):
    return (4, struct.pack("<IIQQQQQQIIIIIIII", valid, 0, fh, size, 0, 0, 0, 0, 0, 0, 0, mode,
                           0, 0, 0, 0), node)


def rename(old, new, newdir=1, dir=1):
    return (12, struct.pack("<Q", newdir) + cstr(old) + cstr(new), dir)


def release(fh, opcode=18):
    return (opcode, struct.pack("<QIIQ", fh, 0, 0, 0), 1)


def lock(fh, owner, type, wait=False, flock=False):
    return (33 if wait else 32, struct.pack("<QQQQIIII", fh, owner, 0, 2**63 - 1, type, 42,
                                            1 if flock else 0, 0), 1)


def forget(node, count=1):
    return (2, struct.pack("<Q", count), node)


def getattr(node):
    return (3, struct.pack("<IIQ", 0, 0, 0), node)


PASSTHROUGH_SEQUENCES = {
    # The life of a file: create, write, read back, truncate, rename, list, release, forget.
    "files": [lookup("file"), create("new"), write_data(1, b"some data"), read(1),
              setattr(3, FATTR_SIZE | FATTR_FH, fh=1, size=4), rename("new", "renamed"),
              (27, struct.pack("<II", 0, 0), 1), read(2, opcode=44), release(2, opcode=29),
              release(1), forget(3), getattr(2), lookup("inner", dir=4), lookup("dir"),
              lookup("inner", dir=4), (10, cstr("renamed"), 1)],
    # A lock held by one owner: another's SETLKW waits, is interrupted, waits again, and is
    # granted when the first lets go; flock waits likewise; one wait is left for the end.
    "locks": [create("lockme"), open_file(2), lock(1, 7, F_WRLCK), lock(2, 8, F_WRLCK, wait=True),
              (36, struct.pack("<Q", 6), 1), lock(2, 8, F_WRLCK, wait=True),
              lock(1, 7, F_UNLCK), (31, struct.pack("<QQQQIIII", 2, 9, 0, 100, F_RDLCK, 42, 0, 0), 1),
              lock(1, 7, F_WRLCK, flock=True), lock(2, 8, F_RDLCK, wait=True, flock=True),
              release(1), lock(2, 9, F_WRLCK, wait=True)],
    # What leads out of the tree: symlinks as nodes, as directories, as files to open and change.
    "escape": [lookup("out"), lookup("outfile"), lookup("absolute"), open_file(3, O_RDWR | O_TRUNC),
               setattr(3, FATTR_MODE, mode=0o777), lookup("secret", dir=2),
               create("planted", dir=2), rename("file", "stolen", newdir=2),
               (10, cstr("secret"), 2), (5, b"", 4), (13, struct.pack("<Q", 3) + cstr("hard"), 1),
               (21, struct.pack("<IIII", 3, 0, 0, 0) + cstr("user.x") + b"abc", 3),
               rename("..", "x"), lookup(".."), create("../escaped")],
    # Node ids and fh values nobody handed out: ESTALE and EBADF.
    "stale": [lookup("file"), forget(2), getattr(2), getattr(99), open_file(12345), read(7),
              write_data(2**63, b"x"), release(99), lock(5, 1, F_WRLCK, wait=True),
              setattr(1, FATTR_SIZE | FATTR_FH, fh=77, size=1)],
    # Special files opened as a hostile kernel would: the kernel opens FIFOs itself.
    "fifo": [lookup("fifo"), open_file(2, O_RDONLY), open_file(2, O_WRONLY), open_file(2, O_RDWR),
             read(1), (8, struct.pack("<IIII", 0o10644, 0, 0o22, 0) + cstr("fifo2"), 1),
             open_file(3, O_RDONLY)],
}


def sequence(requests, uid=0):
    messages = (header(op, body, unique=0, nodeid=node, uid=uid) for op, body, node in requests)
    return b"".join(struct.pack("<H", len(m)) + m for m in messages)


def write(name, data, corpus=CORPUS):
    with open(os.path.join(corpus, name), "wb") as f:
        f.write(data)


def fresh(corpus):
    """Makes `corpus` (a directory next to this script) empty, and returns its path."""
    path = os.path.join(HERE, corpus)
    os.makedirs(path, exist_ok=True)
    for name in os.listdir(path):
        os.remove(os.path.join(path, name))
    return path


# The seeds of the fuzzers over what a daemon reads from outside the kernel. Integers in native
# order (little-endian here), as those records have them.

# What may be wrong with a kept memfd as a whole (tests/fuzz/kept_image.h): 0 nothing, 5 unsealed.
IMAGE_SOUND, IMAGE_UNSEALED = 0, 5
O_APPEND, O_CREAT, O_DIRECTORY = 0o2000, 0o100, 0o200000
S_IFREG, S_IFDIR, S_IFLNK = 0o100000, 0o040000, 0o120000
ENOENT, EEXIST = 2, 17
RESEND = 1 << 63
# This daemon's first node id and fh after a crash, as incarnation 1
# (crash/incarnation.h).
OWN_FIRST = 1 << 40
# The scratch inodes a record names by tag (tests/fuzz/scratch_inodes.h).
ROOT, FILE, DIR, INNER, FIFO, OUTFILE, CANARY_SECRET, CANARY_DIR = range(8)
SCRATCH_TAG = 0x52480000


def framed(messages):
    """Messages each after a 16-bit length (tests/fuzz/fuzz_checks.h, ForEachMessage)."""
    return b"".join(struct.pack("<H", len(m)) + m for m in messages)


def slot_image(header, slots):
    return header + b"".join(slots)


# daemon/crash/change_journal.h: a header (taken), then slots of state, opcode, unique, result, evidence.
CHANGE_BEGUN, CHANGE_DONE = 0x52464342, 0x52464344
OP_LOOKUP, OP_MKDIR, OP_UNLINK, OP_RMDIR, OP_RENAME, OP_OPEN, OP_WRITE, OP_CREATE = (
    1, 9, 10, 11, 12, 14, 16, 35)


def change(state, opcode, unique, result=0, evidence=0):
    return struct.pack("<IIQqQ", state, opcode, unique, result, evidence)


def change_seed(taken, slots, requests, flaw=IMAGE_SOUND):
    image = struct.pack("<Q", taken) + b"".join(slots)
    messages = [header(op, body, unique=unique, nodeid=node, uid=0)
                for op, body, unique, node in requests]
    return bytes([flaw]) + struct.pack("<H", len(image)) + image + framed(messages)


def change_journal_seeds():
    # The dead daemon made a directory, failed an unlink, was killed in a rename, created a file
    # (fh 5, never answered) and was killed in an append (the file was 13 bytes long before); the
    # kernel resends them all, then sends new changes. Node ids from 2^40 on, in the order names
    # are first looked up: dir, made, file; fh values from 2^40 + 1: made's, then file's.
    recorded = [change(CHANGE_DONE, OP_MKDIR, 10), change(CHANGE_DONE, OP_UNLINK, 12, -ENOENT),
                change(CHANGE_BEGUN, OP_RENAME, 14, evidence=4711),
                change(CHANGE_DONE, OP_CREATE, 16, 5), change(CHANGE_BEGUN, OP_WRITE, 18, 0, 13)]
    resent = [(OP_MKDIR, struct.pack("<II", 0o755, 0o22) + cstr("dir"), RESEND | 10, 1),
              (OP_UNLINK, cstr("gone"), RESEND | 12, 1),
              (OP_RENAME, struct.pack("<Q", 1) + cstr("outfile") + cstr("renamed"), RESEND | 14,
               1),
              (OP_CREATE, struct.pack("<IIII", 2, 0o644, 0o22, 0) + cstr("made"), RESEND | 16, 1),
              (OP_LOOKUP, cstr("file"), 20, 1),
              (OP_OPEN, struct.pack("<II", 1 | O_APPEND, 0), 21, OWN_FIRST + 2),
              (OP_WRITE, struct.pack("<QQIIQII", OWN_FIRST + 2, 0, 3, 0, 0, 0, 0) + b"abc",
               RESEND | 18, OWN_FIRST + 2),
              (OP_MKDIR, struct.pack("<II", 0o755, 0o22) + cstr("new"), 22, 1),
              (OP_RMDIR, cstr("new"), 23, 1)]
    # A ring gone round: the newest record of unique 30 (slot 2, just before taken % kSlots)
    # wins over the older; slot 1 was torn by a crash.
    wrapped = [change(CHANGE_DONE, OP_MKDIR, 30, -EEXIST), change(0, OP_MKDIR, 32),
               change(CHANGE_DONE, OP_MKDIR, 30, 0)]
    # A result no daemon records (below minus the largest errno): answered EIO, never negated.
    impossible = [change(CHANGE_DONE, OP_MKDIR, 50, -(2**63))]
    # A create begun and not recorded done: made only where the name is new and the caller's.
    begun_create = [change(CHANGE_BEGUN, OP_CREATE, 40, evidence=0)]
    return {
        "recorded": change_seed(5, recorded, resent),
        "wrapped": change_seed(65536 + 3, wrapped,
                               [(OP_MKDIR, struct.pack("<II", 0o755, 0o22) + cstr("dir"),
                                 RESEND | 30, 1)]),
        "begun-create": change_seed(1, begun_create,
                                    [(OP_CREATE, struct.pack("<IIII", 2, 0o644, 0o22, 0) +
                                      cstr("fresh"), RESEND | 40, 1)]),
        "impossible-result": change_seed(1, impossible,
                                         [(OP_MKDIR, struct.pack("<II", 0o755, 0o22) +
                                           cstr("dir"), RESEND | 50, 1)]),
        "empty": change_seed(0, [], resent[-2:]),
        "unsealed": change_seed(5, recorded, resent[:1], IMAGE_UNSEALED),
    }


# daemon/crash/node_journal.h on daemon/crash/slot_journal.h: a header (used, unrecorded), then slots of
# state, type, node id, dev, ino, lookups, handle size and handle (136 bytes), 184 bytes each.
NODE_VALID = 0x52464e44


def node(nodeid, scratch, type, lookups=1, state=NODE_VALID, dev=0, ino=0, handle_size=None):
    size = SCRATCH_TAG + scratch if handle_size is None else handle_size
    return struct.pack("<IIQQQQI136sI", state, type, nodeid, dev, ino, lookups, size, b"", 0)


def node_journal_seeds():
    recorded = [node(2, FILE, S_IFREG, 2), node(3, DIR, S_IFDIR), node(5, INNER, S_IFREG),
                node(7, OUTFILE, S_IFLNK, 3)]
    # Ids no daemon gives (0, the root's, 2^64 - 1, 2^62) beside a real node.
    impossible = [node(0, FILE, S_IFREG), node(1, DIR, S_IFDIR), node(2**64 - 1, INNER, S_IFREG),
                  node(2**62, FIFO, 0o010000), node(4, FILE, S_IFREG)]
    # A torn record, an id twice, handles of no size and too long, a handle that is not the
    # inode's dev and ino, and unrecorded nodes: the recovery is incomplete.
    torn = [node(2, FILE, S_IFREG, state=0), node(3, DIR, S_IFDIR), node(3, FILE, S_IFREG),
            node(4, FILE, S_IFREG, handle_size=0), node(6, FILE, S_IFREG, handle_size=137),
            node(8, FILE, S_IFREG, dev=1, ino=1), node(9, ROOT, S_IFDIR)]
    return {
        "recorded": bytes([IMAGE_SOUND]) + slot_image(struct.pack("<QQ", 4, 0), recorded),
        "impossible-ids": bytes([IMAGE_SOUND]) + slot_image(struct.pack("<QQ", 5, 0), impossible),
        "torn": bytes([IMAGE_SOUND]) + slot_image(struct.pack("<QQ", 7, 2), torn),
        "used-past-the-records": bytes([IMAGE_SOUND]) + slot_image(struct.pack("<QQ", 4096, 0),
                                                                   recorded[:1]),
        "unsealed": bytes([IMAGE_UNSEALED]) + slot_image(struct.pack("<QQ", 4, 0), recorded),
    }


# daemon/crash/open_file_journal.h on daemon/crash/slot_journal.h: a header (used, unrecorded), then slots
# of state, flags, fh, node id, handle size and handle (136 bytes), 168 bytes each. The fuzzer's
# nodes: file 2, dir 3, dir/inner 4, fifo 5, outfile 6.
OPEN_VALID = 0x52464f46
NODE_FILE, NODE_DIR, NODE_INNER = 2, 3, 4


def open_file(fh, flags, nodeid, scratch, state=OPEN_VALID, handle_size=None):
    size = SCRATCH_TAG + scratch if handle_size is None else handle_size
    return struct.pack("<IiQQI136sI", state, flags, fh, nodeid, size, b"", 0)


def open_file_journal_seeds():
    # Open at the crash: the file read-write, the directory, the file opened for appending with
    # O_CREAT | O_TRUNC (neither is done again), and dir/inner read-only.
    files = [open_file(3, 2, NODE_FILE, FILE), open_file(4, O_DIRECTORY, NODE_DIR, DIR),
             open_file(7, 1 | O_APPEND | O_CREAT | 0o1000, NODE_FILE, FILE),
             open_file(9, 0, NODE_INNER, INNER)]
    # Handles of other inodes than the records' nodes: the directory's for the file, the
    # canary's (outside source) for the file and for the directory.
    wrong = [open_file(3, 2, NODE_FILE, DIR), open_file(5, 0, NODE_FILE, CANARY_SECRET),
             open_file(6, O_DIRECTORY, NODE_DIR, CANARY_DIR)]
    # A torn record, an fh twice, a handle too long, fh 0, a node no one looked up.
    torn = [open_file(3, 2, NODE_FILE, FILE, state=0), open_file(4, 0, NODE_FILE, FILE),
            open_file(4, 0, NODE_INNER, INNER), open_file(5, 0, NODE_FILE, FILE, handle_size=137),
            open_file(0, 0, NODE_FILE, FILE), open_file(8, 0, 99, FILE)]
    return {
        "files": bytes([IMAGE_SOUND]) + slot_image(struct.pack("<QQ", 4, 0), files),
        "wrong-inodes": bytes([IMAGE_SOUND]) + slot_image(struct.pack("<QQ", 3, 0), wrong),
        "torn": bytes([IMAGE_SOUND]) + slot_image(struct.pack("<QQ", 6, 0), torn),
        "unsealed": bytes([IMAGE_UNSEALED]) + slot_image(struct.pack("<QQ", 4, 0), files),
    }


# transport/handover_record.cc: messages of a u32 count and record bytes, fds attached; the
# record bytes start with the totals (magic, version, record bytes, fds). Strings are a u64
# length and bytes (transport/record_fields.h).
HANDOVER_MAGIC = 0x52464844


def string(data):
    return struct.pack("<Q", len(data)) + data


# The Negotiated fields in ForEachField's order, as Linux 6.18 and ringfuse agree them.
NEGOTIATED = struct.pack("<IIQQIIIHHIIH?", 45, 45, 0x73FFFFFB, 0x4A000000, 1 << 20, 256,
                         1 << 17, 12, 9, 1, 0, 0, False)


def handover_body(app=b"state", transport=b"", transport_fds=0, version=2):
    body = NEGOTIATED + string(b"/mnt/fuzz") + struct.pack("<II", 1, 7) + string(app)
    if version >= 2:
        body += string(transport) + struct.pack("<I", transport_fds)
    return body


def handover_stream(body, fds, version=2):
    return struct.pack("<IIQII", HANDOVER_MAGIC, version, len(body), fds, 0) + body


def handover_messages(stream, fds, pieces=1):
    """The stream in `pieces` messages, the fds with the first; each message after the byte
    that says how many fds go with it (tests/fuzz/fuzz_fds.h)."""
    size = -(-len(stream) // pieces)
    chunks = [stream[i:i + size] for i in range(0, len(stream), size)]
    return [bytes([fds if i == 0 else 0]) + struct.pack("<I", len(c)) + c
            for i, c in enumerate(chunks)]


# transport/uring_cmd_handover.cc: payload stride, queues; each queue's blocks (address,
# offset, count) and entries (block, slot, unique).
def rings(queues):
    out = struct.pack("<QI", 4096, len(queues))
    for blocks, entries in queues:
        out += struct.pack("<I", len(blocks)) + b"".join(struct.pack("<QQI", *b) for b in blocks)
        out += struct.pack("<I", len(entries)) + b"".join(struct.pack("<IIQ", *e) for e in entries)
    return out


def handover_record_seeds():
    ring = rings([([(0x7f0000000000, 0, 4)], [(0, 1, 100), (0, 3, 102)])])
    return {
        "connection": framed(handover_messages(handover_stream(handover_body(), 2), 2)),
        "chunked": framed(handover_messages(handover_stream(handover_body(b"x" * 64), 3), 3, 3)),
        "rings": framed(handover_messages(
            handover_stream(handover_body(b"", ring, 1), 3), 3)),
        "version1": framed(handover_messages(
            handover_stream(handover_body(version=1), 1, version=1), 1)),
    }


# daemon/handover/handover_state.cc: magic, version, revision, the table's fields, then lists (a u64
# count each) of nodes, tracked entries, handle mounts, files, directories, lock owners' opens
# and backing ids. The fuzzer replaces these stand-ins (tests/fuzz/handover_state_fuzzer.cc):
DEV = b"@@dev@@@"


def ino(scratch):
    return b"@@ino@@" + bytes([scratch])


def handle(scratch):
    return string(b"@@hnd@@" + bytes([scratch]))


STATE_MAGIC = 0x52464453
# The fds a seed hands over, by the fuzzer's kFdKinds.
FD_ROOT, FD_SOURCE_DIR, FD_FILE_RW, FD_FILE_PATH, FD_DIR, FD_INNER = range(6)


def saved_node(nodeid, scratch, type, handle_of=None, parent=0, name=b"", lookups=1, fd=-1,
               serves=True):
    h = handle(handle_of) if handle_of is not None else string(b"")
    return (struct.pack("<Q", nodeid) + DEV + ino(scratch) + struct.pack("<I", type) + h +
            struct.pack("<Q", parent) + string(name) + struct.pack("<Q?i", lookups, serves, fd))


def listed(items):
    return struct.pack("<Q", len(items)) + b"".join(items)


def state_seed(fds, revision, next_nodeid, nodes, entries=(), tracked=0, files=(), dirs=(),
               owners=()):
    record = (struct.pack("<II", STATE_MAGIC, 1) + string(revision) +
              struct.pack("<QQQQ?", next_nodeid, 0, 10, tracked, True) + listed(nodes) +
              listed([struct.pack("<Q", p) + string(n) for p, n in entries]) + listed([]) +
              listed([struct.pack("<Qii??", fh, fd, flags, False, False)
                      for fh, fd, flags in files]) +
              listed([struct.pack("<Qi", fh, fd) for fh, fd in dirs]) +
              listed([DEV + ino(FILE) + struct.pack("<Qi?QI", owner, fd, True, fh, 42)
                      for owner, fd, fh in owners]) + listed([]))
    return bytes([len(fds)] + list(fds)) + record


def handover_state_seeds():
    root = saved_node(1, ROOT, S_IFDIR, fd=0)
    return {
        # Nodes reopened by handle, one by name under another; an open file, an open directory,
        # and a lock owner's open of the file.
        "passthrough": state_seed(
            [FD_ROOT, FD_FILE_RW, FD_DIR, FD_FILE_RW], b"", 5,
            [root, saved_node(2, FILE, S_IFREG, FILE, lookups=2), saved_node(3, DIR, S_IFDIR, DIR),
             saved_node(4, INNER, S_IFREG, parent=3, name=b"inner")],
            files=[(1, 1, 2)], dirs=[(2, 2)], owners=[(7, 3, 1)]),
        # Revisions mode: the revision served and the names tracked since its publish.
        "revisions": state_seed([FD_ROOT], b"r2", 2, [root], entries=[(1, b"file"),
                                                                      (1, b"missing")],
                                tracked=1 << 18),
        # No handles (a user's daemon): nodes by name, and one only FORGET closes, with its fd.
        "by-name": state_seed(
            [FD_ROOT, FD_FILE_PATH], b"", 6,
            [root, saved_node(2, FILE, S_IFREG, parent=1, name=b"file"),
             saved_node(3, DIR, S_IFDIR, parent=1, name=b"dir"),
             saved_node(4, INNER, S_IFREG, parent=3, name=b"inner"),
             saved_node(5, FILE, S_IFREG, fd=1, serves=False)]),
    }


# transport/keeper_protocol.cc: each message a u32 kind, then its fields.
HELLO, DEPOSIT, NOTE, SERVING, FRESH, KEPT = 1, 2, 3, 4, 5, 6
KEEPER, DAEMON, DAEMON_MESSAGE, FRAMED_NOTE = 0, 1, 2, 3


def keeper_message(kind, fields=b"", fds=0):
    return bytes([fds]) + struct.pack("<I", kind) + fields


def keeper_protocol_seeds():
    deposit = handover_messages(handover_stream(handover_body(b""), 2), 2)
    return {
        # A daemon starts (fresh), deposits its connection, notes a revision, crashes; the next
        # says hello (kept, the connection back) and serves.
        "keeper-lifetime": bytes([KEEPER]) + framed(
            [keeper_message(HELLO), keeper_message(DEPOSIT)] + deposit +
            [keeper_message(NOTE, string(b"r2")), keeper_message(SERVING), keeper_message(HELLO),
             keeper_message(SERVING)]),
        "keeper-second-deposit": bytes([KEEPER]) + framed(
            [keeper_message(DEPOSIT)] + deposit + [keeper_message(DEPOSIT)] + deposit),
        "daemon-fresh": bytes([DAEMON]) + framed([keeper_message(FRESH)]),
        "daemon-kept": bytes([DAEMON]) + framed(
            [keeper_message(KEPT, struct.pack("<I", 3) + string(b"r1"))] +
            handover_messages(handover_stream(handover_body(b""), 3), 3)),
        "message-hello": bytes([DAEMON_MESSAGE]) + struct.pack("<I", HELLO),
        "message-note": bytes([DAEMON_MESSAGE]) + struct.pack("<I", NOTE) + string(b"r3"),
        "message-serving": bytes([DAEMON_MESSAGE]) + struct.pack("<I", SERVING),
        "framed-note": bytes([FRAMED_NOTE]) + b"r4",
    }


def main():
    os.makedirs(CORPUS, exist_ok=True)
    for name in os.listdir(CORPUS):
        os.remove(os.path.join(CORPUS, name))
    for opcode, body in sorted(BODIES.items()):
        message = header(opcode, body)
        for mode in range(3):
            write(f"op{opcode:02d}-mode{mode}", bytes([mode]) + message)
        # On the ring the header stays in in_out and every argument goes to the payload.
        write(f"op{opcode:02d}-mode{MODE_RING_DISPATCH}", bytes([MODE_RING_DISPATCH, 40, 0]) + message)
    offer = BODIES[26]
    for name, requests in (("conversation", CONVERSATION), ("conversation-short", CONVERSATION[:3])):
        stream = b"".join(struct.pack("<H", len(m)) + m
                          for m in (header(op, body, unique) for op, body, unique in requests))
        write(name, bytes([MODE_CONVERSATION]) + offer + stream)
    os.makedirs(PASSTHROUGH_CORPUS, exist_ok=True)
    for name in os.listdir(PASSTHROUGH_CORPUS):
        os.remove(os.path.join(PASSTHROUGH_CORPUS, name))
    for name, requests in PASSTHROUGH_SEQUENCES.items():
        write(name, sequence(requests), PASSTHROUGH_CORPUS)
        write(name + "-user", sequence(requests, uid=1000), PASSTHROUGH_CORPUS)
    for corpus, seeds in (("change_journal_corpus", change_journal_seeds()),
                          ("node_journal_corpus", node_journal_seeds()),
                          ("open_file_journal_corpus", open_file_journal_seeds()),
                          ("handover_record_corpus", handover_record_seeds()),
                          ("handover_state_corpus", handover_state_seeds()),
                          ("keeper_protocol_corpus", keeper_protocol_seeds())):
        path = fresh(corpus)
        for name, data in seeds.items():
            write(name, data, path)


if __name__ == "__main__":
    main()
