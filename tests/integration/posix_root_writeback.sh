#!/bin/bash
# POSIX battery as root on an in-place mount with the kernel writeback
# cache on (-o writeback): it must still print what the disk below prints.
# shellcheck source=tests/integration/lib.sh
. "$SRC/tests/integration/lib.sh"
# shellcheck source=tests/integration/posix_lib.sh
. "$SRC/tests/integration/posix_lib.sh"
posix_compare root inplace -o writeback
