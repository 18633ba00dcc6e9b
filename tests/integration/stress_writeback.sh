#!/bin/bash
# The concurrent stress run with the kernel writeback cache (-o writeback):
# same guarantees as stress_concurrent.sh.
# shellcheck source=tests/integration/lib.sh
. "$SRC/tests/integration/lib.sh"
# shellcheck source=tests/integration/stress_lib.sh
. "$SRC/tests/integration/stress_lib.sh"
stress_run -o writeback
