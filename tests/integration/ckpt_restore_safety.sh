#!/bin/bash
# The same rollback safety as store_restore_safety.sh, through a mount: the
# daemon restores, so the checks see what it did with the user's request.
# shellcheck source=tests/integration/ckpt_lib.sh
. "$SRC/tests/integration/ckpt_lib.sh"
# shellcheck source=tests/integration/restore_safety_lib.sh
. "$SRC/tests/integration/restore_safety_lib.sh"
ckpt_init
ckpt_config "turn_idle_ms: 0" "max_snapshots: 100000" "max_file_size_mb: 1"
ckpt_mount
rs_run
t_pass
