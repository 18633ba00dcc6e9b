#!/bin/bash
# Power cuts at every point of three unsynced checkpoints, simulated on the
# files the store wrote (this kernel has no device-mapper: no dm-flakey or
# dm-log-writes); the model is in store_power_cut.py. After each: the store
# lists, its newest checkpoint is the newest whole one, a note says what was
# lost, a restore gives exactly that checkpoint, git fsck passes.
# Then the same with every tree a loose object (as a big directory's is).
# STORE_POWER_CUT_ROUNDS (default 200), STORE_POWER_CUT_BIG_ROUNDS (100),
# STORE_POWER_CUT_SEED to repeat.
set -euo pipefail
command -v python3 git >/dev/null || exit 77
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
SEED=${STORE_POWER_CUT_SEED:-$RANDOM}
echo "# seed $SEED (STORE_POWER_CUT_SEED=$SEED to repeat)"
python3 "$SRC/tests/integration/store_power_cut.py" "$BUILD/tools/hermesctl" \
	"$(cd "$WORK" && pwd -P)" "${STORE_POWER_CUT_ROUNDS:-200}" "$SEED"
# Again with every tree written as a loose object, as a big directory's is
# (store_big.c): a loose object cut short must be found at open too.
rm -rf "${WORK:?}"/*
HERMES_STORE_BIG_MIN=1 STORE_POWER_CUT_PATHS=1 python3 "$SRC/tests/integration/store_power_cut.py" \
	"$BUILD/tools/hermesctl" "$(cd "$WORK" && pwd -P)" \
	"${STORE_POWER_CUT_BIG_ROUNDS:-100}" "$SEED"
