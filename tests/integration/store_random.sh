#!/bin/bash
# Randomized restore test: thousands of random edits, a checkpoint after
# each step, every checkpoint restored in random order and compared byte for
# byte and mode for mode with the copy taken at the time.
set -euo pipefail
command -v python3 >/dev/null || exit 77
HCTL=$BUILD/tools/hermesctl
WORK=$(mktemp -d)
# a background collection started by the last checkpoints may still be
# writing into the store: let it finish before removing everything
cleanup() {
	local l
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
