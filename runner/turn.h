/* Telling the hermesfs daemon of the tree a job runs in that a turn
 * begins, so the job's first change is checkpointed before it lands. */
#pragma once

#include "err.h"

/* cwd: absolute, resolved. 0 when cwd is in no mounted tree or the turn
 * was marked (or the daemon does not know "turn" yet); a negative errno
 * with e filled when the tree's daemon is dead or refused. */
int turn_mark(const char *cwd, const char *reason, struct herr *e);
