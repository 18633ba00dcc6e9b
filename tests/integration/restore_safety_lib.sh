# shellcheck shell=bash
# What a rollback must never do, checked the same way on an unmounted tree
# (store_restore_safety.sh) and through a mount (ckpt_restore_safety.sh):
# destroy a file no checkpoint holds, add a safety checkpoint for a request
# it then refuses, or make directories more open than the user's umask.
# The sourcing script sets up ckpt_lib (ckpt_init, ckpt_config) and, for the
# mounted variant, mounts $TREE before calling rs_run.

rs_hctl() { # rs_hctl WANT_RC ARGS...: output in $OUT, stderr in $ERR
	local want=$1 rc=0
	shift
	OUT=$(cd "$TREE" && "$HCTL" "$@" 2>"$T/rs.err") || rc=$?
	ERR=$(cat "$T/rs.err")
	[ "$rc" = "$want" ] || t_fail "hermesctl $* exited $rc, want $want: $OUT $ERR"
}

rs_count() { git --git-dir="$STORE" rev-list --count refs/heads/main; }

# The hash of the newest checkpoint with this reason.
rs_oid() {
	git --git-dir="$STORE" log --format='%H %s' refs/heads/main |
		awk -v r="$1" '{ h = $1; sub(/^[^ ]* /, "") } $0 == r { print h; exit }'
}

rs_run() {
	local big sum before n d

	# 1. a new file over the size cap is in no checkpoint: a whole-tree
	# rollback to a checkpoint that had a small file of that name must
	# not write over it, and the undo must not delete it
	echo small >"$TREE/data.bin"
	echo a >"$TREE/a.txt"
	rs_hctl 0 checkpoint -m A
	rm "$TREE/data.bin"
	rs_hctl 0 checkpoint -m B
	big=$T/big.bin
	head -c 3000000 /dev/urandom >"$big"
	cp "$big" "$TREE/data.bin"
	echo changed >"$TREE/a.txt"
	sum=$(sha256sum <"$big")
	rs_hctl 0 checkpoint -m C
	printf '%s\n' "$OUT$ERR" | grep -q 'data.bin' ||
		t_check_fail "checkpoint C does not say data.bin was left out: $OUT $ERR"
	rs_hctl 1 rollback 3
	[ "$(sha256sum <"$TREE/data.bin")" = "$sum" ] ||
		t_check_fail "rollback wrote over data.bin, which no checkpoint holds"
	printf '%s\n' "$ERR" | grep -q 'kept data.bin as it is' ||
		t_check_fail "rollback did not say it kept data.bin: $ERR"
	printf '%s\n' "$OUT" | grep -q "undoes this" || t_check_fail "no undo hint: $OUT"
	t_expect_content "$TREE/a.txt" a
	undo=$(printf '%s\n' "$OUT" | sed -n "s/.*'hermesctl rollback \([0-9a-f]*\)' undoes this/\1/p")
	[ -n "$undo" ] || t_fail "no undo hash in: $OUT"
	rs_hctl 0 rollback "$undo"
	[ -f "$TREE/data.bin" ] && [ "$(sha256sum <"$TREE/data.bin")" = "$sum" ] ||
		t_check_fail "the undo of the rollback lost data.bin"
	t_expect_content "$TREE/a.txt" changed
	# moved aside, the rollback restores it
	mv "$TREE/data.bin" "$T/aside.bin"
	rs_hctl 0 rollback "$(rs_oid A)" data.bin
	t_expect_content "$TREE/data.bin" small

	# 2. a refused request adds no checkpoint, so numbers stay put
	rs_hctl 0 checkpoint -m D
	before=$(rs_count)
	rs_hctl 3 rollback 2 a.tx
	printf '%s\n' "$ERR" | grep -q 'cannot restore a.tx' || t_check_fail "typo message: $ERR"
	n=$(rs_count)
	[ "$n" = "$before" ] || t_check_fail "a refused rollback added $((n - before)) checkpoint(s)"
	rs_hctl 0 rollback 2 a.txt # checkpoint 2 is still the one meant
	t_expect_content "$TREE/a.txt" changed

	# 3. directories a restore makes follow the user's umask, never 0777
	mkdir -p "$TREE/src/deep"
	echo d >"$TREE/src/deep/d.txt"
	chmod 0755 "$TREE/src" "$TREE/src/deep"
	rs_hctl 0 checkpoint -m E
	rm -rf "$TREE/src"
	(umask 022 && rs_hctl 0 rollback 1 src/deep/d.txt)
	for d in src src/deep; do
		[ "$(stat -c %a "$TREE/$d")" = 755 ] ||
			t_check_fail "restored $d is $(stat -c %a "$TREE/$d"), want 755 (umask 022)"
	done
	t_expect_content "$TREE/src/deep/d.txt" d
	rm -rf "$TREE/src"
	rs_hctl 0 checkpoint -m F
	(umask 077 && cd "$TREE" && "$HCTL" rollback 2 >/dev/null) || t_fail "rollback under umask 077"
	for d in src src/deep; do
		[ "$(stat -c %a "$TREE/$d")" = 700 ] ||
			t_check_fail "restored $d is $(stat -c %a "$TREE/$d"), want 700 (umask 077)"
	done
	[ "$(stat -c %a "$TREE/src/deep/d.txt")" = 600 ] ||
		t_check_fail "restored d.txt is $(stat -c %a "$TREE/src/deep/d.txt"), want 600 (umask 077)"
}
