"""Usage: notify_test.py NOTIFY_BINARY

Mounts examples/notify, lets a client cache every file, name and missing name, changes each
through the example's commands and checks that the client sees the change: the counter (STORE),
the message (INVAL_INODE), the renamed note (INVAL_ENTRY, both names) and the snapshot's new
inode (INC_EPOCH). Then the negative control: with --no-notify the same changes stay invisible,
which shows that the kernel did cache all of it and that only the notifications refresh it.
"""

import os
import subprocess
import sys

from served import Failure, run, served


def read(path):
    with open(path) as f:
        return f.read()


def exists(path):
    try:
        os.stat(path)
        return True
    except FileNotFoundError:
        return False


class Client:
    """What a client sees of the mount, and the example's command channel."""

    def __init__(self, process, root):
        self.process = process
        self.root = root

    def path(self, name):
        return os.path.join(self.root, name)

    def command(self, line):
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline().rstrip("\n")
        if not answer:
            raise Failure(f"no answer to '{line}': the example ended")
        return answer

    def change(self, line):
        answer = self.command(line)
        if answer != "ok":
            raise Failure(f"'{line}' was answered '{answer}'")

    def snapshot(self):
        path = self.path("snapshot/version")
        return read(path), os.stat(path).st_ino

    def view(self):
        """Everything the test changes, as the client sees it now."""
        return {
            "counter": read(self.path("counter")),
            "message": read(self.path("message")),
            "note exists": exists(self.path("note")),
            "renamed exists": exists(self.path("renamed")),
            "snapshot": self.snapshot(),
        }


def expect(what, seen, wanted):
    if seen != wanted:
        raise Failure(f"{what}: the client sees {seen!r}, expected {wanted!r}")


def exercise(flags, fresh):
    """Caches everything, changes everything; the client must see the new state if `fresh`."""
    with served([sys.argv[1]] + flags, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                text=True) as (process, root):
        client = Client(process, root)
        before = client.view()  # now cached: pages, attributes, names and the missing "renamed"
        expect("counter", before["counter"], "0\n")
        expect("message", before["message"], "hello\n")
        expect("note", before["note exists"], True)
        expect("renamed", before["renamed exists"], False)
        expect("snapshot", before["snapshot"][0], "generation 1\n")

        client.change("bump")
        expect("counter after bump", read(client.path("counter")), "1\n" if fresh else "0\n")
        client.change("say changed from outside")
        expect("message after say", read(client.path("message")),
               "changed from outside\n" if fresh else "hello\n")
        client.change("rename renamed")
        expect("note after rename", exists(client.path("note")), not fresh)
        expect("renamed after rename", exists(client.path("renamed")), fresh)
        client.change("publish")
        content, inode = client.snapshot()
        expect("snapshot after publish", content, "generation 2\n" if fresh else "generation 1\n")
        expect("a new inode after publish", inode != before["snapshot"][1], fresh)

        # Bad input is refused with a reason, and the example goes on serving and changing.
        answer = client.command("rename a/b")
        expect("a name with a slash", answer.startswith("error:"), True)
        answer = client.command("frobnicate")
        expect("an unknown command", answer.startswith("error: unknown command"), True)
        client.change("bump")
        expect("counter after the errors", read(client.path("counter")), "2\n" if fresh else "0\n")


def main():
    exercise([], fresh=True)
    print("with notifications the client saw every change")
    exercise(["--no-notify"], fresh=False)
    print("without them it saw none (the negative control)")


if __name__ == "__main__":
    run(main)
