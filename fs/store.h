/* The checkpoint store: a bare git repository per protected tree under
 * $HERMES_HOME/checkpoints/<id>/. The only module that includes <git2.h>. */
#pragma once

#include "err.h"

struct store;
