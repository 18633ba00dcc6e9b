#!/usr/bin/env python3
"""Randomized checkpoint/restore test: random trees and random edit
sequences (contents, exec bits, symlinks, deletions, dir<->file swaps,
empty files, empty directories, renames), a checkpoint after each step (full scan or the list
of changed paths, as the filesystem will give it), then every checkpoint
restored in random order and compared with a copy of the tree taken when it
was made. Excluded paths must never be touched by a restore.

With STORE_RANDOM_STEPS_DRIVER (the store_steps helper), the checkpoints of
changed paths are taken by one process that keeps the store open, as the
daemon does, so that what it keeps between checkpoints is used.

usage: store_random.py HERMESCTL TREE SEED ROUNDS STEPS"""
import atexit
import json
import os
import random
import shutil
import stat
import subprocess
import sys

HCTL, TREE, SEED, ROUNDS, STEPS = sys.argv[1], sys.argv[2], int(sys.argv[3]), \
    int(sys.argv[4]), int(sys.argv[5])
STORE = os.path.join(os.environ["HERMES_HOME"], "checkpoints",
                     __import__("hashlib").sha256(TREE.encode()).hexdigest()[:16])
rng = random.Random(SEED)
EXCLUDED_TOP = ("node_modules", ".env", "app.log")
NAMES = ["a", "b", "c", "d", "src", "lib", "x.txt", "y.py", "z", "dir", "e f", "ü"]


def excluded(rel):
    first = rel.split("/")[0]
    return first in EXCLUDED_TOP or rel.endswith(".log")


def snapshot():
    """Tracked state: path -> ('f', bytes, exec) | ('l', target) | ('d',)."""
    out = {}
    for root, dirs, files in os.walk(TREE):
        rel_root = os.path.relpath(root, TREE)
        for name in list(dirs):
            p = os.path.join(root, name)
            rel = os.path.normpath(os.path.join(rel_root, name))
            if os.path.islink(p):
                out[rel] = ("l", os.readlink(p))
            elif not excluded(rel):
                out[rel] = ("d",)  # empty or not, a directory is part of the tree
            if excluded(rel) or os.path.islink(p):
                dirs.remove(name)
        for name in files:
            p = os.path.join(root, name)
            rel = os.path.normpath(os.path.join(rel_root, name))
            if excluded(rel):
                continue
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("l", os.readlink(p))
            elif stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    out[rel] = ("f", f.read(), bool(st.st_mode & 0o100))
    return out


def excluded_state():
    out = {}
    for top in EXCLUDED_TOP:
        p = os.path.join(TREE, top)
        if os.path.isdir(p):
            for root, _, files in os.walk(p):
                for n in files:
                    with open(os.path.join(root, n), "rb") as f:
                        out[os.path.join(root, n)] = f.read()
        elif os.path.exists(p):
            with open(p, "rb") as f:
                out[p] = f.read()
    return out


def hctl(*args, check=True):
    r = subprocess.run([HCTL, *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        # what the store holds, to tell a lost commit from a walk that ends early
        log = subprocess.run(["git", "--git-dir", STORE, "log", "--format=%H %s", "-n", "5"],
                             capture_output=True, text=True).stdout
        obj = [subprocess.run(["git", "--git-dir", STORE, "cat-file", "-t", a],
                              capture_output=True, text=True).stdout.strip() or "missing"
               for a in args if len(a) == 40]
        sys.exit(f"FAIL: hermesctl {' '.join(args)} -> {r.returncode}: {r.stderr.strip()}\n"
                 f"  object types: {obj}\n  newest commits:\n{log}")
    return r


def rand_content():
    k = rng.random()
    if k < 0.15:
        return b""
    if k < 0.3:
        return bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 300)))
    lines = [f"line {rng.randint(0, 50)} {'x' * rng.randint(0, 20)}" for _ in range(rng.randint(1, 30))]
    return ("\n".join(lines) + ("\n" if rng.random() < 0.8 else "")).encode()


def rand_path(depth=3):
    parts = [rng.choice(NAMES) for _ in range(rng.randint(1, depth))]
    return "/".join(parts)


def existing(kind=None):
    items = []
    for root, dirs, files in os.walk(TREE):
        rel_root = os.path.relpath(root, TREE)
        for n in dirs + files:
            rel = os.path.normpath(os.path.join(rel_root, n))
            if excluded(rel):
                continue
            p = os.path.join(TREE, rel)
            if kind == "dir" and (not os.path.isdir(p) or os.path.islink(p)):
                continue
            if kind == "file" and (os.path.islink(p) or not os.path.isfile(p)):
                continue
            items.append(rel)
        dirs[:] = [d for d in dirs if not excluded(os.path.normpath(os.path.join(rel_root, d)))]
    return items


def remove_any(p):
    if os.path.islink(p) or os.path.isfile(p):
        os.unlink(p)
    elif os.path.isdir(p):
        shutil.rmtree(p)


def make_parents(rel, touched):
    """Create the parent dirs, replacing files/symlinks in the way."""
    parts = rel.split("/")[:-1]
    cur = ""
    for part in parts:
        cur = f"{cur}/{part}" if cur else part
        p = os.path.join(TREE, cur)
        if os.path.islink(p) or (os.path.exists(p) and not os.path.isdir(p)):
            os.unlink(p)
            touched.add(cur)
        if not os.path.exists(p):
            os.mkdir(p)
            touched.add(cur)


def op(touched):
    k = rng.randrange(11)
    if k <= 2:  # create or overwrite a file
        rel = rand_path()
        p = os.path.join(TREE, rel)
        make_parents(rel, touched)
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p)  # dir -> file swap
        elif os.path.islink(p):
            os.unlink(p)
        with open(p, "wb") as f:
            f.write(rand_content())
        if rng.random() < 0.3:
            os.chmod(p, 0o755)
        touched.add(rel)
    elif k == 3:  # append
        fs = existing("file")
        if fs:
            rel = rng.choice(fs)
            with open(os.path.join(TREE, rel), "ab") as f:
                f.write(rand_content())
            touched.add(rel)
    elif k == 4:  # flip the exec bit
        fs = existing("file")
        if fs:
            rel = rng.choice(fs)
            p = os.path.join(TREE, rel)
            os.chmod(p, os.stat(p).st_mode ^ 0o111)
            touched.add(rel)
    elif k == 5:  # delete anything
        items = existing()
        if items:
            rel = rng.choice(items)
            remove_any(os.path.join(TREE, rel))
            touched.add(rel)
    elif k == 6:  # symlink (maybe dangling, maybe replacing a file or dir)
        rel = rand_path(2)
        p = os.path.join(TREE, rel)
        make_parents(rel, touched)
        remove_any(p)
        os.symlink(rng.choice(["a", "../b", "nowhere/x", "src/a", "/etc/hostname"]), p)
        touched.add(rel)
    elif k == 7:  # file -> dir swap
        fs = existing("file")
        if fs:
            rel = rng.choice(fs)
            p = os.path.join(TREE, rel)
            os.unlink(p)
            os.mkdir(p)
            with open(os.path.join(p, rng.choice(NAMES)), "wb") as f:
                f.write(rand_content())
            touched.add(rel)
    elif k == 8:  # rename
        items = existing()
        if items:
            src = rng.choice(items)
            dst = rand_path(2)
            if dst == src or dst.startswith(src + "/") or src.startswith(dst + "/"):
                return
            make_parents(dst, touched)
            dp = os.path.join(TREE, dst)
            if os.path.isdir(dp) and not os.path.islink(dp):
                shutil.rmtree(dp)
            elif os.path.lexists(dp):
                os.unlink(dp)
            os.rename(os.path.join(TREE, src), dp)
            touched.update([src, dst])
    elif k == 9:  # empty file / empty dir
        rel = rand_path(2)
        p = os.path.join(TREE, rel)
        make_parents(rel, touched)
        if not os.path.lexists(p):
            if rng.random() < 0.5:
                open(p, "wb").close()
            else:
                os.mkdir(p)
            touched.add(rel)
    else:  # touch the excluded paths: a restore must leave them alone
        with open(os.path.join(TREE, "node_modules", "pkg", "index.js"), "a") as f:
            f.write(f"// {rng.random()}\n")
        with open(os.path.join(TREE, ".env"), "w") as f:
            f.write(f"SECRET={rng.random()}\n")


def diff_states(want, got):
    msgs = []
    for k in sorted(set(want) | set(got)):
        if want.get(k) != got.get(k):
            msgs.append(f"  {k}: want {str(want.get(k))[:80]} got {str(got.get(k))[:80]}")
    return msgs


DRIVER = None


def driver_close():
    """Let the store_steps process close its store before the test ends."""
    DRIVER.stdin.close()
    DRIVER.wait(timeout=120)


def driver_checkpoint(paths):
    """A checkpoint of paths by the store_steps process: its id."""
    global DRIVER
    if DRIVER is None:
        DRIVER = subprocess.Popen([os.environ["STORE_RANDOM_STEPS_DRIVER"], TREE],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        atexit.register(driver_close)
    DRIVER.stdin.write(f"{len(paths)}\n" + "".join(p + "\n" for p in paths))
    DRIVER.stdin.flush()
    out = DRIVER.stdout.readline().strip()
    if not out or out.startswith("error"):
        sys.exit(f"FAIL: store_steps checkpoint of {paths}: {out or 'no answer'}")
    return {"oid": out}


def main():  # noqa: C901
    os.makedirs(os.path.join(TREE, "node_modules", "pkg"), exist_ok=True)
    with open(os.path.join(TREE, "node_modules", "pkg", "index.js"), "w") as f:
        f.write("// dep\n")
    with open(os.path.join(TREE, ".env"), "w") as f:
        f.write("SECRET=1\n")
    nops = nrestores = nscans = 0
    for rnd in range(ROUNDS):
        saved = {}  # oid -> snapshot
        for _ in range(rng.randint(2, 6)):
            op(set())
        for step in range(STEPS):
            touched = set()
            for _ in range(rng.randint(1, 8)):
                op(touched)
                nops += 1
            use_paths = rng.random() < 0.6 and step > 0
            args = ["checkpoint", "-C", TREE, "-m", f"round {rnd} step {step}", "--json"]
            if use_paths:
                lst = os.path.join(os.path.dirname(TREE), "paths.txt")
                with open(lst, "w") as f:
                    f.write("".join(t + "\n" for t in sorted(touched)))
                args += ["--paths-from", lst]
            if use_paths and os.environ.get("STORE_RANDOM_STEPS_DRIVER"):
                res = driver_checkpoint(sorted(touched))
            else:
                res = json.loads(hctl(*args).stdout)
            if use_paths and rng.random() < 0.3:
                # the O(changed) tree must equal what a full scan builds
                scan = json.loads(hctl("checkpoint", "-C", TREE, "-m", "scan", "--json").stdout)
                nscans += 1
                if scan["changed"]:
                    r = subprocess.run(["git", "--git-dir", STORE, "diff", "--stat", "HEAD~1", "HEAD"],
                                       capture_output=True, text=True)
                    sys.exit(f"FAIL: round {rnd} step {step}: the paths checkpoint differs from "
                             f"a full scan (paths {sorted(touched)}):\n{r.stdout}")
            snap = snapshot()
            if res["oid"] in saved and saved[res["oid"]] != snap:
                sys.exit(f"FAIL: round {rnd} step {step}: 'unchanged' but the tree changed:\n"
                         + "\n".join(diff_states(saved[res['oid']], snap)))
            saved[res["oid"]] = snap
        oids = list(saved)
        rng.shuffle(oids)
        for oid in oids:
            before_excl = excluded_state()
            if rng.random() < 0.25 and saved[oid]:
                # restore some files only
                paths = rng.sample(sorted(saved[oid]), min(3, len(saved[oid])))
                outside = [p for p in paths if not os.path.realpath(
                    os.path.dirname(os.path.join(TREE, p))).startswith(TREE)]
                r = hctl("rollback", "-C", TREE, oid, *paths, check=not outside)
                if outside:
                    if r.returncode != 4:
                        sys.exit(f"FAIL: {outside} leaves the tree through a symlink, "
                                 f"yet rollback exited {r.returncode}")
                    continue
                now = snapshot()
                for p in paths:
                    if saved[oid].get(p) != now.get(p):
                        sys.exit(f"FAIL: file restore of {p} to {oid[:8]}: want "
                                 f"{str(saved[oid].get(p))[:80]} got {str(now.get(p))[:80]}")
            else:
                hctl("rollback", "-C", TREE, oid)
                msgs = diff_states(saved[oid], snapshot())
                if msgs:
                    sys.exit(f"FAIL: round {rnd}: restore of {oid[:8]} differs:\n" + "\n".join(msgs[:20]))
            if excluded_state() != before_excl:
                sys.exit(f"FAIL: restore of {oid[:8]} touched excluded paths")
            nrestores += 1
    print(f"ok: {nops} operations, {nrestores} restores, {nscans} paths checkpoints "
          "equal to a full scan, 0 differences")


main()
