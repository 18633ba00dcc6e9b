#!/bin/bash
# kill -9 of hermesfs at random moments, in a loop: during heavy writes
# (with turns flipping), during the baseline of a few thousand files,
# during a checkpoint of many paths, during a restore. After each kill:
# hermesctl status exits 5 and says dead; the store passes git fsck and its
# log reads; every write acknowledged before the kill is on disk (a restore
# leaves each file whole, old or new); hermesctl mount recovers the tree and
# the next checkpoint works (no stale lock blocks the store).
# CKPT_KILL9_ITERATIONS (default 8; none starts after CKPT_KILL9_BUDGET_S=30 s)
# and CKPT_KILL9_FILES (3000) scale it; an ASan daemon gets 1,500 files and 20 s.
# shellcheck disable=SC2317 # the scenario_* functions are called by name
. "$SRC/tests/integration/ckpt_lib.sh"
ckpt_init
ckpt_config
# a sanitizer build runs every step several times slower: smaller tree, shorter budget
if ldd "$HERMESFS" 2>/dev/null | grep -q libasan; then
	small_files=1500 small_budget=20
else
	small_files=3000 small_budget=30
fi
ITER=${CKPT_KILL9_ITERATIONS:-8}
NFILES=${CKPT_KILL9_FILES:-$small_files}
BUDGET_S=${CKPT_KILL9_BUDGET_S:-$small_budget} # no new iteration after this many s of the test

# the tree: NFILES small files in directories of 100
python3 - "$TREE" "$NFILES" <<'PY'
import os, sys
tree, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(tree, "d%03d" % (i // 100))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%05d.txt" % i), "w") as f:
        f.write("original %d\n" % i)
PY

# a writer that journals (outside the tree) every write once it is
# acknowledged: close() returned without error
cat >"$T/writer.py" <<'PY'
import os, sys
tree, journal, tag = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(os.path.join(tree, "w"), exist_ok=True)
j = open(journal, "a")
k = 0
try:
    while True:
        name = "w/%s-%05d" % (tag, k % 400)  # names come round again: overwrites
        text = "%s %d\n" % (tag, k)
        j.write("begin\t%s\t%s" % (name, text))  # in flight: may be cut by the kill
        j.flush()
        if k % 3 == 0:  # replace through a temp file, as editors do
            tmp = os.path.join(tree, name + ".tmp")
            with open(tmp, "w") as f:
                f.write(text)
            os.rename(tmp, os.path.join(tree, name))
        else:
            with open(os.path.join(tree, name), "w") as f:
                f.write(text)
        j.write("done\t%s\t%s" % (name, text))
        j.flush()
        k += 1
except OSError:
    pass  # the daemon is gone: ENOTCONN
PY

DAEMON_PID=""
STATUS_ZOMBIE_REPORTED=0

# hermesctl mount (the user's way); remember the daemon for the trap
k9_mount() {
	local out
	out=$("$HCTL" mount "$TREE" 2>&1) || t_fail "hermesctl mount failed: $out"
	DAEMON_PID=$(sed -n 's/.*"pid":[[:space:]]*\([0-9]*\).*/\1/p' "${SOCK%.sock}.json")
	[ -n "$DAEMON_PID" ] || t_fail "no daemon pid in the registry after mount"
	T_MOUNTS+=("$TREE")
	T_PIDS+=("$DAEMON_PID")
}

k9_dead_or_zombie() {
	local st
	st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 0
	[ "$st" = Z ] || [ "$st" = X ]
}

# kill -9 the daemon; a user then asks hermesctl status
k9_kill() {
	local pid=$DAEMON_PID out rc=0
	kill -KILL "$pid" || t_fail "cannot kill daemon $pid"
	t_wait_for 5 k9_dead_or_zombie "$pid" || t_fail "daemon $pid survives kill -9"
	out=$("$HCTL" status "$TREE" 2>&1) || rc=$?
	if [ "$rc" != 5 ] && [ "$STATUS_ZOMBIE_REPORTED" = 0 ]; then
		STATUS_ZOMBIE_REPORTED=1
		t_check_fail "status right after kill -9 exits $rc: $out (ckpttest-2)"
	fi
	# the same once the zombie is reaped (PID 1 is not our child to wait for)
	t_wait_for 10 t_pid_gone "$pid" || t_log "daemon $pid not reaped after 10 s"
	rc=0
	out=$("$HCTL" status "$TREE" 2>&1) || rc=$?
	[ "$rc" = 5 ] || t_check_fail "status of a dead mount exits $rc, want 5: $out"
	case $out in
	*dead*) ;;
	*) t_check_fail "status does not say dead: $out" ;;
	esac
}

# no thread of the killed daemon may stay in D state (waiting on its own
# mount) once its watchdog had a moment
k9_no_d_state() {
	local t st
	sleep 1
	for t in /proc/"$DAEMON_PID"/task/*/stat; do
		st=$(awk '{ print $3 }' "$t" 2>/dev/null) || continue
		[ "$st" != D ] || t_check_fail "$1: a thread of the killed daemon hangs in D state"
	done
}

# say whether the kill came before or after the daemon logged PATTERN
# (in the log lines written since k9_mark)
K9_LOG=$HERMES_HOME/logs/${STORE##*/}.log
k9_mark() { K9_MARK=$(wc -l 2>/dev/null <"$K9_LOG" || echo 0); }
k9_where() {
	if tail -n +$((K9_MARK + 1)) "$K9_LOG" 2>/dev/null | grep -q "$2"; then
		t_log "$1: killed after it completed"
	else
		t_log "$1: killed before it completed"
	fi
}

# the store as git sees it: fsck clean, log readable when there is a HEAD
k9_check_store() {
	local what=$1
	[ -d "$STORE" ] || return 0
	if ! git --git-dir="$STORE" fsck --no-progress --no-dangling >"$T/fsck.out" 2>&1; then
		t_check_fail "$what: git fsck: $(head -n 5 "$T/fsck.out")"
	fi
	if git --git-dir="$STORE" rev-parse -q --verify HEAD >/dev/null; then
		git --git-dir="$STORE" log --format='%H %s' >/dev/null 2>"$T/log.err" ||
			t_check_fail "$what: git log fails: $(cat "$T/log.err")"
	fi
	local locks
	# gc.lock is held by flock, its file stays by design
	locks=$(find "$STORE" -name '*.lock' ! -name gc.lock 2>/dev/null | tr '\n' ' ')
	[ -z "$locks" ] || t_log "$what: lock files left: $locks"
}

# recover with hermesctl mount; the next checkpoint must work
k9_recover() {
	local what=$1 ans
	k9_mount
	t_wait_for 60 ckpt_baseline_done || t_fail "$what: baseline after recovery did not finish"
	"$HCTL" status "$TREE" >/dev/null || t_check_fail "$what: status after recovery exits $?"
	echo "$what" >"$TREE/probe.txt"
	ans=$(ckpt_ctl "{\"op\":\"checkpoint\",\"reason\":\"probe $what\"}") ||
		t_check_fail "$what: checkpoint after recovery failed: $ans"
	[ "$(git --git-dir="$STORE" log -1 --format=%s)" = "probe $what" ] ||
		t_check_fail "$what: newest checkpoint after recovery is '$(git --git-dir="$STORE" log -1 --format=%s)'"
	[ "$(ckpt_show HEAD probe.txt 2>&1)" = "$what" ] ||
		t_check_fail "$what: the probe checkpoint lacks probe.txt"
	[ "$(ckpt_status 'c["checkpoint_failures"]')" = 0 ] ||
		t_check_fail "$what: $(ckpt_status 'c.get("last_error")')"
}

# every journaled write is in the tree (the last one per name wins), and in
# the checkpoint taken after recovery (the killed daemon's dirty set is
# gone: the re-validation at mount must find each of them)
k9_check_journal() {
	local what=$1
	local lib=$SRC/tests/integration
	PYTHONDONTWRITEBYTECODE=1 python3 - "$TREE" "$T/journal" "$STORE" "$lib" <<'PY' || t_check_fail "$what: acknowledged writes lost (above)"
import sys
sys.path.insert(0, sys.argv[4])
import git_store
tree, last, inflight = sys.argv[1], {}, None
for line in open(sys.argv[2]):
    f = line.rstrip("\n").split("\t")
    if f[0] == "begin":
        inflight = (f[1], f[2] + "\n")
    else:
        last[f[1]] = f[2] + "\n"
        inflight = None
store = git_store.Store(sys.argv[3])
bad = 0
for name, text in last.items():
    try:
        got = open(tree + "/" + name).read()
    except OSError as e:
        got = repr(e)
    # the write in flight at the kill (O_TRUNC, then data) may have begun
    ok = got == text or (inflight and name == inflight[0] and got in ("", inflight[1]))
    if not ok:
        print("lost: %s holds %r, acknowledged %r" % (name, got, text), file=sys.stderr)
        bad += 1
        continue
    held = store.read("HEAD:" + name)
    held = held.decode() if held is not None else None
    if held != got:
        print("not checkpointed: %s holds %r, the checkpoint after recovery %r"
              % (name, got, held), file=sys.stderr)
        bad += 1
sys.exit(1 if bad else 0)
PY
}

# every checkpoint that holds this iteration's files shows a state the tree
# really had: with K the newest write it holds, each name holds its last
# write up to K, and only the write after K (in flight, O_TRUNC done) may
# show an empty file
k9_check_states() {
	local what=$1 tag=$2
	local why="$what: a checkpoint shows a state the tree never had (above)"
	PYTHONDONTWRITEBYTECODE=1 python3 - "$STORE" "$T/journal" "$tag" "$SRC/tests/integration" \
		>"$T/states.out" <<'PY' || t_check_fail "$why"
import subprocess, sys
sys.path.insert(0, sys.argv[4])
import git_store
store, journal, tag = sys.argv[1], sys.argv[2], sys.argv[3]
writes = []  # (name, text) in the order the one writer began them
for line in open(journal):
    f = line.rstrip("\n").split("\t")
    if f[0] == "begin" and len(f) == 3:
        writes.append((f[1], f[2] + "\n"))
st = git_store.Store(store)
git = st.git
commits = st.commits()
def blob(oid):
    return st.read(oid).decode()
bad, checked = [], 0
for commit in commits:
    out = subprocess.run(git + ["ls-tree", "-z", commit, "w/"], capture_output=True).stdout
    held = {}
    for rec in out.split(b"\0"):
        if rec:
            meta, path = rec.decode().split("\t", 1)
            name = path
            if name.startswith("w/%s-" % tag) and not name.endswith(".tmp"):
                held[name] = blob(meta.split()[2])
    if not held:
        continue
    checked += 1
    ks = [int(t.split()[1]) for t in held.values() if t]
    k = max(ks) if ks else -1
    want = {}
    for name, text in writes[:k + 1]:
        want[name] = text
    inflight = writes[k + 1][0] if k + 1 < len(writes) else None
    for name in set(want) | set(held):
        got, exp = held.get(name), want.get(name)
        if got == exp or (name == inflight and got == ""):
            continue
        bad.append("checkpoint %s: %s holds %r, the tree after write %d held %r"
                   % (commit[:12], name, got, k, exp))
for b in bad[:20]:
    print("violation:", b, file=sys.stderr)
print("%d checkpoints checked" % checked)
sys.exit(1 if bad else 0)
PY
	t_log "$what: $(cat "$T/states.out")"
}

rand_sleep() { sleep "$(awk -v r="$RANDOM" -v max="$1" 'BEGIN { printf "%.3f", (r % (max + 1)) / 1000 }')"; }

scenario_writes() {
	local it=$1 w
	: >"$T/journal"
	python3 "$T/writer.py" "$TREE" "$T/journal" "it$it" 2>"$T/writer.err" &
	w=$!
	t_on_cleanup "kill $w"
	(for _ in $(seq 200); do "$HCTL" turn -m flip -C "$TREE" 2>/dev/null || exit 0; sleep 0.01; done) &
	local flip=$!
	t_wait_for 20 grep -q '^done' "$T/journal" || t_fail "writes $it: the writer never wrote"
	rand_sleep 400
	k9_kill
	timeout 10 tail --pid="$w" -f /dev/null || t_check_fail "writes: the writer hangs on a dead mount"
	wait "$w" 2>/dev/null
	kill "$flip" 2>/dev/null
	wait "$flip" 2>/dev/null
	k9_check_store "writes $it"
	k9_recover "writes-$it"
	t_log "writes $it: $(grep -c '^done' "$T/journal") acknowledged writes before the kill"
	k9_check_journal "writes $it"
	k9_check_states "writes $it" "it$it"
}

scenario_baseline() {
	local it=$1
	"$HCTL" umount "$TREE" >/dev/null || t_fail "umount before the baseline failed"
	if [ $((it % 2)) = 0 ]; then
		rm -rf "$STORE" # a first mount: the full baseline
	else
		# changes while unmounted: the re-validation reads them
		python3 - "$TREE" "$it" <<'PY'
import os, sys
tree = sys.argv[1]
for d in sorted(os.listdir(tree))[:8]:
    p = os.path.join(tree, d)
    if d.startswith("d") and os.path.isdir(p):
        for f in os.listdir(p):
            open(os.path.join(p, f), "a").write("offline %s\n" % sys.argv[2])
PY
	fi
	k9_mark
	k9_mount
	rand_sleep 600
	k9_kill
	k9_where "baseline $it" "checkpoint [0-9a-f]* \"\(baseline\|changes made while unmounted\)\""
	k9_check_store "baseline $it"
	k9_recover "baseline-$it"
}

scenario_checkpoint() {
	local it=$1 t
	for f in "$TREE"/d00[0-9]/*.txt; do echo "turn $it" >>"$f"; done
	ckpt_turn "big $it"
	k9_mark
	touch "$TREE/trigger-$it" 2>/dev/null & # blocks until the turn's checkpoint is in
	t=$!
	rand_sleep 150
	k9_kill
	wait "$t" 2>/dev/null
	k9_where "checkpoint $it" "checkpoint [0-9a-f]* \"big $it\""
	k9_check_store "checkpoint $it"
	k9_recover "checkpoint-$it"
	grep -q "turn $it" "$TREE/d000/f00000.txt" || t_check_fail "checkpoint $it: the turn's writes are gone"
}

scenario_restore() {
	local it=$1 r good
	ckpt_ctl '{"op":"checkpoint","reason":"restore point"}' >/dev/null || t_fail "no restore point"
	good=$(git --git-dir="$STORE" rev-parse HEAD)
	python3 - "$TREE" >"$T/before.json" <<'PY2'
import glob, json, os, sys
os.chdir(sys.argv[1])
print(json.dumps({n: open(n).read() for n in glob.glob("d00[0-9]/*.txt")}))
PY2
	for f in "$TREE"/d00[0-9]/*.txt; do echo "overwritten $it" >"$f"; done
	k9_mark
	ckpt_ctl "{\"op\":\"restore\",\"spec\":\"$good\"}" >/dev/null 2>&1 &
	r=$!
	RESTORES=$((RESTORES + 1))
	if [ $((RESTORES % 2)) = 0 ]; then
		# every other time, once the writes through the mount have begun
		# (the first file is back), so requests of its own are in flight
		t_wait_for 20 sh -c "[ \"\$(cat '$TREE/d000/f00000.txt')\" != 'overwritten $it' ]" ||
			t_log "restore $it: the first file did not come back within 20 s"
	else
		rand_sleep 300
	fi
	k9_kill
	# the restore writes through the mount: a daemon killed while one of
	# its own requests was in flight must not hang the tree (nor the
	# client) until someone runs hermesctl; its watchdog aborts the mount
	local rc=0
	timeout 10 stat -f "$TREE" >/dev/null 2>&1 || rc=$?
	[ "$rc" != 124 ] || t_check_fail "restore $it: the tree hangs after kill -9 (statfs timed out)"
	k9_no_d_state "restore $it"
	wait "$r" 2>/dev/null
	k9_where "restore $it" "restored the tree to ${good:0:12}"
	k9_check_store "restore $it"
	k9_recover "restore-$it"
	# each file whole: as overwritten or as restored
	python3 - "$T/before.json" "$TREE" "$it" <<'PY2' || t_check_fail "restore $it: a file is neither version (above)"
import json, sys
before, tree, it = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
bad = 0
for n, old in before.items():
    got = open(tree + "/" + n).read()
    if got != old and got != "overwritten %s\n" % it:
        print("torn: %s holds %r" % (n, got[:60]), file=sys.stderr)
        bad += 1
sys.exit(1 if bad else 0)
PY2
	# the user retries the restore: now it completes
	ckpt_ctl "{\"op\":\"restore\",\"spec\":\"$good\"}" >/dev/null || t_check_fail "restore $it: retry failed"
	[ "$(cat "$TREE/d000/f00000.txt")" != "overwritten $it" ] || t_check_fail "restore $it: retry did not restore"
}

RESTORES=0
k9_mount
t_wait_for 60 ckpt_baseline_done || t_fail "the first baseline did not finish"
scenarios=(writes baseline checkpoint restore)
for ((it = 0; it < ITER; it++)); do
	s=${scenarios[$((it % 4))]}
	if [ "$SECONDS" -ge "$BUDGET_S" ] && [ "$it" -ge 4 ]; then
		t_log "time budget spent after $it iterations"
		break
	fi
	t_log "iteration $it: kill -9 during $s"
	"scenario_$s" "$it"
done
"$HCTL" umount "$TREE" >/dev/null || t_check_fail "final unmount failed"
k9_check_store "final"
t_log "$(ckpt_count) checkpoints after $it kills"
t_pass
