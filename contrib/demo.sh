#!/usr/bin/env bash
# The embedded demo: a small project mounted in place, edited through the
# mount, checked, and unmounted. Usage: contrib/demo.sh BUILD_DIR
set -euo pipefail

build=$(cd "${1:-build}" && pwd)
ctl="$build/tools/hermesctl"
export HERMESFS_BIN="$build/fs/hermesfs"
work=$(mktemp -d /tmp/hermes-demo.XXXXXX)
export HERMES_HOME="$work/hermes-home"
proj="$work/project"
mounted=0

cleanup() {
	cd /
	if [ "$mounted" = 1 ]; then
		"$ctl" umount "$proj" >/dev/null 2>&1 || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$proj/src"
cat >"$proj/README.md" <<'MD'
# demo project
A tiny tree to show hermesfs mounting a directory in place.
MD
cat >"$proj/src/hello.c" <<'C'
#include <stdio.h>
int main(void) { puts("hello"); return 0; }
C

run() {
	printf '$'
	printf ' %q' "$@"
	printf '\n'
	"$@"
}

run "$ctl" mount "$proj"
mounted=1
run "$ctl" status
cd "$proj"
printf '$ echo "edited through the mount" >> README.md\n'
echo "edited through the mount" >>README.md
run cat README.md
run findmnt -n -o TARGET,FSTYPE,OPTIONS -T "$proj"
run "$ctl" turn -m "the agent deletes a file"
printf '$ rm src/hello.c\n'
rm src/hello.c
run "$ctl" rollback
run "$ctl" rollback diff 1 --no-pager
run "$ctl" rollback 1
run ls src
[ -f src/hello.c ] || { echo "demo: the rollback did not bring src/hello.c back" >&2; exit 1; }
cd /
run "$ctl" umount "$proj"
mounted=0
printf '$ cat %s/README.md   # after unmount: the edit is on disk\n' "$proj"
cat "$proj/README.md"
grep -q "edited through the mount" "$proj/README.md"
echo
echo "demo finished: mounted in place, edited, a deletion rolled back, unmounted intact"
