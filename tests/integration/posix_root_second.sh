#!/bin/bash
# POSIX battery as root on a hermesfs mount (second) against a plain directory:
# every check must print exactly what it prints on the disk below.
# shellcheck source=tests/integration/lib.sh
. "$SRC/tests/integration/lib.sh"
# shellcheck source=tests/integration/posix_lib.sh
. "$SRC/tests/integration/posix_lib.sh"
posix_compare root second
