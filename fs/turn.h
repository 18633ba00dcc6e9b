/* Turns: the first mutation of a turn waits until the tree as it was is
 * checkpointed; later mutations only mark paths. Mutations run under a
 * shared lock, checkpoints under the exclusive one, so a checkpoint always
 * sees a tree no operation is halfway through changing. */
#pragma once

#include <stddef.h>
#include <sys/types.h>
#include <cjson/cJSON.h>

#include "err.h"

#define TURN_MAX_WHO 32

struct turn_who {
	pid_t pid;
	uid_t uid;
	char comm[17];
	unsigned changes;
};

struct turn_checkpoint_req {
	const char *reason;
	/* paths changed since the previous checkpoint, minimal (a listed
	 * directory is to be re-read whole; a missing path was removed) */
	const char *const *paths;
	size_t npaths;
	int full_scan; /* re-validate everything with the stat cache */
	const struct turn_who *who; /* the processes that made those changes */
	size_t nwho;
	/* live files (below), sorted: they may be written as they are read */
	const char *const *live;
	size_t nlive;
};

/* Commit a checkpoint; 0, 1 when the tree had not changed (no commit), or a
 * negative errno with e filled. Called with every mutation held off. */
typedef int (*turn_checkpoint_fn)(void *arg, const struct turn_checkpoint_req *req,
				  struct herr *e);

struct turns;

/* idle_ms > 0: a mutation after that long without one starts a new turn. */
struct turns *turns_new(turn_checkpoint_fn fn, void *arg, long idle_ms);
void turns_free(struct turns *t);

/* Start a turn explicitly; the next mutation checkpoints first. */
void turns_begin(struct turns *t, const char *reason);
/* Require a full re-validation at the next checkpoint (mount, hard links). */
void turns_need_full_scan(struct turns *t);

/* Bracket every mutating operation. enter may block for a checkpoint. */
void turns_enter(struct turns *t, pid_t pid, uid_t uid);
/* The same for the second half of one write() that the kernel split into
 * two requests at a page boundary: it never starts a pending checkpoint,
 * so no checkpoint shows the write torn. */
void turns_enter_ex(struct turns *t, pid_t pid, uid_t uid, int continuation);
/* +1 when a write stopped on a page boundary mid-page (its write() may go
 * on in the next request), -1 when that inode's next write came: no
 * checkpoint is taken between the two (for a few ms at most). */
void turns_split(struct turns *t, int delta);
void turns_mark(struct turns *t, const char *relpath);
void turns_exit(struct turns *t);

/* Checkpoint now (hermesctl checkpoint, baseline at mount): waits for
 * running mutations, commits what changed since the last one. */
int turns_checkpoint_now(struct turns *t, const char *reason, struct herr *e);

/* Hold every mutation off (waiting for those running) until release: a
 * restore takes its safety checkpoint and writes the tree below as one
 * step, so no write falls between the two. turns_mark works meanwhile.
 * Live files are written without the gate: it waits up to 1 s for them
 * to close, and returns how many are open still. */
int turns_hold(struct turns *t);
/* With the hold: commit what changed since the last checkpoint (as
 * turns_checkpoint_now does). */
int turns_checkpoint_held(struct turns *t, const char *reason, struct herr *e);
void turns_release(struct turns *t);
/* Generation of the dirty set: changes once per committed checkpoint. A
 * path marked in the current epoch need not be marked again. */
unsigned long long turns_epoch(struct turns *t);

/* Files written behind the gate: writable passthrough handles, whose
 * writes the kernel sends to the disk below without us. While any are
 * open ("live"), a turn that begins is checkpointed at once rather than
 * at its first change (which may never reach us), every checkpoint
 * re-reads the live files, and a watcher polls them to tell when they
 * change, for the idle rule. */
struct turns_live_ops {
	/* mark every live file dirty (turns_mark); their paths, in an array
	 * of strings that the caller frees, all of it */
	size_t (*mark_all)(void *arg, struct turns *t, char ***paths);
	/* mark (and turns_note) the live files changed since the last poll;
	 * how many did */
	int (*poll)(void *arg, struct turns *t);
};
void turns_live_setup(struct turns *t, const struct turns_live_ops *ops, void *arg);
/* +1 when a live handle opens (inside turns_enter/turns_exit), -1 when it
 * is released */
void turns_live_add(struct turns *t, int delta);
/* A change seen after the fact: by whom, and that it happened now. */
void turns_note(struct turns *t, pid_t pid, uid_t uid);

/* Counters and state for the control socket's status answer. */
void turns_status(struct turns *t, cJSON *out);
/* The processes that changed the tree since the last checkpoint. */
cJSON *turns_who_json(struct turns *t);
