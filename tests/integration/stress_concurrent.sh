#!/bin/bash
# Four processes change one tree at random through an in-place mount
# (replace-by-rename, verified reads, links, symlinks, directory renames,
# readdir): no unexplained error, no torn file, the daemon stays up, and
# the tree seen through the mount equals the disk below afterwards.
# shellcheck source=tests/integration/lib.sh
. "$SRC/tests/integration/lib.sh"
# shellcheck source=tests/integration/stress_lib.sh
. "$SRC/tests/integration/stress_lib.sh"
stress_run "$@"
