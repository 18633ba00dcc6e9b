/* The daemon's checkpoint service: the store of the mounted tree, the turn
 * machine that feeds it, the baseline at mount, and the control requests
 * (turn, checkpoint, list, diff, restore) that act on it. */
#pragma once

#include <cjson/cJSON.h>
#include "err.h"

struct hfs;
struct hfs_ckpt;
struct turns;

/* After the mount is live: load config, open the store, start the baseline
 * (or the re-validation of what changed while unmounted) in the background.
 * Fails only for a bad config; a store that cannot be used turns
 * checkpoints off loudly (log, status) and writes still go through. */
int ckptd_start(struct hfs *fs, struct herr *e);
void ckptd_stop(struct hfs *fs);

/* NULL when checkpoints are off for this tree. */
struct turns *ckptd_turns(struct hfs_ckpt *c);
/* The turn machine even while paused (over the file cap), or NULL. */
struct turns *ckptd_turns_any(struct hfs_ckpt *c);
/* Is relpath excluded from checkpoints (never tracked)? */
int ckptd_excluded(struct hfs_ckpt *c, const char *relpath, int is_dir);

void ckptd_status(struct hfs *fs, cJSON *resp);
int ckptd_ctl_turn(struct hfs *fs, const cJSON *req, cJSON *resp, struct herr *e);
int ckptd_ctl_checkpoint(struct hfs *fs, const cJSON *req, cJSON *resp, struct herr *e);
int ckptd_ctl_list(struct hfs *fs, const cJSON *req, cJSON *resp, struct herr *e);
int ckptd_ctl_diff(struct hfs *fs, const cJSON *req, cJSON *resp, struct herr *e);
int ckptd_ctl_restore(struct hfs *fs, const cJSON *req, cJSON *resp, struct herr *e);
