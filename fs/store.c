/* Checkpoint store: placeholder until the store issue lands. */
#include "store.h"
