#!/bin/bash
# A checkpoint measuring the store while a collection empties and removes
# objects/xx directories (git prune-packed, as the background gc runs it)
# must not take the store for one over its cap: the walk used to give up on
# a directory that vanished, and the checkpoint then trimmed a quarter of
# the history. Every checkpoint taken must still be listed at the end.
# shellcheck source=tests/integration/store_lib.sh
. "$SRC/tests/integration/store_lib.sh"
command -v git >/dev/null || exit 77
N=${STORE_DU_RACE_CHECKPOINTS:-300}
printf 'checkpoints:\n  max_snapshots: 100000\n  max_total_size_mb: 1000\n' >"$HERMES_HOME/config.yaml"
echo 0 >"$TREE/f.txt"
expect 0 checkpoint -C "$TREE" -m c0
S=$(store_dir)
(
	while [ ! -e "$WORK/stop" ]; do
		mkdir -p "$S"/objects/{0,1,2,3,4,5,6,7,8,9,a,b,c,d,e,f}{0,1,2,3,4,5,6,7,8,9,a,b,c,d,e,f} 2>/dev/null
		git --git-dir="$S" prune-packed -q 2>/dev/null
	done
) &
churn=$!
for i in $(seq 1 "$N"); do
	echo "$i" >"$TREE/f.txt"
	"$HCTL" checkpoint -C "$TREE" -m "c$i" >/dev/null 2>"$WORK/err" ||
		{ touch "$WORK/stop"; wait "$churn"; fail "checkpoint $i: $(cat "$WORK/err")"; }
done
touch "$WORK/stop"
wait "$churn"
have=$(git --git-dir="$S" rev-list --count HEAD)
[ ! -e "$S/shallow" ] || fail "the chain was cut at $(cat "$S/shallow") ($have of $((N + 1)) left)"
[ "$have" = $((N + 1)) ] || fail "$have checkpoints of $((N + 1)) are left"
ok "$N checkpoints beside a collection removing object directories: none trimmed"
