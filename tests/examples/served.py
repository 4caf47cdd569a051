"""Runs an example filesystem on a fresh mountpoint for a test, bounded in time.

Whatever happens, the example does not outlive the test and nothing stays mounted: leaving the
`with` block ends it with SIGTERM and checks that it unmounted and exited 0; on failure it is
killed and the mountpoint lazily unmounted. A test still running after `seconds` has its example
killed, which fails every call blocked in the mount (ENOTCONN) instead of hanging.
"""

import contextlib
import os
import subprocess
import sys
import tempfile
import threading
import time

SKIPPED = 77  # ctest's SKIP_RETURN_CODE for these tests


class Failure(Exception):
    pass


def skip_unless_mountable():
    if os.geteuid() != 0 or not os.path.exists("/dev/fuse"):
        print("SKIPPED: mounting needs root and /dev/fuse")
        sys.exit(SKIPPED)


def is_mounted(path):
    with open("/proc/mounts") as mounts:
        return any(line.split()[1] == path for line in mounts)


def wait_until(condition, seconds, what):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise Failure(f"{what} within {seconds} s")
        time.sleep(0.05)


@contextlib.contextmanager
def served(argv, seconds=30, **popen_args):
    """Starts argv + [mountpoint]; yields (process, mountpoint) once it is mounted."""
    with tempfile.TemporaryDirectory(prefix="ringfuse-example-") as scratch:
        mountpoint = os.path.join(scratch, "mnt")
        os.mkdir(mountpoint)
        process = subprocess.Popen(argv + [mountpoint], **popen_args)
        def expire():
            print(f"{argv[0]} still serving after {seconds} s: killing it", file=sys.stderr)
            process.kill()

        watchdog = threading.Timer(seconds, expire)
        watchdog.start()
        try:
            wait_until(lambda: is_mounted(mountpoint) or process.poll() is not None, 10,
                       f"{argv[0]} did not mount")
            if not is_mounted(mountpoint):
                raise Failure(f"{argv[0]} exited with {process.returncode} before mounting")
            yield process, mountpoint
            process.terminate()
            try:
                status = process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                raise Failure(f"{argv[0]} did not end within 10 s of SIGTERM")
            if status != 0:
                raise Failure(f"{argv[0]} exited with {status} after SIGTERM")
            if is_mounted(mountpoint):
                raise Failure(f"{argv[0]} left {mountpoint} mounted")
        finally:
            watchdog.cancel()
            if process.poll() is None:
                process.kill()
                process.wait()
            if is_mounted(mountpoint):
                subprocess.run(["umount", "-l", mountpoint], check=False)


def run(test):
    """Runs test() as a script's main: PASSED and 0, or FAILED and why and 1."""
    skip_unless_mountable()
    try:
        test()
    except (Failure, AssertionError, OSError) as error:
        print(f"FAILED: {error!r}")
        sys.exit(1)
    print("PASSED")
