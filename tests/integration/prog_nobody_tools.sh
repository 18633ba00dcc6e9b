#!/bin/bash
# The mount as another user sees it (root mounts, uid 65534 works): git,
# tar, make and vim run as 65534 in a directory it owns, on a plain
# directory and on the mount; the outcomes and the resulting trees match.
# shellcheck source=tests/integration/lib.sh
. "$SRC/tests/integration/lib.sh"
t_need_root
t_need_fuse
t_need_cmd git tar make cc vim setpriv
t_init

mkdir -p "$T/native" "$T/src" "$T/home"
chown "$NOBODY_UID:$NOBODY_GID" "$T/home"
t_mount "$T/src"
cd "$T" || exit 1

# the work, as a script run by uid 65534 in the directory given
cat >"$T/work.sh" <<'EOF'
set -eu
cd "$1"
export HOME=$2 GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=n GIT_AUTHOR_EMAIL=n@example.com
export GIT_COMMITTER_NAME=n GIT_COMMITTER_EMAIL=n@example.com
export GIT_AUTHOR_DATE='2001-01-01T00:00:00Z' GIT_COMMITTER_DATE='2001-01-01T00:00:00Z'
mkdir -p proj/src
printf 'int main(void) { return 42; }\n' >proj/src/main.c
printf 'prog: src/main.c\n\tcc -o prog src/main.c\n' >proj/Makefile
tar -cf bundle.tar proj
rm -rf proj
tar -xf bundle.tar
cd proj
make -s
./prog || echo "prog exit $?" >result.txt
git init -q -b main .
printf 'prog\n*.txt\n' >.gitignore
git add -A
git commit -q -m one
vim -Nu NONE -i NONE -es --cmd 'set backupskip=' -c '%s/42/7/' -c 'wq' src/main.c </dev/null
git commit -q -am two
git checkout -q HEAD~1 -- src/main.c
git status --porcelain >status.txt
git log --format='%H %s' >log.txt
EOF
chmod 0755 "$T/work.sh"

for d in "$T/native" "$T/src"; do
	mkdir "$d/w"
	chown "$NOBODY_UID:$NOBODY_GID" "$d/w"
	t_as_nobody bash "$T/work.sh" "$d/w" "$T/home" 2>"$T/err" ||
		t_check_fail "the work as uid 65534 failed in $d: $(cat "$T/err")"
done

t_expect_content "$T/src/w/proj/result.txt" "prog exit 42"
t_expect_content "$T/src/w/proj/status.txt" "M  src/main.c"
# times differ by nature: in the tar file and in git's index (stat data)
rm -f "$T"/native/w/bundle.tar "$T"/src/w/bundle.tar \
	"$T"/native/w/proj/.git/index "$T"/src/w/proj/.git/index
t_compare_trees "tools as uid 65534" "$T/native/w" "$T/src/w"
# identical commits (same content, author, dates) give identical hashes
t_diff "git history" "$T/native/w/proj/log.txt" "$T/src/w/proj/log.txt"
[ "$(stat -c %U "$T/src/w/proj/.git/HEAD")" = nobody ] ||
	t_check_fail "files made by uid 65534 are not owned by it"
t_umount "$T/src"
t_pass
