#!/bin/bash
# The daemon makes each checkpoint durable a moment after it, off the hot
# path: hermes-synced names the head within seconds of a turn's first
# write, and after a clean unmount it names the last checkpoint. (What the
# record is for: store_power_cut.sh.)
. "$SRC/tests/integration/ckpt_lib.sh"
ckpt_init
ckpt_config
echo one >"$TREE/f.txt"
ckpt_mount
synced_is_head() {
	[ "$(cut -d' ' -f1 "$STORE/hermes-synced" 2>/dev/null)" = "$(git --git-dir="$STORE" rev-parse HEAD 2>/dev/null)" ]
}
t_wait_for 5 synced_is_head || t_check_fail "the baseline was not synced: $(cat "$STORE/hermes-synced")"
for i in 1 2 3; do
	ckpt_turn "turn $i"
	echo "$i" >>"$TREE/f.txt"
done
ckpt_expect_count 3 "after three turns"
t_wait_for 5 synced_is_head ||
	t_check_fail "the newest checkpoint was not synced within 5 s: $(cat "$STORE/hermes-synced") vs $(git --git-dir="$STORE" rev-parse HEAD)"
t_umount "$TREE"
synced_is_head || t_check_fail "after unmount the record is not the head"
t_pass
