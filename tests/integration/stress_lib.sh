# shellcheck shell=bash
# The body of the stress_*.sh scripts: four processes change one tree at
# random through the mount (stress_ops) while turns flip every few tens of
# ms; no unexplained error, no torn file, the daemon stays up, the mount's
# view equals the disk after, every checkpoint holds only whole files (each
# file carries a hash of its body), and the checkpoint taken at unmount
# equals the disk: no change the stress made is missing from it.

# stress_run [DAEMON OPTION...]
stress_run() {
	local stress secs id flip
	t_need_root
	t_need_fuse
	t_need_cmd python3 git
	t_init

	stress=$BUILD/tests/integration/stress_ops
	[ -x "$stress" ] || t_fail "no $stress (build first)"
	secs=${STRESS_SECONDS:-6}

	# the helper itself on a plain directory: its checks must hold there
	mkdir -p "$T/native" "$T/src"
	if ! "$stress" "$T/native" 4 1 >"$T/native.out"; then
		cat "$T/native.out" >&2
		t_fail "stress_ops fails on a plain directory: the helper is wrong"
	fi

	printf 'checkpoints:\n  turn_idle_ms: 0\n  max_snapshots: 100000\n' >"$HERMES_HOME/config.yaml"
	id=$(printf %s "$T/src" | sha256sum | cut -c1-16)
	t_mount "$T/src" -- "$@"
	t_wait_for 60 stress_baseline_done "$T/src" || t_fail "the baseline did not finish"
	# turns over the control socket while the stress runs
	PYTHONDONTWRITEBYTECODE=1 python3 - "$SRC/tests/integration" \
		"$HERMES_HOME/run/$id.sock" "$T/stop" >"$T/flips" <<-'PY' &
	import os, sys, time
	sys.path.insert(0, sys.argv[1])
	import ckpt_client
	conn, n = ckpt_client.Conn(sys.argv[2]), 0
	while not os.path.exists(sys.argv[3]):
	    if not conn.call({"op": "turn", "reason": "stress %d" % n}).get("ok"):
	        sys.exit("turn %d refused" % n)
	    n += 1
	    time.sleep(0.02)
	print(n)
	PY
	flip=$!
	t_on_cleanup "kill $flip"
	"$stress" "$T/src" 4 "$secs" >"$T/mount.out" ||
		t_check_fail "stress_ops on the mount reported errors${*:+ (options $*)}"
	: >"$T/stop"
	wait "$flip" || t_check_fail "the turn flipper failed"
	cat "$T/mount.out" >&2
	kill -0 "$T_DAEMON_PID" 2>/dev/null || t_fail "the daemon died under the stress run"

	# what the mount shows now is what is on the disk below
	t_stat_tree "$T/src" >"$T/via-mount.stat"
	t_hash_tree "$T/src" >"$T/via-mount.hash"
	cd "$T" || exit 1
	t_umount "$T/src"
	t_stat_tree "$T/src" >"$T/below.stat"
	t_hash_tree "$T/src" >"$T/below.hash"
	t_diff "listing through the mount vs the disk below" "$T/below.stat" "$T/via-mount.stat"
	t_diff "contents through the mount vs the disk below" "$T/below.hash" "$T/via-mount.hash"
	stress_check_store "$HERMES_HOME/checkpoints/$id" "$T/src" ||
		t_check_fail "the checkpoints do not hold what the tree held (above)"
	t_log "$(cat "$T/flips") turns, $(git --git-dir="$HERMES_HOME/checkpoints/$id" rev-list --count HEAD) checkpoints"
	t_pass
}

# shellcheck disable=SC2317 # called through t_wait_for
stress_baseline_done() {
	"$BUILD/tools/hermesctl" status --json "$1" 2>/dev/null |
		grep -q '"enabled":[[:space:]]*true,.*"scanning":[[:space:]]*false'
}

# stress_check_store STORE TREE: every file in every checkpoint is whole
# (tmp.N may also be empty: it is truncated before it is written), and the
# newest checkpoint (taken at unmount) lists exactly the files and symlinks
# of TREE with their contents.
stress_check_store() {
	PYTHONDONTWRITEBYTECODE=1 python3 - "$1" "$2" "$SRC/tests/integration" <<-'PY'
	import hashlib, os, re, subprocess, sys
	sys.path.insert(0, sys.argv[3])
	import git_store
	store, tree = sys.argv[1], sys.argv[2]
	st = git_store.Store(store)
	git = st.git
	def fnv(b):
	    h = 1469598103934665603
	    for c in b:
	        h = ((h ^ c) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
	    return h
	def whole(data):
	    return len(data) >= 9 and int.from_bytes(data[:8], "little") == fnv(data[8:])
	commits = st.commits()
	blob = st.read
	def listing(commit):
	    out = subprocess.run(git + ["ls-tree", "-r", "-z", commit], check=True,
	                         capture_output=True).stdout
	    entries = {}
	    for rec in out.split(b"\0"):
	        if rec:
	            meta, path = rec.split(b"\t", 1)
	            mode, _, oid = meta.decode().split()
	            entries[path.decode()] = (mode, oid)
	    return entries
	bad, seen = [], {}
	for n, commit in enumerate(commits):
	    for path, (mode, oid) in listing(commit).items():
	        name = os.path.basename(path)
	        if mode == "120000" or not re.fullmatch(r"f\d+|tmp\.\d+", name):
	            continue
	        if oid not in seen:
	            data = blob(oid)
	            seen[oid] = whole(data) or (name.startswith("tmp.") and not data)
	        if not seen[oid]:
	            bad.append("checkpoint %s (%d from the newest): %s is torn" % (commit[:12], n, path))
	want = {}
	for root, dirs, files in os.walk(tree):
	    for f in files + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
	        p = os.path.join(root, f)
	        rel = os.path.relpath(p, tree)
	        if os.path.islink(p):
	            data, mode = os.readlink(p).encode(), "120000"
	        else:
	            data = open(p, "rb").read()
	            mode = "100755" if os.stat(p).st_mode & 0o100 else "100644"
	        oid = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
	        want[rel] = (mode, oid)
	have = listing(commits[0])
	for rel in sorted(set(want) | set(have)):
	    if want.get(rel) != have.get(rel):
	        bad.append("newest checkpoint: %s is %s, the disk has %s" % (rel, have.get(rel), want.get(rel)))
	for b in bad[:30]:
	    print("violation:", b, file=sys.stderr)
	sys.exit(1 if bad else 0)
	PY
}
