#!/usr/bin/env python3
"""Power cuts at every point of a checkpoint, simulated (issue 14, item 4).

This kernel has no device-mapper (no dm-flakey, no dm-log-writes), so the
power cut is simulated on the files the store wrote, under the failure
model of ext4 with data=ordered and delayed allocation:

- Three checkpoints are taken and synced (what hermesctl does at exit).
  Three more are taken with HERMES_STORE_NOSYNC=1: the power goes before
  any sync runs. Everything these three wrote is known (the store directory
  before and after), in the order written (mtime).
- A cut point is drawn in that sequence: files written before it are on
  the disk; the one at it is cut at a random byte (truncated, or its tail
  zeros); every later new file lost its data: it is gone, empty, or all
  zeros at its full size (the name reached the disk, the data did not).
  Files replaced by rename (the ref) are old or new whatever the cut,
  since ext4 writes a renamed-over file's data with the rename: the case
  where the ref names a pack that never reached the disk. Files
  overwritten in place are old or new.
- Then, as a user would after the reboot (a boot id of its own: a store
  written in this boot is not checked, its page cache being whole): `hermesctl rollback --json` must list, its
  newest checkpoint must be the newest one whose objects are all there
  (the sixth, or the synced third), a note must say what was lost when
  anything was, `hermesctl rollback 1` must restore the tree to exactly
  that checkpoint, and `git fsck` must pass.

With STORE_POWER_CUT_PATHS=1 every checkpoint but the first is given its
changed paths (--paths-from).

usage: store_power_cut.py HERMESCTL WORK ROUNDS SEED"""
import json
import os
import random
import shutil
import subprocess
import sys

HCTL, WORK, ROUNDS, SEED = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
PATHS = os.environ.get("STORE_POWER_CUT_PATHS") == "1"
rng = random.Random(SEED)
TREE = os.path.join(WORK, "tree")
HOME = os.path.join(WORK, "home")
ENV = dict(os.environ, HERMES_HOME=HOME, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null")


def run(*args, env=ENV, check=True):
    r = subprocess.run(args, capture_output=True, text=True, env=env)
    if check and r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(args)} -> {r.returncode}: {r.stderr.strip()}")
    return r


def tree_state():
    out = {}
    for root, dirs, files in os.walk(TREE):
        for n in files:
            p = os.path.join(root, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, TREE)] = f.read()
    return out


def store_files(store):
    out = {}
    for root, dirs, files in os.walk(store):
        for n in files:
            p = os.path.join(root, n)
            st = os.lstat(p)
            out[os.path.relpath(p, store)] = (st.st_mtime_ns, st.st_ino, st.st_size)
    return out


def checkpoint(i, env=ENV):
    for k in range(3):
        with open(os.path.join(TREE, f"f{i}_{k}.txt"), "w") as f:
            f.write(f"checkpoint {i} file {k}\n" * rng.randint(1, 200))
    with open(os.path.join(TREE, "common.txt"), "a") as f:
        f.write(f"line {i}\n")
    args = [HCTL, "checkpoint", "-C", TREE, "-m", f"c{i}", "--json"]
    if PATHS and i > 0:
        # the changed paths, as the daemon gives them (trees then take the
        # path of store_paths.c, and with HERMES_STORE_BIG_MIN, of big ones)
        lst = os.path.join(WORK, "paths.txt")
        with open(lst, "w") as f:
            f.write("".join(f"f{i}_{k}.txt\n" for k in range(3)) + "common.txt\n")
        args += ["--paths-from", lst]
    res = json.loads(run(*args, env=env).stdout)
    return res["oid"]


def main():
    os.makedirs(TREE)
    os.makedirs(HOME)
    with open(os.path.join(HOME, "config.yaml"), "w") as f:
        f.write("checkpoints:\n  max_snapshots: 1000\n")
    states, oids = {}, []
    for i in range(1, 4):
        oids.append(checkpoint(i))
        states[oids[-1]] = tree_state()
    top = os.path.join(HOME, "checkpoints")
    store = [os.path.join(top, d) for d in os.listdir(top)
             if os.path.exists(os.path.join(top, d, "hermes-tree"))][0]
    before = store_files(store)
    saved_before = os.path.join(WORK, "store.before")
    shutil.copytree(store, saved_before, symlinks=True)
    nosync = dict(ENV, HERMES_STORE_NOSYNC="1")
    for i in range(4, 7):
        oids.append(checkpoint(i, env=nosync))
        states[oids[-1]] = tree_state()
    after = store_files(store)
    synced, newest = oids[2], oids[5]
    # what the three unsynced checkpoints wrote, in the order written
    new = sorted((v[0], k) for k, v in after.items() if k not in before)
    changed = sorted(k for k, v in after.items() if k in before and v != before[k])
    renamed = [k for k in changed if after[k][1] != before[k][1]]
    in_place = [k for k in changed if after[k][1] == before[k][1]]
    packs = [k for _, k in new if k.startswith("objects/pack/pack-")]
    if not packs or "refs/heads/main" not in renamed:
        sys.exit(f"FAIL: the setup is not what the test models: new {new}, "
                 f"renamed {renamed}, in place {in_place}")
    pristine_store = os.path.join(WORK, "store.after")
    shutil.copytree(store, pristine_store, symlinks=True)
    pristine_tree = os.path.join(WORK, "tree.after")
    shutil.copytree(TREE, pristine_tree, symlinks=True)
    # no power cut (same boot), nothing synced yet, an index not yet
    # published beside its pack: an open must change nothing
    # (the ref still names the synced head then)
    idx = [k for k in packs if k.endswith(".idx")][-1]
    os.rename(os.path.join(store, idx), os.path.join(WORK, "held.idx"))
    shutil.copyfile(os.path.join(store, "refs/heads/main"), os.path.join(WORK, "held.ref"))
    shutil.copyfile(os.path.join(saved_before, "refs/heads/main"),
                    os.path.join(store, "refs/heads/main"))
    listed = json.loads(run(HCTL, "rollback", "-C", TREE, "--json").stdout)
    if listed[0]["oid"] != synced:
        sys.exit(f"FAIL: mid-publish, the list shows {listed[0]['oid'][:8]}, want {synced[:8]}")
    os.rename(os.path.join(WORK, "held.idx"), os.path.join(store, idx))
    shutil.copyfile(os.path.join(WORK, "held.ref"), os.path.join(store, "refs/heads/main"))
    if os.path.exists(os.path.join(store, "objects/pack/lost")):
        sys.exit("FAIL: an open in the same boot moved packs aside")
    listed = json.loads(run(HCTL, "rollback", "-C", TREE, "--json").stdout)
    if listed[0]["oid"] != newest:
        sys.exit(f"FAIL: an open in the same boot rewound the store to {listed[0]['oid'][:8]}")
    order = [k for _, k in new]
    counts = {"kept the newest": 0, "back to the synced": 0, "notes": 0}
    for rnd in range(ROUNDS):
        shutil.rmtree(store)
        shutil.copytree(pristine_store, store, symlinks=True)
        shutil.rmtree(TREE)
        shutil.copytree(pristine_tree, TREE, symlinks=True)
        cut = rng.randrange(len(order) + 1)
        damaged = set()
        for j, rel in enumerate(order):
            p = os.path.join(store, rel)
            size = os.path.getsize(p)
            if j < cut:
                continue
            if j == cut:
                at = rng.randrange(size + 1)
                if rng.random() < 0.5:
                    os.truncate(p, at)
                else:
                    with open(p, "r+b") as f:
                        f.seek(at)
                        f.write(b"\0" * (size - at))
                if at < size:
                    damaged.add(rel)
                continue
            how = rng.randrange(3)
            if how == 0:
                os.unlink(p)
            elif how == 1:
                os.truncate(p, 0)
            else:
                with open(p, "r+b") as f:
                    f.write(b"\0" * size)
            if size:
                damaged.add(rel)
        for rel in renamed + in_place:
            if rng.random() < 0.5:  # old content
                shutil.copyfile(os.path.join(saved_before, rel), os.path.join(store, rel))
        with open(os.path.join(store, "refs/heads/main")) as f:
            ref_new = f.read().strip() == newest
        # a pack is whole when it and its index are
        whole = not any(r.startswith("objects/pack/") for r in damaged)
        want = newest if ref_new and whole else synced
        # the machine comes back up: another boot
        boot = dict(ENV, HERMES_STORE_BOOT_ID=f"power-cut-{rnd}")
        r = run(HCTL, "rollback", "-C", TREE, "--json", env=boot, check=False)
        if r.returncode != 0:
            sys.exit(f"FAIL: round {rnd} (cut {cut} of {order}, damaged {sorted(damaged)}): "
                     f"the list failed: {r.stderr.strip()}")
        listed = json.loads(r.stdout)
        if not listed or listed[0]["oid"] != want:
            sys.exit(f"FAIL: round {rnd} (cut {cut}, damaged {sorted(damaged)}, ref "
                     f"{'new' if ref_new else 'old'}): newest listed "
                     f"{listed[0]['oid'][:8] if listed else None}, want {want[:8]}")
        if len(listed) < 3:
            sys.exit(f"FAIL: round {rnd}: the synced checkpoints are gone: {len(listed)} listed")
        text = run(HCTL, "rollback", "-C", TREE, env=boot).stdout
        noted = "a crash (a power cut?) lost" in text
        if ref_new and want != newest and not noted:
            sys.exit(f"FAIL: round {rnd}: checkpoints were lost and nothing says so:\n{text}")
        counts["notes"] += noted
        run(HCTL, "rollback", "-C", TREE, "1", env=boot)
        got = tree_state()
        if got != states[want]:
            diff = sorted(k for k in set(got) | set(states[want]) if got.get(k) != states[want].get(k))
            sys.exit(f"FAIL: round {rnd}: the restore of {want[:8]} differs in {diff[:10]}")
        fsck = run("git", "--git-dir", store, "fsck", "--no-progress", check=False)
        if fsck.returncode != 0:
            sys.exit(f"FAIL: round {rnd} (cut {cut}, damaged {sorted(damaged)}): git fsck: "
                     f"{fsck.stderr.strip()[:600]}")
        counts["kept the newest" if want == newest else "back to the synced"] += 1
    print(f"ok: {ROUNDS} power cuts over {len(order)} files written "
          f"({', '.join(f'{v} {k}' for k, v in counts.items())}), 0 inconsistent stores")


main()
