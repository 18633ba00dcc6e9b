#!/bin/bash
# Randomized restore test: thousands of random edits, a checkpoint after
# each step, every checkpoint restored in random order and compared byte for
# byte and mode for mode with the copy taken at the time. Then the same with
# the store kept open between checkpoints and every tree a big one.
set -euo pipefail
command -v python3 >/dev/null || exit 77
HCTL=$BUILD/tools/hermesctl
WORK=$(mktemp -d)
# a background collection started by the last checkpoints may still be
# writing into the store: let it finish before removing everything
cleanup() {
	local rc=$? l
	if [ "$rc" != 0 ] && [ -n "${STORE_RANDOM_KEEP:-}" ]; then
		echo "# kept $WORK" >&2
		return
	fi
	for l in "$WORK"/home/checkpoints/*/gc.lock; do
		[ -e "$l" ] && timeout 120 flock "$l" true
	done
	rm -rf "$WORK"
}
trap cleanup EXIT
export HERMES_HOME=$WORK/home
mkdir -p "$HERMES_HOME" "$WORK/tree"
printf 'checkpoints:\n  max_snapshots: 100000\n  max_total_size_mb: 100000\n' >"$HERMES_HOME/config.yaml"
SEED=${STORE_RANDOM_SEED:-$RANDOM}
echo "# seed $SEED (STORE_RANDOM_SEED=$SEED to repeat)"
python3 "$SRC/tests/integration/store_random.py" "$HCTL" "$(cd "$WORK/tree" && pwd -P)" "$SEED" \
	"${STORE_RANDOM_ROUNDS:-6}" "${STORE_RANDOM_STEPS:-80}"
# Again with one process keeping the store open across the checkpoints of
# changed paths, as the daemon does, and every tree taken for a big one
# (store_big.c: kept between checkpoints, spliced, written loose): the path
# a directory of thousands of entries takes.
for l in "$HERMES_HOME"/checkpoints/*/gc.lock; do
	[ -e "$l" ] && timeout 120 flock "$l" true
done
rm -rf "$WORK/tree" "$HERMES_HOME/checkpoints"
mkdir -p "$WORK/tree"
HERMES_STORE_BIG_MIN=1 STORE_RANDOM_STEPS_DRIVER=$BUILD/tests/integration/store_steps \
	python3 "$SRC/tests/integration/store_random.py" "$HCTL" "$(cd "$WORK/tree" && pwd -P)" \
	"$SEED" "${STORE_RANDOM_BIG_ROUNDS:-3}" "${STORE_RANDOM_STEPS:-80}"
