#!/bin/bash
# Readers and writers on the same files while turns flip and rollbacks run
# (issue 20, item 8), for TORTURE_SECONDS (default 60; an hour by hand:
# TORTURE_SECONDS=3600). Writers: `>>` appends, python open('a') appends,
# a writer holding its file open, `>` overwrites, O_TRUNC rewrites, sed -i,
# and an appender to an excluded file. Readers: tail -f, cat loops, an mmap
# reader. Meanwhile: `hermesctl turn` twice a second, a one-file rollback
# every 2 s and a whole-tree rollback every 3 s. Afterwards:
# - no operation failed (no EIO, no EMFILE, no rollback error);
# - no write was lost: every numbered line a writer wrote is in the file
#   now or in some checkpoint (a rollback removes lines only after its
#   safety checkpoint holds them);
# - the excluded file, which no rollback touches, holds every line in order,
#   as on a plain directory;
# - overwritten files hold one whole version; the store passes git fsck.
. "$SRC/tests/integration/ckpt_lib.sh"
ckpt_init
ckpt_config "turn_idle_ms: 0" "max_snapshots: 100000"
secs=${TORTURE_SECONDS:-60}
for f in ap1 ap2 pyap held; do echo "start" >"$TREE/$f.txt"; done
echo "v 0" >"$TREE/ow.txt"
echo "t 0" >"$TREE/trunc.txt"
echo "count 0" >"$TREE/sed.txt"
: >"$TREE/mm.log"
python3 -c 'print("\n".join("keep %d" % i for i in range(20000)))' >"$TREE/keep.txt"
ckpt_mount
mkdir -p "$T/w"
pids=()

writer_append() { # NAME: `>>` one numbered line per open
	local i=0
	while [ ! -e "$T/stop" ]; do
		i=$((i + 1))
		echo "$1 $i" >>"$TREE/$1.txt" 2>>"$T/w/err.$1" || echo "append $i failed" >>"$T/w/err.$1"
		echo "$i" >"$T/w/count.$1"
	done
}
writer_append ap1 &
pids+=($!)
writer_append ap2 &
pids+=($!)
python3 - "$TREE" "$T" <<'PY' &
import os, sys, time
tree, t = sys.argv[1], sys.argv[2]
i = 0
while not os.path.exists(t + "/stop"):
    i += 1
    try:
        with open(tree + "/pyap.txt", "a") as f:
            f.write("pyap %d\n" % i)
    except OSError as e:
        open(t + "/w/err.pyap", "a").write("%d: %s\n" % (i, e))
    open(t + "/w/count.pyap", "w").write("%d\n" % i)
    # the excluded file, appended to and never rolled back
    try:
        with open(tree + "/mm.log", "a") as f:
            f.write("mm %d\n" % i)
    except OSError as e:
        open(t + "/w/err.mm", "a").write("%d: %s\n" % (i, e))
    open(t + "/w/count.mm", "w").write("%d\n" % i)
PY
pids+=($!)
python3 - "$TREE" "$T" <<'PY' &
import os, sys, time
tree, t = sys.argv[1], sys.argv[2]
fd = os.open(tree + "/held.txt", os.O_WRONLY | os.O_APPEND)
i = 0
while not os.path.exists(t + "/stop"):
    i += 1
    try:
        os.write(fd, b"held %d\n" % i)
    except OSError as e:
        open(t + "/w/err.held", "a").write("%d: %s\n" % (i, e))
    open(t + "/w/count.held", "w").write("%d\n" % i)
    time.sleep(0.001)
os.close(fd)
PY
pids+=($!)
(
	i=0
	while [ ! -e "$T/stop" ]; do
		i=$((i + 1))
		echo "v $i" >"$TREE/ow.txt" 2>>"$T/w/err.ow" || echo "overwrite $i failed" >>"$T/w/err.ow"
		python3 -c "import os,sys; fd=os.open(sys.argv[1], os.O_WRONLY|os.O_TRUNC); os.write(fd, b't %d\n' % int(sys.argv[2])); os.close(fd)" \
			"$TREE/trunc.txt" "$i" 2>>"$T/w/err.trunc" || echo "O_TRUNC $i failed" >>"$T/w/err.trunc"
		sed -i "s/^count .*/count $i/" "$TREE/sed.txt" 2>>"$T/w/err.sed" || echo "sed $i failed" >>"$T/w/err.sed"
	done
) &
pids+=($!)
# readers
# (a rollback may cut a file: tail says so, which is no error)
for f in ap1 held; do
	tail -n +1 -f "$TREE/$f.txt" >/dev/null 2> >(grep -v "file truncated$" >"$T/w/err.tail.$f") &
	pids+=($!)
done
(
	while [ ! -e "$T/stop" ]; do
		cat "$TREE"/*.txt "$TREE/mm.log" >/dev/null 2>>"$T/w/err.cat" || echo "cat failed" >>"$T/w/err.cat"
	done
) &
pids+=($!)
python3 - "$TREE/mm.log" "$T" <<'PY' &
import mmap, os, sys
p, t = sys.argv[1], sys.argv[2]
n = 0
while not os.path.exists(t + "/stop"):
    try:
        fd = os.open(p, os.O_RDONLY)
        size = os.fstat(fd).st_size
        if size:
            try:
                m = mmap.mmap(fd, size, prot=mmap.PROT_READ)
            except ValueError:
                # mmap's own fstat saw a smaller size than ours a moment
                # before, on a file only ever appended to
                open(t + "/w/err.size_back", "a").write("size went back from %d\n" % size)
                os.close(fd)
                continue
            data = m[:]
            m.close()
            if data and not data.startswith(b"mm 1\n"):
                open(t + "/w/err.mmap", "a").write("map starts %r\n" % data[:20])
        os.close(fd)
        n += 1
    except OSError as e:
        open(t + "/w/err.mmap", "a").write("%s\n" % e)
PY
pids+=($!)
for p in "${pids[@]}"; do t_on_cleanup "kill $p"; done

# the controller: turns, one-file and whole-tree rollbacks
start=$(date +%s)
n=0 whole=0 one=0
while [ $(($(date +%s) - start)) -lt "$secs" ]; do
	n=$((n + 1))
	"$HCTL" turn -m "turn $n" -C "$TREE" >/dev/null 2>>"$T/w/err.turn" ||
		echo "turn $n failed" >>"$T/w/err.turn"
	sleep 0.5
	if [ $((n % 4)) = 0 ] && [ "$(ckpt_count)" -gt 3 ]; then
		"$HCTL" rollback -C "$TREE" 3 ow.txt >/dev/null 2>>"$T/w/err.rollback1" ||
			echo "one-file rollback $n failed" >>"$T/w/err.rollback1"
		one=$((one + 1))
	fi
	if [ $((n % 6)) = 0 ] && [ "$(ckpt_count)" -gt 5 ]; then
		"$HCTL" rollback -C "$TREE" $((2 + RANDOM % 4)) >/dev/null 2>>"$T/w/err.rollback" ||
			echo "whole-tree rollback $n failed" >>"$T/w/err.rollback"
		whole=$((whole + 1))
	fi
done
: >"$T/stop"
sleep 1
kill "${pids[@]}" 2>/dev/null
wait "${pids[@]}" 2>/dev/null
"$HCTL" checkpoint -m final -C "$TREE" >/dev/null || t_check_fail "the final checkpoint failed"
t_log "$secs s: $n turns, $one one-file and $whole whole-tree rollbacks, $(ckpt_count) checkpoints"
[ "$whole" -gt 0 ] || t_check_fail "no whole-tree rollback ran"

# sed -i writes a temporary file and renames it over sed.txt: a whole-tree
# rollback in between removes the temporary (it is in no checkpoint but the
# safety one), as it removes any file made since, and sed says so. That is
# the rollback doing its job, not an error of the filesystem.
if [ -s "$T/w/err.sed" ]; then
	grep -v -e "^sed: cannot rename $TREE/sed[^ ]*: No such file or directory$" -e '^sed [0-9]* failed$' \
		"$T/w/err.sed" >"$T/w/err.sed.other"
	t_log "sed -i lost its temporary file to a rollback $(grep -c 'cannot rename' "$T/w/err.sed") times"
	mv "$T/w/err.sed.other" "$T/w/err.sed"
fi
for f in "$T"/w/err.*; do
	[ -s "$f" ] && t_check_fail "${f##*/err.}: $(sort "$f" | uniq -c | sort -rn | head -3 | tr '\n' '|')"
done
# every numbered line: in the file now or in some checkpoint
python3 - "$STORE" "$TREE" "$T/w" <<'PY' || t_check_fail "writes were lost (above)"
import subprocess, sys
store, tree, w = sys.argv[1:4]
git = ["git", "--git-dir=" + store]
commits = subprocess.run(git + ["rev-list", "--all"], capture_output=True, text=True,
                         check=True).stdout.split()

def blobs(name):
    """The distinct contents the file had in any checkpoint, by id."""
    specs = "".join("%s:%s.txt\n" % (c, name) for c in commits)
    out = subprocess.run(git + ["cat-file", "--batch-check=%(objectname)"], input=specs,
                         capture_output=True, text=True).stdout.split()
    return sorted(set(x for x in out if len(x) == 40))

def each_blob(ids):
    """Stream the blobs one at a time: an hour's run makes gigabytes."""
    p = subprocess.Popen(git + ["cat-file", "--batch"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE)
    for oid in ids:
        p.stdin.write(b"%s\n" % oid.encode())
        p.stdin.flush()
        size = int(p.stdout.readline().split()[2])
        data = p.stdout.read(size)
        p.stdout.read(1)
        yield data.decode()
    p.stdin.close()
    p.wait()

bad = 0
for name in ("ap1", "ap2", "pyap", "held"):
    n = int(open("%s/count.%s" % (w, name)).read())
    seen = bytearray(n + 2)
    def take(text):
        for line in text.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == name and parts[1].isdigit() and int(parts[1]) <= n + 1:
                seen[int(parts[1])] = 1
    take(open("%s/%s.txt" % (tree, name)).read())
    for text in each_blob(blobs(name)):
        take(text)
    missing = [i for i in range(1, n + 1) if not seen[i]]
    if missing:
        bad += 1
        print("# %s: %d of %d lines in no checkpoint and not in the file, e.g. %s"
              % (name, len(missing), n, missing[:10]), file=sys.stderr)
    else:
        print("# %s: all %d lines kept" % (name, n), file=sys.stderr)
n = int(open(w + "/count.mm").read())
lines = open(tree + "/mm.log").read().splitlines()
if lines != ["mm %d" % i for i in range(1, n + 1)]:
    bad += 1
    print("# mm.log (excluded) is not lines 1..%d in order (%d lines)" % (n, len(lines)), file=sys.stderr)
sys.exit(1 if bad else 0)
PY
# Empty is a version too: the moment between an overwrite's O_TRUNC and
# its write, which a checkpoint (and so a rollback) or the writer's end
# may catch, as on a plain directory. Torn or mixed content is not.
whole() { [ ! -s "$1" ] || { [ "$(wc -l <"$1")" = 1 ] && grep -qE "^$2 [0-9]+\$" "$1"; }; }
whole "$TREE/ow.txt" v || t_check_fail "ow.txt holds no whole version: $(head -c 80 "$TREE/ow.txt")"
whole "$TREE/trunc.txt" t || t_check_fail "trunc.txt holds no whole version: $(head -c 80 "$TREE/trunc.txt")"
grep -qE '^count [0-9]+$' "$TREE/sed.txt" || t_check_fail "sed.txt holds no whole version"
git --git-dir="$STORE" fsck --no-progress >"$T/fsck.out" 2>&1 || t_check_fail "git fsck: $(head -3 "$T/fsck.out")"
# packs that collections deleted must not stay open in the daemon: their
# disk space would stay taken, against the disk cap
held=$(grep -c 'objects/pack/.*(deleted)$' "/proc/$T_DAEMON_PID/maps")
t_log "deleted packs the daemon still maps: $held"
[ "$held" -le 140 ] || t_check_fail "the daemon keeps $held deleted pack and index files mapped"
t_pass
