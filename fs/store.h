/* The checkpoint store: a bare git repository per protected tree under
 * $HERMES_HOME/checkpoints/<id>/. The only module that includes <git2.h>.
 *
 * Layout of a store directory (plain `git --git-dir=DIR log` reads it):
 *   HEAD -> refs/heads/main   the chain of checkpoints, newest first
 *   config                    written by us; user/system git config is never read
 *   hermes-tree               the absolute path of the protected tree
 *   hermes-disabled           present when checkpoints are off for the tree (why)
 *   hermes-statcache          stat cache of the last full scan
 *   hermes-size               bytes on disk measured by the last garbage collection
 *   hermes-state              "<checkpoints> <bytes written> <checkpoints dropped>",
 *                             the last two since the last collection
 *   gc.lock                   held (flock) by a running background collection
 *
 * Each checkpoint is one commit whose parent is the previous one; author and
 * committer are "hermes <hermes@local>", the message is the reason followed
 * by trailers (Hermes-Files, Hermes-Insertions, Hermes-Deletions,
 * Hermes-Processes, Hermes-Skipped) so a listing never recomputes a diff.
 *
 * Relative paths given to and returned by the store use '/' separators and
 * never start with '/' or contain "." or ".." components. rootfd is an open
 * directory fd of the tree (or of its mount); the store reads and writes the
 * tree only through it, never through a git workdir.
 *
 * A struct store is used by one thread at a time. */
#pragma once

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include "err.h"

struct store;
struct config;

#define STORE_OID_HEX 41
/* Returned (positive) by the checkpoint functions when the tree equals the
 * previous checkpoint: no commit is made. */
#define STORE_UNCHANGED 1

struct ckpt_proc {
	pid_t pid;
	uid_t uid;
	char comm[32];
};

/* What the caller knows about a checkpoint it asks for. */
struct ckpt_meta {
	const char *reason;            /* one line; NULL means "checkpoint" */
	long long time;                /* unix seconds; 0 means now */
	const struct ckpt_proc *procs; /* who caused the changes (may be NULL) */
	size_t nprocs;
	/* files that may be written while we read them (open for writing
	 * straight to the disk, fs/turn.h), sorted: read whole in one call
	 * that waits for a write() in progress */
	const char *const *live;
	size_t nlive;
};

/* The Hermes-Processes trailer as written, so a listing gets it whole. */
#define STORE_WHO_MAX 1024

/* One checkpoint as listed, newest first (number 1 is the newest). */
struct ckpt_info {
	char oid[STORE_OID_HEX];
	long long time;
	char reason[256];
	char who[STORE_WHO_MAX]; /* "vim[1234] uid=1000, bash[99] uid=1000" or "" */
	char skipped[256]; /* files left out by the size cap, or "" */
	int files, insertions, deletions;
};

/* Progress of a full scan, for a tty indicator. */
typedef void (*store_progress_fn)(void *arg, size_t files, unsigned long long bytes);

/* Open the store of tree_abspath (absolute, resolved), creating it on first
 * use. cfg may be NULL (defaults). Refuses / and the home directory. */
int store_open(const char *tree_abspath, const struct config *cfg, struct store **out,
	       struct herr *e);
/* Open an existing store directory without creating anything (for
 * status/prune of all stores). */
int store_open_dir(const char *store_dir, const struct config *cfg, struct store **out,
		   struct herr *e);
void store_close(struct store *st);

const char *store_tree_path(const struct store *st);
const char *store_dir(const struct store *st);
/* Why checkpoints are off for this tree (over the file cap), else NULL. */
const char *store_disabled_reason(const struct store *st);
/* Make checkpoints durable in a thread of the store's own, a moment after
 * each (the daemon); without it, store_close() does it (a command). */
int store_sync_in_background(struct store *st);
/* What a crash (a power cut) lost, as the store was opened after it, until
 * the next checkpoint; else NULL. */
const char *store_dropped_note(const struct store *st);
/* For a tree without checkpoints yet (or one the cap turned them off
 * for): count its files against checkpoints.max_files, as cfg (NULL: as
 * opened) now says, and say so in store_disabled_reason. Bounded by the
 * cap, not by the tree. 0 (under it), -EFBIG (over it, e says why and
 * what to do) or another negative errno. */
int store_recheck(struct store *st, int rootfd, const struct config *cfg, struct herr *e);
/* A daemon serves the tree: hermes-mounted (its pid) stays in the store
 * until store_mount_end() at a clean unmount, so that the next mount can
 * tell a daemon that died (kill -9, a crash, a power loss) from one that
 * finished. 1 when the previous daemon died, 0 when not, or -errno. */
int store_mount_begin(struct store *st);
void store_mount_end(struct store *st);
/* The directory of the store that tree_abspath would have. */
int store_dir_for_tree(const char *tree_abspath, char *out, size_t size);
/* Does a store exist for exactly this tree? */
int store_exists_for_tree(const char *tree_abspath);

/* Checkpoint after a change of exactly these paths (files, symlinks or
 * directories, existing or deleted; a directory is taken with everything
 * below it). Costs O(paths given), not O(tree). Without a previous
 * checkpoint it falls back to a full scan. out_oid receives the new commit.
 * Returns 0, STORE_UNCHANGED or a negative errno. */
int store_checkpoint_paths(struct store *st, int rootfd, const char *const *relpaths,
			   size_t n, const struct ckpt_meta *meta,
			   char out_oid[STORE_OID_HEX], struct herr *e);
/* Checkpoint the whole tree with a full scan; a stat cache avoids reading
 * files that did not change. progress may be NULL. */
int store_checkpoint_scan(struct store *st, int rootfd, const struct ckpt_meta *meta,
			  store_progress_fn progress, void *progress_arg,
			  char out_oid[STORE_OID_HEX], struct herr *e);

/* The checkpoints, newest first (caller frees *out). */
int store_list(struct store *st, struct ckpt_info **out, size_t *n, struct herr *e);
/* Resolve a list number ("3") or a hash prefix (4-64 hex, unique among the
 * listed checkpoints) to a full commit id. -ERANGE out of range, -EINVAL
 * malformed, -ENOENT unknown, -EEXIST ambiguous. */
int store_resolve(struct store *st, const char *spec, char out_oid[STORE_OID_HEX],
		  struct herr *e);

struct store_diff_opts {
	const char *const *paths; /* limit to these (NULL: everything) */
	size_t npaths;
	int color;
	int stat_only;
};
/* What changed in the tree since checkpoint oid: a --stat summary, then a
 * unified diff, written to out. rootfd < 0 compares with the newest
 * checkpoint instead of scanning. Returns the number of files that differ. */
int store_diff(struct store *st, int rootfd, const char *oid,
	       const struct store_diff_opts *o, FILE *out, struct herr *e);

/* What a restore did. kept: paths it left as they were because the
 * safety checkpoint does not hold them (a file over the size cap, or one
 * made after that checkpoint): writing over them would destroy the only
 * copy, and the undo could not bring them back. */
struct store_restore_out {
	size_t changed; /* paths written or removed */
	char **kept;
	size_t nkept;
	char **paths; /* with hooks->want_paths: the paths written or removed */
	size_t npaths;
};

/* What a mounted tree's daemon asks of a restore (NULL: nothing). */
struct store_restore_hooks {
	int want_paths; /* name the changed paths in the out struct */
	/* Is the file (dev, ino) open for writing? Such a file is rewritten
	 * in place, so its writers go on in the file the user sees (any other
	 * is replaced whole: a reader sees the old or the new content). */
	int (*in_use)(void *arg, dev_t dev, ino_t ino);
	/* The restore replaced or removed the file (dev, ino: the old one);
	 * nlink > 1: it has other names still. */
	void (*replaced)(void *arg, dev_t dev, ino_t ino, nlink_t nlink);
	void *arg;
};
void store_restore_out_free(struct store_restore_out *o);

/* Check a restore request before its safety checkpoint is taken, so a
 * typo does not add a checkpoint (and renumber the list): each path must
 * be in checkpoint oid, in the newest checkpoint, or on the disk. */
int store_restore_check(struct store *st, int rootfd, const char *oid,
			const char *const *paths, size_t npaths, struct herr *e);

/* Make the tracked part of the tree equal to checkpoint oid: everything
 * (paths NULL) or only the given paths (files or directories). Excluded
 * paths are never touched, nor (see kept) paths the newest checkpoint
 * lacks. The caller takes the safety checkpoint first. Files and
 * directories it makes get 0666/0777 less umask (a file that is there
 * keeps its permissions). */
int store_restore(struct store *st, int rootfd, const char *oid,
		  const char *const *paths, size_t npaths, mode_t umask,
		  const struct store_restore_hooks *hooks, struct store_restore_out *out,
		  struct herr *e);

/* Retention: keep at most max_snapshots checkpoints (after each checkpoint
 * the chain is trimmed to 90% of it once it is exceeded, so the chain is
 * rewritten rarely) and max_total_size_mb on disk. wait=0 trims the chain and starts a background collection;
 * wait=1 collects in the foreground and repeats until under the caps.
 * (Every checkpoint applies retention by itself, cheaply.) */
int store_prune(struct store *st, int wait, struct herr *e);
/* Bytes the store directory takes on disk now. */
long long store_disk_usage(const char *store_dir);
/* Remove a whole store directory. */
int store_destroy(const char *store_dir, struct herr *e);

/* The exclusion matcher (defaults + config + .hermesignore), exposed for
 * tests and for the filesystem's dirty tracking. */
struct store_ignore;
int store_ignore_new(struct store_ignore **out);
/* Add rules from text in gitignore syntax (one per line). */
int store_ignore_add_text(struct store_ignore *ig, const char *text, size_t len);
int store_ignore_add_rule(struct store_ignore *ig, const char *rule);
void store_ignore_add_defaults(struct store_ignore *ig);
/* Is relpath excluded, considering its parent directories too? */
int store_ignore_match(const struct store_ignore *ig, const char *relpath, int is_dir);
void store_ignore_free(struct store_ignore *ig);
/* Is the directory at dirfd (O_PATH will do) a git repository or a
 * virtualenv, excluded wherever it is and whatever its name? */
int store_ignore_foreign_dir(int dirfd);
/* Can creating or removing name in a directory change that answer? */
int store_ignore_foreign_name(const char *name);
/* Is relpath excluded in this store's current rules? */
int store_is_excluded(struct store *st, int rootfd, const char *relpath, int is_dir);
