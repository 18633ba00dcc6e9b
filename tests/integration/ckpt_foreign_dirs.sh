#!/bin/bash
# A directory that is a git repository (HEAD, objects/, refs/: a bare
# "mirror.git") or a virtualenv (pyvenv.cfg) is excluded wherever it is and
# whatever its name: by the full scan, by the daemon's tracking of changes
# (files made in one after the mount are in no checkpoint, and changes
# there alone start no checkpoint), and by restores. A directory that only
# looks like one (a HEAD file, no objects/) is kept; one that stops being a
# virtualenv is tracked again.
. "$SRC/tests/integration/ckpt_lib.sh"
ckpt_init
ckpt_config
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
cd "$TREE" || exit 1
mkdir -p src docs/refs tools/pyenv/lib
echo 'int a;' >src/a.c
git init -q --bare mirror.git || t_fail "git init --bare"
git init -q --bare deps/lib-src || t_fail "git init --bare deps/lib-src"
printf 'home = /usr/bin\n' >tools/pyenv/pyvenv.cfg
echo 'import os' >tools/pyenv/lib/site.py
echo ref >docs/HEAD # HEAD and refs/ but no objects/: not a repository
echo x >docs/refs/x

G=(git --git-dir="$STORE")
tracked() { "${G[@]}" ls-tree -r --name-only HEAD | LC_ALL=C sort | tr '\n' ' ' | cut -c1-400; }
want="docs/HEAD docs/refs/x src/a.c "
out=$("$HCTL" checkpoint -C "$TREE" -m scan 2>&1) || t_fail "checkpoint: $out"
[ "$(tracked)" = "$want" ] || t_check_fail "full scan tracked: $(tracked)"
scan=$("${G[@]}" rev-parse HEAD)

# every inode by a handle (as past the fd budget): directories too
ckpt_mount -- -o fd_budget=0
cd "$TREE" || exit 1 # onto the mount
[ "$(tracked)" = "$want" ] || t_check_fail "after the mount's re-validation: $(tracked)"

# made after the mount, through it
git init -q --bare new.git || t_fail "git init --bare new.git"
echo late >new.git/objects/late
echo late >mirror.git/objects/late
mkdir -p venv2x/lib
printf 'home = /usr/bin\n' >venv2x/pyvenv.cfg
echo 'x = 1' >venv2x/lib/mod.py
echo 'int b;' >src/b.c
ckpt_ctl '{"op":"checkpoint","reason":"after the mount"}' >/dev/null || t_fail "checkpoint"
want="docs/HEAD docs/refs/x src/a.c src/b.c "
[ "$(tracked)" = "$want" ] || t_check_fail "after changes through the mount: $(tracked)"

# changes inside them alone are no change of the tree
n=$(ckpt_count)
ckpt_turn "only in foreign directories"
echo more >new.git/objects/more
echo 'y = 2' >venv2x/lib/mod.py
rm mirror.git/objects/late
git --git-dir=mirror.git symbolic-ref HEAD refs/heads/other
# the daemon tracked none of it: the turn still waits for its first change
[ "$(ckpt_status 'c["checkpoint_pending"] and c["dirty_paths"] == 0')" = True ] ||
	t_check_fail "changes inside them were tracked: $(ckpt_status_json)"
ckpt_ctl '{"op":"checkpoint","reason":"nothing tracked changed"}' >/dev/null || t_fail "checkpoint"
ckpt_expect_count "$n" "changes only inside a repository and a virtualenv"

# a restore never touches them, here a rollback to before they existed
out=$("$HCTL" rollback -C "$TREE" "$scan" 2>&1) || t_fail "rollback: $out"
[ ! -e src/b.c ] || t_check_fail "the rollback kept src/b.c"
for f in new.git/objects/late new.git/objects/more venv2x/lib/mod.py new.git/HEAD; do
	[ -e "$f" ] || t_check_fail "the rollback removed $f"
done
git --git-dir=mirror.git rev-parse --git-dir >/dev/null 2>&1 || t_check_fail "mirror.git broken"

# no longer a virtualenv: tracked again; a directory that becomes one
# leaves the checkpoints
rm tools/pyenv/pyvenv.cfg
mkdir -p plain
echo p >plain/p.txt
ckpt_ctl '{"op":"checkpoint","reason":"pyenv is plain now"}' >/dev/null || t_fail "checkpoint"
want="docs/HEAD docs/refs/x plain/p.txt src/a.c tools/pyenv/lib/site.py "
[ "$(tracked)" = "$want" ] || t_check_fail "after removing pyvenv.cfg: $(tracked)"
printf 'home = /usr/bin\n' >plain/pyvenv.cfg
ckpt_ctl '{"op":"checkpoint","reason":"plain is a virtualenv"}' >/dev/null || t_fail "checkpoint"
want="docs/HEAD docs/refs/x src/a.c tools/pyenv/lib/site.py "
[ "$(tracked)" = "$want" ] || t_check_fail "after making plain/ a virtualenv: $(tracked)"

cd / || exit 1
t_umount "$TREE"
# and the full scan of the unmounted tree agrees
out=$("$HCTL" checkpoint -C "$TREE" -m rescan 2>&1) || t_fail "checkpoint: $out"
[ "$(tracked)" = "$want" ] || t_check_fail "full scan after unmount: $(tracked)"
t_pass
