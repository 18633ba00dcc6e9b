/* Runner: placeholder until the runner issue lands. */
#include "runner.h"
