#!/bin/bash
# A caller that is not root but holds capabilities (CAP_DAC_OVERRIDE here,
# as a container or a service may) creates entries where its uid alone may
# not, on the mount as on the disk: the daemon acts with the caller's uid
# and, when that is refused, with the caller's own capabilities too. The
# same caller without the capability is still refused, and so is one whose
# capabilities belong to a user namespace of its own (unshare -Ur).
# shellcheck source=tests/integration/fs_lib.sh
. "$(dirname "$0")/fs_lib.sh"
[ "$(id -u)" = 0 ] || { echo "skip: needs root"; exit 77; }
command -v setpriv >/dev/null || { echo "skip: no setpriv"; exit 77; }

CAPS=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=+dac_override
	--ambient-caps=+dac_override)
PLAIN=(setpriv --reuid=65534 --regid=65534 --clear-groups)

# run DIR: the same steps, one line each of what happened
run() {
	local d=$1/priv
	mkdir -m 755 "$d"
	echo src >"$d/src"
	for step in "mkdir $d/d" "ln -s x $d/l" "touch $d/f" "mkfifo $d/p" "ln $d/src $d/hl" \
		"sh -c 'echo w >$d/w'"; do
		if "${CAPS[@]}" sh -c "$step" 2>/dev/null; then echo "with cap: ok: ${step//$1/}"; else echo "with cap: refused: ${step//$1/}"; fi
	done
	if "${PLAIN[@]}" mkdir "$d/d2" 2>/dev/null; then echo "without cap: mkdir ok"; else echo "without cap: mkdir refused"; fi
	# root of a user namespace of its own: its capabilities count there,
	# not on our files
	if "${PLAIN[@]}" unshare -Ur mkdir "$d/d3" 2>/dev/null; then echo "userns root: mkdir ok"; else echo "userns root: mkdir refused"; fi
	(cd "$d" && stat -c '%n %F %u:%g %a' d l f p hl w 2>&1 | sort) || true
}

fs_run_both run
grep -q "with cap: ok: mkdir" "$WORK/native.out" || fail "the disk itself refused the capable caller: the test proves nothing"
fs_diff_both "what a caller with capabilities may do"
grep -q "without cap: mkdir refused" "$WORK/mount.out" || fail "the caller without the capability got in"
grep -q "userns root: mkdir refused" "$WORK/mount.out" || fail "the root of a user namespace got in"
umount "$WORK/tree"
echo PASS
