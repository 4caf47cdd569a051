#!/usr/bin/env python3
"""Writes the fuzzer's seed corpus: one small valid request per opcode, in each of the modes
(parse, ring split, dispatch, ring dispatch with its header/op_in split), and conversations
(an INIT offer, then length-prefixed requests), built from the FUSE 7.45 layout; and the
passthrough fuzzer's request sequences over its scratch tree. Run from anywhere; it rewrites
tests/fuzz/corpus/ and tests/fuzz/passthrough_corpus/ next to this script."""
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


if __name__ == "__main__":
    main()
