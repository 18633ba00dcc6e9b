#!/bin/bash
# POSIX battery as root on an in-place mount that answers every opendir with
# a directory handle of its own (-o dir_handles) instead of letting the
# kernel open directories without asking, against a plain directory: both
# ways of reading a directory must list, seek and rewind alike.
# shellcheck source=tests/integration/lib.sh
. "$SRC/tests/integration/lib.sh"
# shellcheck source=tests/integration/posix_lib.sh
. "$SRC/tests/integration/posix_lib.sh"
posix_compare root inplace -o dir_handles
