"""Usage: memfs_test.py MEMFS_BINARY

Mounts examples/memfs and uses it as a program would: files written and read back, truncated
and appended to, directories, renames (plain, RENAME_NOREPLACE, RENAME_EXCHANGE), symlinks, hard
links, xattrs and removal, every result checked.
"""

import ctypes
import errno
import os
import sys

from served import Failure, run, served

# renameat2(2) flags, from <linux/fs.h>.
RENAME_NOREPLACE = 1 << 0
RENAME_EXCHANGE = 1 << 1
AT_FDCWD = -100

libc = ctypes.CDLL(None, use_errno=True)


def renameat2(old, new, flags):
    if libc.renameat2(AT_FDCWD, old.encode(), AT_FDCWD, new.encode(), flags) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), old)


def read(path):
    with open(path) as f:
        return f.read()


def write(path, text, mode="w"):
    with open(path, mode) as f:
        f.write(text)


def expect_error(code, call, *args):
    try:
        call(*args)
    except OSError as error:
        if error.errno == code:
            return
        raise Failure(f"{call.__name__}{args}: {error}, expected {errno.errorcode[code]}")
    raise Failure(f"{call.__name__}{args} succeeded, expected {errno.errorcode[code]}")


def check_files(root):
    path = os.path.join(root, "file")
    write(path, "hello, memfs\n")
    assert read(path) == "hello, memfs\n", read(path)
    write(path, "more\n", "a")
    os.truncate(path, 6)
    write(path, "!", "a")
    assert read(path) == "hello,!", read(path)
    assert os.stat(path).st_size == 7
    os.chmod(path, 0o600)
    assert os.stat(path).st_mode & 0o777 == 0o600


def check_directories_and_renames(root):
    os.mkdir(os.path.join(root, "dir"))
    write(os.path.join(root, "a"), "A")
    write(os.path.join(root, "b"), "B")
    os.rename(os.path.join(root, "a"), os.path.join(root, "dir", "a"))
    assert sorted(os.listdir(os.path.join(root, "dir"))) == ["a"]
    assert read(os.path.join(root, "dir", "a")) == "A"
    expect_error(errno.EEXIST, renameat2, os.path.join(root, "dir", "a"), os.path.join(root, "b"),
                 RENAME_NOREPLACE)
    renameat2(os.path.join(root, "dir", "a"), os.path.join(root, "b"), RENAME_EXCHANGE)
    assert read(os.path.join(root, "b")) == "A"
    assert read(os.path.join(root, "dir", "a")) == "B"
    expect_error(errno.ENOTEMPTY, os.rmdir, os.path.join(root, "dir"))


def check_links(root):
    target = os.path.join(root, "dir", "a")
    os.symlink("dir/a", os.path.join(root, "symlink"))
    assert os.readlink(os.path.join(root, "symlink")) == "dir/a"
    assert read(os.path.join(root, "symlink")) == "B"
    os.link(target, os.path.join(root, "hardlink"))
    assert os.stat(target).st_nlink == 2
    assert os.stat(target).st_ino == os.stat(os.path.join(root, "hardlink")).st_ino
    os.unlink(target)
    assert read(os.path.join(root, "hardlink")) == "B", "the other link keeps the data"
    assert os.stat(os.path.join(root, "hardlink")).st_nlink == 1
    expect_error(errno.ENOENT, os.stat, os.path.join(root, "symlink"))  # now dangling


def check_xattrs(root):
    path = os.path.join(root, "file")
    os.setxattr(path, "user.colour", b"blue")
    assert os.getxattr(path, "user.colour") == b"blue"
    expect_error(errno.EEXIST, os.setxattr, path, "user.colour", b"red", os.XATTR_CREATE)
    os.setxattr(path, "user.colour", b"red", os.XATTR_REPLACE)
    assert os.getxattr(path, "user.colour") == b"red"
    assert os.listxattr(path) == ["user.colour"], os.listxattr(path)
    os.removexattr(path, "user.colour")
    expect_error(errno.ENODATA, os.getxattr, path, "user.colour")


def check_removal(root):
    for name in ["file", "b", "symlink", "hardlink"]:
        os.unlink(os.path.join(root, name))
    os.rmdir(os.path.join(root, "dir"))
    assert os.listdir(root) == [], os.listdir(root)
    assert os.statvfs(root).f_bsize > 0


def main():
    with served([sys.argv[1]]) as (_, root):
        check_files(root)
        check_directories_and_renames(root)
        check_links(root)
        check_xattrs(root)
        check_removal(root)
        print(f"{sys.argv[1]}: files, directories, renames, links, xattrs and removal work")


if __name__ == "__main__":
    run(main)
