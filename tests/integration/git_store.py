"""A checkpoint store read with the real git CLI (imported by the tests)."""
import subprocess


class Store:
    """git rev-list and one long-lived `git cat-file --batch` on GIT_DIR."""

    def __init__(self, git_dir):
        self.git = ["git", "--git-dir", git_dir]
        self._cat = subprocess.Popen(self.git + ["cat-file", "--batch"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def commits(self):
        """The chain, newest first."""
        return subprocess.run(self.git + ["rev-list", "HEAD"], check=True,
                              capture_output=True, text=True).stdout.split()

    def read(self, spec):
        """The bytes of an object (an oid or REV:PATH), None if missing."""
        self._cat.stdin.write(spec.encode() + b"\n")
        self._cat.stdin.flush()
        head = self._cat.stdout.readline().split()
        if head[-1] == b"missing":
            return None
        data = self._cat.stdout.read(int(head[2]))
        self._cat.stdout.read(1)
        return data
