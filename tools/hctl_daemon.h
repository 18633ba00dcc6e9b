/* Asking a mounted tree's daemon to act on its store (see hctl_daemon.c). */
#pragma once

#include <cjson/cJSON.h>
#include "mounts.h"

/* 1 and m filled when tree (resolved) is mounted by a live daemon, 0 when
 * it is not mounted, -1 (message printed) when its daemon died. */
int hctl_tree_daemon(const char *tree, struct mount_info *m);
/* Send req (consumed), wait for the answer; prints the daemon's error and
 * returns an exit code. */
int hctl_daemon_call(const struct mount_info *m, cJSON *req, cJSON **resp);
/* A string member, or "". */
const char *hctl_json_str(const cJSON *o, const char *key);
