#!/bin/bash
# A rollback on an unmounted tree keeps files no checkpoint holds, refuses
# bad requests before its safety checkpoint, and makes directories with the
# user's umask (restore_safety_lib.sh says what and why).
# shellcheck source=tests/integration/ckpt_lib.sh
. "$SRC/tests/integration/ckpt_lib.sh"
# shellcheck source=tests/integration/restore_safety_lib.sh
. "$SRC/tests/integration/restore_safety_lib.sh"
ckpt_init
ckpt_config "turn_idle_ms: 0" "max_snapshots: 100000" "max_file_size_mb: 1"
rs_run
t_pass
