#!/bin/bash
# Checkpoints read the tree without touching it: the baseline at the first
# mount and a later turn's checkpoint leave every file's access time (and
# its directory's) as it was, on the mount as on the disk below.
. "$SRC/tests/integration/ckpt_lib.sh"
ckpt_init
ckpt_config "turn_idle_ms: 0"

mkdir -p "$TREE/d"
echo a >"$TREE/a.txt"
echo b >"$TREE/d/b.txt"
old=2021-01-01T00:00:00
touch -a -d "$old" "$TREE/a.txt" "$TREE/d/b.txt" "$TREE/d"
want=$(date -d "$old" +%s)
atimes() { stat -c '%n %X' "$TREE/a.txt" "$TREE/d/b.txt" "$TREE/d"; }

ckpt_mount
ckpt_expect_count 1 "after the baseline"
ckpt_show HEAD a.txt >/dev/null || t_fail "the baseline lacks a.txt"
atimes | while read -r n t; do
	[ "$t" = "$want" ] || { echo "FAIL: $n: access time $t after the baseline, was $want" >&2; exit 1; }
done || t_check_fail "the baseline changed access times: $(atimes)"

# a change in a turn: its checkpoint reads the changed file again
ckpt_turn one
echo a2 >>"$TREE/a.txt"
touch -a -d "$old" "$TREE/a.txt"
ckpt_turn two
echo c >"$TREE/c.txt"
ckpt_expect_count 2 "two turns (the first one's checkpoint is the baseline's tree)"
[ "$(ckpt_show HEAD a.txt)" = "$(printf 'a\na2')" ] || t_check_fail "checkpoint 'two' lacks the change to a.txt"
atimes | while read -r n t; do
	[ "$t" = "$want" ] || { echo "FAIL: $n: access time $t after a checkpoint, was $want" >&2; exit 1; }
done || t_check_fail "a checkpoint changed access times: $(atimes)"
t_pass
