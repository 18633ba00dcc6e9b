"""Control-socket client for the checkpoint tests (imported or run).

Run: python3 ckpt_client.py SOCK 'JSON'     prints the answer as one JSON line;
exits 1 when the daemon answers ok:false or the socket fails.
"""
import json
import socket
import sys


def call(sock_path, req, timeout=60.0):
    """Send one request (dict) and return the decoded answer."""
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(timeout)
    try:
        s.connect(sock_path)
        s.sendall((json.dumps(req) + "\n").encode())
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    finally:
        s.close()
    return json.loads(buf.decode())


class Conn:
    """One connection kept open for many requests (fast turn flipping)."""

    def __init__(self, sock_path, timeout=60.0):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.settimeout(timeout)
        self.s.connect(sock_path)
        self.f = self.s.makefile("rw")

    def call(self, req):
        self.f.write(json.dumps(req) + "\n")
        self.f.flush()
        line = self.f.readline()
        if not line:
            raise ConnectionError("daemon closed the control socket")
        return json.loads(line)

    def close(self):
        self.f.close()
        self.s.close()


def main():
    if len(sys.argv) != 3:
        print("usage: ckpt_client.py SOCK JSON", file=sys.stderr)
        return 2
    try:
        ans = call(sys.argv[1], json.loads(sys.argv[2]))
    except (OSError, ValueError) as e:
        print("ckpt_client: %s" % e, file=sys.stderr)
        return 1
    print(json.dumps(ans))
    return 0 if ans.get("ok") else 1


if __name__ == "__main__":
    sys.exit(main())
