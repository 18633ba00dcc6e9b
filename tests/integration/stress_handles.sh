#!/bin/bash
# The concurrent stress run with file handles instead of fds for every
# file (-o fd_budget=0), and few of their fds kept for reuse (handle_fds=8,
# so they are closed and reopened all the time): same guarantees as
# stress_concurrent.sh.
# shellcheck source=tests/integration/lib.sh
. "$SRC/tests/integration/lib.sh"
# shellcheck source=tests/integration/stress_lib.sh
. "$SRC/tests/integration/stress_lib.sh"
stress_run -o fd_budget=0,handle_fds=8
