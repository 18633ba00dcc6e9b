#!/bin/bash
# The daemon's big-tree path (store_big.c: trees kept between checkpoints,
# spliced, written loose) under concurrent writers, turns and rollbacks:
# ckpt_concurrent.sh and ckpt_rollback_writers.sh again with every tree
# taken for a big one, so that their directories of a few entries take it.
set -euo pipefail
export HERMES_STORE_BIG_MIN=1
for t in ckpt_concurrent.sh ckpt_rollback_writers.sh; do
	echo "# $t with every tree big"
	bash "$SRC/tests/integration/$t" || { echo "FAIL: $t with HERMES_STORE_BIG_MIN=1" >&2; exit 1; }
done
