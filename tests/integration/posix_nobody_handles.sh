#!/bin/bash
# POSIX battery as nobody on an in-place mount that keeps a file handle instead
# of an O_PATH fd for every non-directory (-o fd_budget=0), so that every
# operation goes through the handle path, against a plain directory.
# shellcheck source=tests/integration/lib.sh
. "$SRC/tests/integration/lib.sh"
# shellcheck source=tests/integration/posix_lib.sh
. "$SRC/tests/integration/posix_lib.sh"
posix_compare nobody inplace -o fd_budget=0
