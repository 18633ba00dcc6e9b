#!/bin/bash
# One checkpoint per turn: a script writing 5 files in one turn leaves one
# checkpoint (and the next one holds exactly those 5 files); a turn that
# changes nothing leaves none; excluded paths (node_modules/, .env) never
# cause a checkpoint nor reach the store; a change after an idle gap
# (turn_idle_ms) starts a turn by itself.
. "$SRC/tests/integration/ckpt_lib.sh"
ckpt_init
ckpt_config "turn_idle_ms: 0" "max_snapshots: 100000"

echo base >"$TREE/base.txt"
mkdir "$TREE/node_modules"
echo lib >"$TREE/node_modules/lib.js"
ckpt_mount
ckpt_expect_count 1 "after the baseline"
[ "$(ckpt_subjects)" = baseline ] || t_check_fail "first checkpoint is '$(ckpt_subjects)', want baseline"

# a change outside any explicit turn only marks the tree dirty
echo x >"$TREE/x.txt"
ckpt_expect_count 1 "a change without a turn"
[ "$(ckpt_status 'c["dirty_paths"]')" = 1 ] || t_check_fail "x.txt is not listed as dirty"

# turn "five": one checkpoint (the tree before it: with x.txt), then 5 files
ckpt_turn five
python3 - "$TREE" <<'PY'
import os, sys
for i in range(5):
    with open(os.path.join(sys.argv[1], "f%d.txt" % i), "w") as f:
        f.write("file %d\n" % i)
PY
ckpt_expect_count 2 "a script writing 5 files in one turn"
[ "$(ckpt_subjects | head -n 1)" = five ] || t_check_fail "newest checkpoint is not 'five'"
[ "$(ckpt_show HEAD x.txt)" = x ] || t_check_fail "checkpoint 'five' lacks x.txt"
ckpt_show HEAD f0.txt >/dev/null 2>&1 && t_check_fail "checkpoint 'five' already holds f0.txt"

# turn "next": its checkpoint holds exactly the 5 files of turn "five"
ckpt_turn next
echo n >"$TREE/n.txt"
ckpt_expect_count 3 "the turn after 'five'"
got=$(git --git-dir="$STORE" diff --name-only HEAD~1 HEAD | LC_ALL=C sort | tr '\n' ' ')
[ "$got" = "f0.txt f1.txt f2.txt f3.txt f4.txt " ] ||
	t_check_fail "checkpoint 'next' differs from 'five' by '$got', want the 5 files"
trailer=$(git --git-dir="$STORE" log -1 --format='%(trailers:key=Hermes-Files,valueonly)' | head -n 1)
[ "$trailer" = 5 ] || t_check_fail "Hermes-Files trailer says '$trailer', want 5"

# turns that change nothing (reads, a stat, a listing) leave no checkpoint
ckpt_turn nothing-1
cat "$TREE"/*.txt >/dev/null
ls -la "$TREE" >/dev/null
ckpt_turn nothing-2
stat "$TREE/n.txt" >/dev/null
ckpt_expect_count 3 "turns that only read"
ckpt_turn real
echo r >"$TREE/r.txt"
ckpt_expect_count 4 "a changing turn after reading ones"
ckpt_subjects | grep -q '^nothing' && t_check_fail "a turn that changed nothing left a checkpoint"

# excluded paths: changed in turns of their own, they never checkpoint
ckpt_turn deps
echo dep >"$TREE/node_modules/new.js"
echo changed >"$TREE/node_modules/lib.js"
echo SECRET=1 >"$TREE/.env"
ckpt_turn deps-again
rm "$TREE/node_modules/new.js"
echo SECRET=2 >"$TREE/.env"
mkdir -p "$TREE/node_modules/pkg/sub"
echo y >"$TREE/node_modules/pkg/sub/y.js"
ckpt_expect_count 4 "turns changing only excluded paths"
[ "$(ckpt_status 'c["dirty_paths"]')" = 1 ] ||
	t_check_fail "dirty paths: $(ckpt_status 'c["dirty_paths"]'), want only r.txt"

# idle gap: remount with turn_idle_ms 300 (counts from here are relative,
# so a failure above does not hide one below)
echo u >"$TREE/u.txt"
n=$(ckpt_count)
t_umount "$TREE"
ckpt_expect_count $((n + 1)) "after unmount (u.txt changed)"
[ "$(ckpt_subjects | head -n 1)" = unmount ] || t_check_fail "no 'unmount' checkpoint"
[ "$(ckpt_show HEAD u.txt)" = u ] || t_check_fail "the unmount checkpoint lacks u.txt"
if git --git-dir="$STORE" log --all --name-only --format= | grep -E '(^|/)(node_modules|\.env)'; then
	t_check_fail "an excluded path reached the store (above)"
fi
ckpt_config "turn_idle_ms: 300" "max_snapshots: 100000"
n=$(ckpt_count)
ckpt_mount
ckpt_expect_count "$n" "remount of an unchanged tree"
echo a >"$TREE/idle-a.txt"
echo a2 >>"$TREE/idle-a.txt" # within the gap: same turn
sleep 0.8
echo b >"$TREE/idle-b.txt"
echo c >"$TREE/idle-c.txt" # right after: the same (idle-started) turn
ckpt_expect_count $((n + 1)) "a change after an idle gap, and one right after it"
subj=$(ckpt_subjects | head -n 1)
case $subj in
"after "*" s idle") ;;
*) t_check_fail "idle checkpoint reason is '$subj'" ;;
esac
[ "$(ckpt_show HEAD idle-a.txt)" = "a
a2" ] || t_check_fail "idle checkpoint does not hold idle-a.txt as written"
ckpt_show HEAD idle-b.txt >/dev/null 2>&1 && t_check_fail "idle checkpoint holds the change that started it"
t_umount "$TREE"
t_pass
