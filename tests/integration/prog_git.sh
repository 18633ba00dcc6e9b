#!/bin/bash
# git working inside the mounted tree: init, add, commit, branch, checkout,
# status. Status is clean after each commit and checkout, the checked-out
# files are right, and git fsck finds nothing wrong with the repository.
# shellcheck source=tests/integration/lib.sh
. "$SRC/tests/integration/lib.sh"
t_need_root
t_need_fuse
t_need_cmd git
t_init

mkdir -p "$T/src" "$T/home"
t_mount "$T/src"
export HOME=$T/home GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com
export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.com
cd "$T/src" || exit 1

git_clean() {
	local out
	out=$(git status --porcelain --untracked-files=all) || {
		t_check_fail "git status failed ($1)"
		return
	}
	[ -z "$out" ] || t_check_fail "git status not clean $1: $out"
}

git init -q -b main . || t_fail "git init failed on the mount"
mkdir -p src/lib docs
for i in $(seq 1 40); do printf 'line %d of file %d\n' 1 "$i" >"src/lib/f$i.c"; done
printf '#!/bin/sh\necho run\n' >run.sh
chmod +x run.sh
ln -s src/lib/f1.c link-to-f1
printf 'readme\n' >docs/README
git add -A || t_fail "git add failed"
git commit -q -m first || t_fail "git commit failed"
git_clean "after the first commit"

git checkout -q -b feature || t_fail "git checkout -b failed"
printf 'changed\n' >>src/lib/f7.c
git rm -q docs/README
printf 'new\n' >src/new.c
git mv run.sh run2.sh
{ git add -A && git commit -q -m feature; } || t_fail "second commit failed"
git_clean "after the feature commit"

git checkout -q main || t_fail "git checkout main failed"
git_clean "after checking out main"
[ -f docs/README ] || t_check_fail "checkout main did not restore docs/README"
[ ! -e src/new.c ] || t_check_fail "checkout main left src/new.c"
{ [ -x run.sh ] && [ ! -e run2.sh ]; } || t_check_fail "checkout main did not restore run.sh"
[ "$(readlink link-to-f1)" = src/lib/f1.c ] || t_check_fail "symlink wrong after checkout"
[ "$(wc -l <src/lib/f7.c)" = 1 ] || t_check_fail "f7.c not restored by checkout"

git checkout -q feature || t_fail "git checkout feature failed"
git_clean "after checking out feature"
[ "$(tail -n 1 src/lib/f7.c)" = changed ] || t_check_fail "f7.c lacks the feature change"

# editing a tracked file shows up, and restoring it makes status clean again
printf 'dirty\n' >>src/lib/f3.c
[ "$(git status --porcelain)" = " M src/lib/f3.c" ] ||
	t_check_fail "git status does not show exactly the edit: $(git status --porcelain)"
git checkout -q -- src/lib/f3.c
git_clean "after git checkout -- file"

git gc -q 2>/dev/null || t_check_fail "git gc failed on the mount"
git fsck --no-progress 2>&1 | grep -v '^$' >"$T/fsck.out"
[ -s "$T/fsck.out" ] && t_check_fail "git fsck: $(cat "$T/fsck.out")"
[ "$(git rev-list --count feature)" = 2 ] || t_check_fail "history length wrong"

cd "$T" || exit 1
t_umount "$T/src"
# the repository is intact on the disk below
git -C "$T/src" fsck --no-progress >/dev/null 2>&1 || t_check_fail "repository broken after unmount"
[ -z "$(git -C "$T/src" status --porcelain)" ] || t_check_fail "tree differs from HEAD after unmount"
t_pass
