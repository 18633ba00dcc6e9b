#!/bin/bash
# POSIX battery as uid 65534 on an in-place mount with the kernel writeback
# cache on (-o writeback), against the same battery on a plain directory.
# shellcheck source=tests/integration/lib.sh
. "$SRC/tests/integration/lib.sh"
# shellcheck source=tests/integration/posix_lib.sh
. "$SRC/tests/integration/posix_lib.sh"
posix_compare nobody inplace -o writeback
