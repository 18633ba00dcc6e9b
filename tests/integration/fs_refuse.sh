#!/bin/bash
# What hermesfs refuses to mount: each refusal is one clear line and the exit
# code its --help documents (3 no such directory, 4 refused, 1 failed).
# shellcheck source=tests/integration/fs_lib.sh
. "$(dirname "$0")/fs_lib.sh"

# expect_refusal RC PATTERN ARGS...: exit RC, one line on stderr matching PATTERN
expect_refusal() {
	local want=$1 pat=$2 out rc=0
	shift 2
	out=$("$HERMESFS" "$@" 2>&1) || rc=$?
	[ "$rc" = "$want" ] || fail "hermesfs $* exited $rc, expected $want (output: $out)"
	[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "hermesfs $*: not one line: $out"
	printf '%s\n' "$out" | grep -Eq "$pat" || fail "hermesfs $*: '$out' does not match '$pat'"
	echo "refused as expected: $out"
}

mkdir -p "$WORK/proj" "$WORK/other"
echo x >"$WORK/file"

expect_refusal 4 'refusing to protect /' /
HOME=$WORK/proj expect_refusal 4 'home directory' "$WORK/proj"
# a person's home from the password database, whatever $HOME says (sudo -E, su)
root_home=$(getent passwd root | cut -d: -f6)
if [ -d "$root_home" ] && [ "$root_home" != / ]; then
	HOME=$WORK/proj expect_refusal 4 'home directory' "$root_home"
fi
expect_refusal 3 'not a directory' "$WORK/file"
expect_refusal 3 'No such file or directory' "$WORK/missing"
# a tree holding $HERMES_HOME
expect_refusal 4 'HERMES_HOME' "$WORK"
# ... also when $HERMES_HOME reaches into the tree through a symlink and
# does not exist yet (the daemon would write its log into its own mount)
mkdir -p "$WORK/proj2"
ln -s "$WORK/proj2" "$WORK/link2"
HERMES_HOME=$WORK/link2/state/deeper expect_refusal 4 'HERMES_HOME' "$WORK/proj2"
[ ! -e "$WORK/proj2/state" ] || fail "a refused mount still made \$HERMES_HOME in the tree"
# a mountpoint that covers $HERMES_HOME (the daemon would write into its
# own mount), or /, or a home: refused as a mountpoint, not as a tree
mkdir -p "$WORK/src3"
expect_refusal 4 "mount on $WORK: it holds .HERMES_HOME" "$WORK/src3" "$WORK"
expect_refusal 4 'mount on /: the mount would cover' "$WORK/src3" /
# a mountpoint inside the tree would loop back into the mount
mkdir -p "$WORK/proj/in"
expect_refusal 4 'inside the tree' "$WORK/proj" "$WORK/proj/in"

mkdir -p "$WORK/outer/proj"
fs_mount "$WORK/outer/proj"
expect_refusal 4 'already mounted' "$WORK/outer/proj"
# a directory inside a FUSE mount
mkdir "$WORK/outer/proj/sub"
expect_refusal 4 'FUSE' "$WORK/outer/proj/sub"
# a tree holding a mount: mounting it in place, or on it, would hide that one
expect_refusal 4 'holds the hermesfs mount' "$WORK/outer"
expect_refusal 4 'holds the hermesfs mount' "$WORK/other" "$WORK/outer"
# a bad command line is exit 2, as --help says, with the reason: unknown
# FUSE options (libfuse's own line), flags we lack, numbers out of range
expect_refusal 2 'unknown option' "$WORK/other" -o no_such_option
fs_is_mounted "$WORK/other" && fail "mounted despite a bad option"
expect_refusal 2 'unknown option -x' "$WORK/other" -x
expect_refusal 2 'unknown option --foo' "$WORK/other" --foo
expect_refusal 2 'handle_fds=99999999999' "$WORK/other" -o handle_fds=99999999999
expect_refusal 2 'max_threads=0' "$WORK/other" -o max_threads=0
expect_refusal 2 'fd_budget=abc' "$WORK/other" -o fd_budget=abc
fs_is_mounted "$WORK/other" && fail "mounted despite a bad command line"

"$HERMESFS" --help | grep -q 'usage: hermesfs SOURCE' || fail "--help lacks usage"
"$HERMESFS" --version | grep -Eq '^hermesfs [0-9]+\.' || fail "--version"
fs_check_log
"$HERMESFS" --help | grep -q '^Exit codes' || fail "--help does not document the exit codes"
echo "ok: every refusal was one line with its documented exit code"
