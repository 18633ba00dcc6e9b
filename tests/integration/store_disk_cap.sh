#!/bin/bash
# The disk cap holds through churn: with checkpoints.max_total_size_mb: 3
# and incompressible files, `du -sb` of the store never passes 3 MiB after
# any checkpoint, taken with `hermesctl checkpoint` or by the daemon at a
# turn, and the newest checkpoint always holds the tree. A tree whose first
# checkpoint alone would take over 90% of the cap is refused with one line
# that names the size and the setting to raise; checkpoints stay off for it.
. "$SRC/tests/integration/ckpt_lib.sh"
ckpt_init
CAP=3
ckpt_config "turn_idle_ms: 0" "max_snapshots: 100000" "max_total_size_mb: $CAP"
limit=$((CAP * 1048576))
peak=0
check_du() {
	local b
	b=$(du -sb "$STORE" | cut -f1)
	[ "$b" -gt "$peak" ] && peak=$b
	[ "$b" -le "$limit" ] || t_fail "$1: the store takes $b bytes, over the cap of $limit"
	return 0
}
churn() { # $1: step; rewrite one of 7 files with 40-100 kB of random bytes
	head -c $((40000 + RANDOM % 60000)) /dev/urandom >"$TREE/f$(($1 % 7)).bin"
}
newest_holds() { # the newest checkpoint has the file as it is now
	git --git-dir="$STORE" show "HEAD:f$(($1 % 7)).bin" | cmp -s - "$TREE/f$(($1 % 7)).bin" ||
		t_fail "$2: the newest checkpoint does not hold f$(($1 % 7)).bin"
}

head -c 300000 /dev/urandom >"$TREE/base.bin"
for i in $(seq 1 60); do
	churn "$i"
	"$HCTL" checkpoint -C "$TREE" -m "cli $i" >/dev/null || t_fail "checkpoint $i failed"
	check_du "hermesctl checkpoint $i"
	newest_holds "$i" "hermesctl checkpoint $i"
done
n=$(ckpt_count)
[ "$n" -ge 2 ] || t_fail "only $n checkpoint(s) kept under the cap"
t_log "hermesctl: peak $peak bytes of $limit, $n checkpoints kept"

# the same through the mount: the daemon checkpoints a turn before the
# first write of the next one, so the newest checkpoint holds the previous
# step's file
peak=0
ckpt_mount
prev=""
for i in $(seq 61 110); do
	ckpt_turn "turn $i"
	churn "$i"
	check_du "turn $i"
	if [ -n "$prev" ]; then
		git --git-dir="$STORE" show "HEAD:$prev" | cmp -s - "$T/prev.bin" ||
			t_fail "turn $i: the newest checkpoint does not hold $prev of the turn before"
	fi
	prev=f$((i % 7)).bin
	cp "$TREE/$prev" "$T/prev.bin"
done
t_log "mount: peak $peak bytes of $limit, $(ckpt_count) checkpoints kept"

# a first checkpoint over 90% of the cap: refused, and it says why
BIG=$T/big
mkdir -p "$BIG"
for i in 1 2 3 4; do head -c 1000000 /dev/urandom >"$BIG/b$i.bin"; done
rc=0
"$HCTL" checkpoint -C "$BIG" >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" != 0 ] || t_fail "a first checkpoint of 4 MB was taken under a cap of $CAP MB"
[ "$(wc -l <"$T/err")" = 1 ] || t_fail "the refusal is not one line: $(cat "$T/err")"
grep -q 'about [0-9.]* MB.*checkpoints.max_total_size_mb.*raise' "$T/err" ||
	t_fail "the refusal does not name the size and the setting: $(cat "$T/err")"
"$HCTL" checkpoints status >"$T/status" || t_fail "checkpoints status failed"
grep -F "$BIG" "$T/status" | grep -q 'so it has no checkpoints' ||
	t_fail "status does not show checkpoints off for the big tree: $(cat "$T/status")"
bigstore=$HERMES_HOME/checkpoints/$(printf %s "$BIG" | sha256sum | cut -c1-16)
[ "$(du -sb "$bigstore" | cut -f1)" -le "$limit" ] || t_fail "the refused tree's store passed the cap"

# the same when one file alone passes the cap (it used to read "cannot
# read one.bin: File too large", with checkpoints left on)
ONE=$T/one
mkdir -p "$ONE"
head -c 3000000 /dev/urandom >"$ONE/one.bin"
rc=0
"$HCTL" checkpoint -C "$ONE" >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" != 0 ] || t_fail "a first checkpoint of one 3 MB file was taken under a cap of $CAP MB"
grep -q 'about [0-9.]* MB.*checkpoints.max_total_size_mb.*raise' "$T/err" ||
	t_fail "one big file: the refusal does not name the size and the setting: $(cat "$T/err")"
"$HCTL" checkpoints status >"$T/status" || t_fail "checkpoints status failed"
grep -F "$ONE" "$T/status" | grep -q 'so it has no checkpoints' ||
	t_fail "status does not show checkpoints off for the one-file tree: $(cat "$T/status")"
t_pass
