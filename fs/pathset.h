/* A set of relative paths (the dirty set of a turn). Not thread-safe: the
 * owner (turn.c) serialises access. */
#pragma once

#include <stddef.h>

struct pathset;

struct pathset *pathset_new(void);
void pathset_free(struct pathset *s);
/* Add a copy of path; 0 if added, 1 if already there, -ENOMEM. */
int pathset_add(struct pathset *s, const char *path);
size_t pathset_count(const struct pathset *s);
void pathset_clear(struct pathset *s);
/* The paths sorted, with every path below another listed one dropped (a
 * listed directory is re-read whole). The caller frees the array, not the
 * strings, which stay valid until the next add/clear/free. */
const char **pathset_minimal(const struct pathset *s, size_t *n);
