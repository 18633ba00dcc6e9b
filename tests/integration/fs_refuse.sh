#!/bin/bash
# What hermesfs refuses to mount: each refusal is exit 1 with one clear line.
# shellcheck source=tests/integration/fs_lib.sh
. "$(dirname "$0")/fs_lib.sh"

# expect_refusal PATTERN ARGS...: exit 1, one line on stderr matching PATTERN
expect_refusal() {
	local pat=$1 out rc=0
	shift
	out=$("$HERMESFS" "$@" 2>&1) || rc=$?
	[ "$rc" = 1 ] || fail "hermesfs $* exited $rc, expected 1 (output: $out)"
	[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "hermesfs $*: not one line: $out"
	printf '%s\n' "$out" | grep -Eq "$pat" || fail "hermesfs $*: '$out' does not match '$pat'"
	echo "refused as expected: $out"
}

mkdir -p "$WORK/proj" "$WORK/other"
echo x >"$WORK/file"

expect_refusal 'refusing to protect /' /
HOME=$WORK/proj expect_refusal 'home directory' "$WORK/proj"
expect_refusal 'not a directory' "$WORK/file"
expect_refusal 'No such file or directory' "$WORK/missing"
# a tree holding $HERMES_HOME
expect_refusal 'HERMES_HOME' "$WORK"
# a mountpoint inside the tree would loop back into the mount
mkdir -p "$WORK/proj/in"
expect_refusal 'inside the tree' "$WORK/proj" "$WORK/proj/in"

fs_mount "$WORK/proj"
expect_refusal 'already mounted' "$WORK/proj"
# a directory inside a FUSE mount
mkdir "$WORK/proj/sub"
expect_refusal 'FUSE' "$WORK/proj/sub"
# a bad FUSE option is reported by the daemon through its parent
expect_refusal 'unknown option' "$WORK/other" -o no_such_option
fs_is_mounted "$WORK/other" && fail "mounted despite a bad option"

"$HERMESFS" --help | grep -q 'usage: hermesfs SOURCE' || fail "--help lacks usage"
"$HERMESFS" --version | grep -Eq '^hermesfs [0-9]+\.' || fail "--version"
fs_check_log
echo "ok: every refusal was one line and exit 1"
