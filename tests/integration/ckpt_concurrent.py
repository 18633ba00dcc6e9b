"""Writers and turn flippers for ckpt_concurrent.sh, and the checker of the
store afterwards.

  ckpt_concurrent.py run TREE SOCK SECONDS NTHREADS   writers + turn flipper
  ckpt_concurrent.py check STORE NTHREADS RUN_JSON    every commit consistent

`run` prints JSON: the final counters, the number of turns, and for each
turn "flip N" the counters every writer had acknowledged before it was
asked for ("acks"); `check` reads that file.

Each writer thread i repeats, with counter c = 1, 2, ...:
  append "%08d\n" % c to log_i (O_APPEND), then replace a_i with c, then
  replace b_i with c (write a temp file, rename over). A checkpoint taken
  while no operation is halfway therefore shows, for every i, with L the
  number of lines of log_i: L-1 <= a_i <= L, b_i in {a_i, a_i-1}, and
  b_i == a_i when a_i == L-1; log_i is exactly the lines 1..L.
No lost write: the checkpoint of turn "flip N" holds every write that was
acknowledged before that turn was asked for (b_i >= acks[N][i]), and the
counters never go back from one checkpoint to the next.
"""
import json
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ckpt_client  # noqa: E402

LINE = 9  # "%08d\n"


def replace(tree, name, text):
    tmp = os.path.join(tree, "." + name + ".tmp")
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, os.path.join(tree, name))


def writer(tree, i, stop, counts, errors):
    c = 0
    try:
        log = os.open(os.path.join(tree, "log_%d" % i),
                      os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        while not stop.is_set():
            c += 1
            os.write(log, b"%08d\n" % c)
            replace(tree, "a_%d" % i, "%d\n" % c)
            replace(tree, "b_%d" % i, "%d\n" % c)
            counts[i] = c
        os.close(log)
    except Exception as e:  # reported by the main thread
        errors.append("writer %d at %d: %r" % (i, c, e))


def flipper(sock, stop, stats, counts, acks, errors):
    try:
        conn = ckpt_client.Conn(sock)
        n = 0
        while not stop.is_set():
            # what every writer has acknowledged so far: the checkpoint of
            # this turn is taken after the turn begins, so it must hold it
            acks.append(list(counts))
            ans = conn.call({"op": "turn", "reason": "flip %d" % n})
            if not ans.get("ok"):
                errors.append("turn %d: %r" % (n, ans))
                return
            n += 1
            time.sleep(0.002 + (n % 4) * 0.001)
        conn.close()
        stats["turns"] = n
    except Exception as e:
        errors.append("flipper: %r" % e)


def run(tree, sock, seconds, nthreads):
    stop = threading.Event()
    counts = [0] * nthreads
    errors = []
    stats = {}
    acks = []
    threads = [threading.Thread(target=writer, args=(tree, i, stop, counts, errors))
               for i in range(nthreads)]
    threads.append(threading.Thread(target=flipper,
                                    args=(sock, stop, stats, counts, acks, errors)))
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join(30)
        if t.is_alive():
            errors.append("a thread is stuck 30 s after stop (deadlock?)")
    for e in errors:
        print("error:", e, file=sys.stderr)
    print(json.dumps({"counts": counts, "turns": stats.get("turns", 0), "acks": acks}))
    return 1 if errors else 0


def check_state(get, nthreads, where):
    """Return a list of violations of the invariant in one tree state."""
    bad = []
    for i in range(nthreads):
        a, b, log = get("a_%d" % i), get("b_%d" % i), get("log_%d" % i)
        if log is None:
            if a is not None or b is not None:
                bad.append("%s: a_%d/b_%d without log_%d" % (where, i, i, i))
            continue
        if len(log) % LINE:
            bad.append("%s: log_%d has a partial line (%d bytes)" % (where, i, len(log)))
            continue
        nl = len(log) // LINE
        want = b"".join(b"%08d\n" % k for k in range(1, nl + 1))
        if log != want:
            bad.append("%s: log_%d is not the lines 1..%d" % (where, i, nl))
        av = int(a) if a is not None else 0
        bv = int(b) if b is not None else 0
        ok = nl - 1 <= av <= nl and bv in (av, av - 1) and (av == nl or bv == av)
        if not ok:
            bad.append("%s: thread %d shows log=%d a=%d b=%d (no real state)"
                       % (where, i, nl, av, bv))
    return bad


def check(store, nthreads, run_json):
    with open(run_json) as f:
        final = json.load(f)
    acks = final.get("acks", [])
    log = subprocess.run(["git", "--git-dir", store, "log", "--format=%H %s"],
                         check=True, capture_output=True, text=True).stdout.splitlines()
    commits = [line.split(" ", 1)[0] for line in log]
    subjects = [line.split(" ", 1)[1] if " " in line else "" for line in log]
    cat = subprocess.Popen(["git", "--git-dir", store, "cat-file", "--batch"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def blob(commit, name):
        cat.stdin.write(("%s:%s\n" % (commit, name)).encode())
        cat.stdin.flush()
        head = cat.stdout.readline().split()
        if head[-1] == b"missing":
            return None
        size = int(head[2])
        data = cat.stdout.read(size)
        cat.stdout.read(1)
        return data

    def counter(commit, name):
        data = blob(commit, name)
        return int(data) if data else 0

    bad = []
    acked_checked = 0
    prev = None  # counters of the next older checkpoint
    for n in range(len(commits) - 1, -1, -1):  # oldest first
        commit, subject = commits[n], subjects[n]
        where = "checkpoint %d (%s, %r)" % (len(commits) - n, commit[:12], subject)
        bad += check_state(lambda name, c=commit: blob(c, name), nthreads, where)
        now = [counter(commit, "b_%d" % i) for i in range(nthreads)]
        if prev is not None:
            for i in range(nthreads):
                if now[i] < prev[i]:
                    bad.append("%s: b_%d = %d went back from %d" % (where, i, now[i], prev[i]))
        prev = now
        if subject.startswith("flip "):
            k = int(subject.split()[1])
            if k < len(acks):
                acked_checked += 1
                for i in range(nthreads):
                    if now[i] < acks[k][i]:
                        bad.append("%s: b_%d = %d, but %d was acknowledged before the turn"
                                   % (where, i, now[i], acks[k][i]))
    # the newest (the unmount checkpoint) is the final tree
    for i, c in enumerate(final["counts"]):
        for name in ("a_%d" % i, "b_%d" % i):
            got = blob(commits[0], name)
            if got != b"%d\n" % c:
                bad.append("newest checkpoint: %s = %r, want %d" % (name, got, c))
    cat.stdin.close()
    cat.wait()
    for b in bad[:40]:
        print("violation:", b, file=sys.stderr)
    if acks and not acked_checked:
        bad.append("no checkpoint of a flipped turn to check acknowledged writes against")
    print(json.dumps({"commits": len(commits), "acked_turns_checked": acked_checked,
                      "violations": len(bad)}))
    return 1 if bad else 0


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "run":
        return run(sys.argv[2], sys.argv[3], float(sys.argv[4]), int(sys.argv[5]))
    if len(sys.argv) == 5 and sys.argv[1] == "check":
        return check(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    if len(sys.argv) == 4 and sys.argv[1] == "tree":
        tree, nthreads = sys.argv[2], int(sys.argv[3])

        def get(name):
            try:
                with open(os.path.join(tree, name), "rb") as f:
                    return f.read()
            except FileNotFoundError:
                return None
        bad = check_state(get, nthreads, "tree")
        for b in bad:
            print("violation:", b, file=sys.stderr)
        return 1 if bad else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
