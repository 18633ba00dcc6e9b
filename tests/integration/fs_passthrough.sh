#!/bin/bash
# Kernel passthrough of read-only opens (as root, on kernels that offer it):
# reading a file opened read-only sends no READ to the daemon, yet every
# reader sees every write at once, whatever mix of handles is open: a
# read-only handle with a read-write one beside it (which then gets direct
# I/O), a read-write handle that maps the file shared and writes through the
# map (counted as a change of the turn when it is released, so the next
# checkpoint holds it), executables run from the mount. With -o nopassthrough
# the same reads reach the daemon. Also: handles that write pass through,
# and cost no getxattr per write().
. "$SRC/tests/integration/ckpt_lib.sh"
t_need_root
ckpt_init
ckpt_config "turn_idle_ms: 0" "max_snapshots: 100000"
head -c 4194304 /dev/urandom >"$TREE/data.bin"
want=$(sha256sum <"$TREE/data.bin")
ckpt_mount
grep -q 'passthrough: read-only opens are served by the kernel' "$HERMES_HOME"/logs/*.log ||
	t_skip "this kernel does not offer FUSE passthrough"

ops() { # NAME: the daemon's count of that operation
	ckpt_status_json | python3 -c 'import json,sys; print(json.load(sys.stdin)["mounts"][0]["ops"][sys.argv[1]])' "$1"
}

before=$(ops read)
[ "$(sha256sum <"$TREE/data.bin")" = "$want" ] || t_fail "a passthrough read returned other bytes"
dd if="$TREE/data.bin" of=/dev/null bs=4k count=100 skip=7 status=none
after=$(ops read)
[ "$after" = "$before" ] || t_check_fail "reads of a read-only open reached the daemon ($before -> $after READs)"

python3 - "$TREE" <<'PY' || t_fail "mixed handles disagree (see above)"
import mmap, os, sys
d = sys.argv[1]
p = os.path.join(d, "mix.txt")
with open(p, "w") as f:
    f.write("hello world\n")
ro = os.open(p, os.O_RDONLY)
assert os.pread(ro, 100, 0) == b"hello world\n"
rw = os.open(p, os.O_RDWR)            # beside a passthrough handle
os.pwrite(rw, b"HELLO", 0)
got = os.pread(ro, 100, 0)
assert got == b"HELLO world\n", ("read-only handle after a write", got)
assert os.pread(rw, 100, 0) == b"HELLO world\n"
ro_map = mmap.mmap(ro, 0, prot=mmap.PROT_READ)
assert ro_map[:5] == b"HELLO", ("read-only map", ro_map[:12])
m = mmap.mmap(rw, 0)                   # shared, writable
m[0:5] = b"howdy"
m.flush()
assert os.pread(ro, 100, 0) == b"howdy world\n", os.pread(ro, 100, 0)
assert ro_map[:5] == b"howdy", ("read-only map after a shared write", ro_map[:12])
m.close(); ro_map.close(); os.close(rw); os.close(ro)
# once no passthrough handle is open, read-write opens use the cache again
rw = os.open(p, os.O_RDWR)
m = mmap.mmap(rw, 0)
m[0:5] = b"third"
m.close(); os.close(rw)
with open(p) as f:
    assert f.read() == "third world\n"
PY

# a write through a shared map beside a passthrough reader, in a later turn
# than the map was made, lands in the checkpoint of the turn after it
ckpt_turn maps
echo 0123456789 >"$TREE/mapped.txt"
ckpt_turn after-create
echo y >"$TREE/other.txt"
python3 - "$TREE" "$HCTL" <<'PY'
import mmap, os, subprocess, sys
p = os.path.join(sys.argv[1], "mapped.txt")
ro = os.open(p, os.O_RDONLY)
rw = os.open(p, os.O_RDWR)
m = mmap.mmap(rw, 0)
os.close(rw)
subprocess.run([sys.argv[2], "turn", "-m", "map-written", "-C", sys.argv[1]], check=True)
with open(os.path.join(sys.argv[1], "other.txt"), "w") as f:
    f.write("z\n")                     # the turn's first change: its checkpoint
m[0:4] = b"MAPS"
m.flush()
m.close(); os.close(ro)
PY
ckpt_turn after-map
echo x >"$TREE/trigger.txt"
t_wait_for 10 sh -c "[ \"\$(git --git-dir='$STORE' show HEAD:mapped.txt 2>/dev/null)\" = MAPS456789 ]" ||
	t_check_fail "the write through the map is not in the next checkpoint: '$(git --git-dir="$STORE" show HEAD:mapped.txt 2>&1)'"

# a shared map writes the file below without the kernel's FUSE inode
# hearing of it: once the map is gone the mount shows the new mtime, as
# the disk does, not the one it cached (for the attribute timeout, a day)
python3 - "$TREE" <<'PY' || t_check_fail "the mtime after writes through a map and munmap is stale"
import mmap, os, sys, time
p = os.path.join(sys.argv[1], "mtime-map.bin")
with open(p, "wb") as f:
    f.write(b"\0" * 4096)
fd = os.open(p, os.O_RDWR)
m = mmap.mmap(fd, 4096)
os.close(fd)
m[0:1] = b"a"
m.flush()
before = os.stat(p).st_mtime_ns
time.sleep(1.1)
m[0:3] = b"xyz"
m.flush()
m.close()
for _ in range(50):  # the release reaches the daemon after munmap returns
    if os.stat(p).st_mtime_ns != before:
        break
    time.sleep(0.1)
after = os.stat(p).st_mtime_ns
print("mtime before %d, after %d" % (before, after))
sys.exit(0 if after != before else 1)
PY

# programs run from the mount (their pages come from the file below)
cp /bin/true "$TREE/mytrue"
"$TREE/mytrue" || t_check_fail "a program on the mount does not run"

# with checkpoints on, handles that write come to the daemon, to wait for
# checkpoints and rollbacks (writing through the kernel is -o live_writes),
# excluded files too (one may be renamed to a tracked name while open)
w0=$(ops write)
echo tracked >"$TREE/tracked.txt"
echo excluded >"$TREE/excluded.log"
w1=$(ops write)
[ $((w1 - w0)) -ge 2 ] || t_check_fail "with checkpoints on, $((w1 - w0)) of 2 writes reached the daemon"

# with checkpoints off, handles that write pass through too: no WRITE
# reaches the daemon, and (the kernel leaving set-id bits to us) no
# security.capability lookup per write() either, only the first of each file
t_umount "$TREE"
ckpt_config "enabled: false"
t_mount "$TREE"
w0=$(ops write) g0=$(ops getxattr)
for i in $(seq 50); do echo "line $i" >"$TREE/w$i.txt"; done
python3 - "$TREE/many.txt" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
for i in range(200):
    os.write(fd, b"%d\n" % i)
os.close(fd)
PY
w1=$(ops write) g1=$(ops getxattr)
[ $((w1 - w0)) = 0 ] || t_check_fail "$((w1 - w0)) write requests reached the daemon for passthrough handles"
[ $((g1 - g0)) -le 60 ] || t_check_fail "$((g1 - g0)) getxattr requests for 51 files, 250 writes"
[ "$(cat "$TREE/w50.txt")" = "line 50" ] || t_check_fail "write-only file reads back wrong"
[ "$(wc -l <"$TREE/many.txt")" = 200 ] || t_check_fail "200 writes through one handle read back wrong"
t_umount "$TREE"
ckpt_config
# the same reads without passthrough reach the daemon
ckpt_mount -- -o nopassthrough
before=$(ops read)
cat "$TREE/data.bin" >/dev/null
after=$(ops read)
[ "$after" -gt "$before" ] || t_check_fail "with -o nopassthrough, reads did not reach the daemon"
[ "$(sha256sum <"$TREE/data.bin")" = "$want" ] || t_fail "a read without passthrough returned other bytes"
t_umount "$TREE"
t_pass "passthrough reads skip the daemon and stay coherent with every kind of handle"
