#!/usr/bin/env python3
"""Writes the fuzzer's seed corpus: one small valid request per opcode, in each of the modes
(parse, ring split, dispatch, ring dispatch with its header/op_in split), and conversations
(an INIT offer, then length-prefixed requests), built from the FUSE 7.45 layout. Run from anywhere; it
rewrites tests/fuzz/corpus/ next to this script."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")


def header(opcode, body, unique=10, nodeid=1):
    return struct.pack("<IIQQIIIHH", 40 + len(body), opcode, unique, nodeid, 1000, 1000, 42, 0, 0) + body


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


def write(name, data):
    with open(os.path.join(CORPUS, name), "wb") as f:
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


if __name__ == "__main__":
    main()
