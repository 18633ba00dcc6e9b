/* Internals shared by the store*.c files (and only them: this header pulls
 * in <git2.h>). */
#pragma once

#include <git2.h>
#include <git2/sys/repository.h>
#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "store.h"
#include "paths.h"

#define STORE_TMP_PREFIX ".hermes-tmp-"
#define STORE_REF "refs/heads/main"
#define STORE_SIG_NAME "hermes"
#define STORE_SIG_EMAIL "hermes@local"

struct store_statcache;

/* Writing an object may fail when a background `git prune` removes the
 * empty objects/xx directory between libgit2's mkdir and its open; writes
 * are idempotent, so they are simply tried again. */
#define STORE_RETRY(expr)                                         \
	({                                                        \
		int store_retry_rc_;                              \
		for (int store_retry_n_ = 0;                      \
		     (store_retry_rc_ = (expr)) < 0 && store_retry_n_ < 3; \
		     store_retry_n_++)                            \
			;                                         \
		store_retry_rc_;                                  \
	})

struct store {
	git_repository *repo;
	char dir[PATH_MAX];  /* the bare repository */
	char tree[PATH_MAX]; /* the protected tree */
	char disabled[512];  /* why checkpoints are off, or "" */
	int counted_ok;      /* store_recheck found the tree under the cap */
	char *cfg_rules;              /* checkpoints.exclude, one per line */
	struct store_ignore *ignore;  /* defaults + cfg_rules + .hermesignore */
	struct timespec ignore_mtime;    /* of the .hermesignore in use */
	ino_t ignore_ino;
	int ignore_loaded;
	long long max_snapshots;
	long long max_total_bytes;
	long long max_file_bytes;
	long long max_files;
	long long baseline_bytes; /* tracked bytes counted by the baseline check */
	long long disk;           /* bytes on disk: measured, plus what we wrote since */
	int room_made;            /* a full scan made room before flushing its objects */
	mode_t umask;
	/* raw bytes written since the last collection was started */
	long long written_since_gc;
	int inflight; /* nesting depth of checkpoints writing objects */
	int stale_swept; /* leftovers of killed writers removed once */
	int inflight_fd, state_fd; /* hermes-inflight, hermes-state (or -1) */
	struct sink_backend *sink; /* owned by the odb */
	char shallow[512]; /* `shallow` as the last walk from the head read it */
	/* hermes-size as last seen: a collection rewrites it when it ends,
	 * and the odb is then opened anew (store_odb_renew) */
	ino_t collected_ino;
	struct timespec collected_mtime;
	struct store_durable *durable; /* store_durable.c */
	struct store_big *big;         /* store_big.c */
	char dropped[512]; /* what a crash lost (hermes-dropped), or "" */
};

/* A growing list of notes about files left out by the size cap. */
struct store_skips {
	char text[256];
	size_t n;
};

/* store.c */
int store_git_err(struct herr *e, int rc, const char *what);
/* HEAD commit and its tree, or both NULL when there is none yet. */
int store_head(struct store *st, git_commit **commit, git_tree **tree, struct herr *e);
/* What a checkpoint changed, as git diff --shortstat counts it. */
struct store_counts {
	size_t files, ins, del;
};
/* Commit tree_oid on top of HEAD unless equal; runs retention. counts:
 * against HEAD's tree, known by the caller, or NULL to diff the trees. */
int store_commit_tree(struct store *st, const git_oid *tree_oid,
		      const struct ckpt_meta *meta, const struct store_skips *skips,
		      const struct store_counts *counts, char out_oid[STORE_OID_HEX],
		      struct herr *e);
/* Add to n the change of one name from id a to id b, each with its mode
 * (NULL: absent); a tree on one side counts every file below it. */
int store_count_change(struct store *st, struct store_counts *n, const git_oid *a,
		       git_filemode_t ma, const git_oid *b, git_filemode_t mb);
/* git_commit_create into the sink (0 or a libgit2 error). */
int store_commit_write(struct store *st, git_oid *oid, const git_signature *author,
		       const git_signature *committer, const char *msg, const git_tree *tree,
		       size_t nparents, const git_commit *parents[]);
void store_skip_note(struct store_skips *sk, const char *relpath, long long size);
/* Reload .hermesignore when it changed. */
int store_ignore_refresh(struct store *st, int rootfd, struct herr *e);
int store_write_marker(struct store *st, const char *name, const char *text);
/* Tell background collections a checkpoint is writing objects (they keep
 * loose objects younger than its start). */
void store_inflight(struct store *st, int begin);
/* Overwrite a small state file kept open in *fd (text NULL: empty it). */
int store_state_put(struct store *st, int *fd, const char *name, const char *text);

/* git's empty tree (4b825dc): what an empty directory is recorded as */
extern const git_oid store_empty_tree;

/* Read the small text file dir/name into out (trailing newlines cut). */
int store_read_small(const char *dir, const char *name, char *out, size_t size);

/* store_durable.c: syncing off the hot path, checking at open */
int store_durable_init(struct store *st);
void store_durable_close(struct store *st);
/* A pack or index file just published: the next sync makes it durable. */
void store_durable_note(struct store *st, const char *path);
/* The ref moved to a new checkpoint (clears hermes-dropped, wakes the
 * daemon's syncer). */
void store_durable_committed(struct store *st, const git_oid *oid);
/* fsync what was noted, the ref and the directories; record the newest
 * checkpoint this process committed (nothing when it committed none). */
int store_durable_sync(struct store *st);
/* At open: repair what a power cut left half-written (see the file). */
int store_durable_check(struct store *st, struct herr *e);
/* hermes-synced for a store just made: nothing synced yet. */
int store_durable_new(const char *store_dir);

/* store_fsio.c: every raw file-system call on the tree */
/* Open relpath below rootfd without following any symlink. */
int fsio_open(int rootfd, const char *relpath, int flags);
int fsio_lstat(int rootfd, const char *relpath, struct stat *st);
/* Open the parent directory of relpath and point *base at the last
 * component. With dir_mode (not 0), missing directories are made with
 * it and files or symlinks in their way are removed. */
int fsio_open_parent(int rootfd, const char *relpath, mode_t dir_mode, const char **base);
/* write() all of buf: 0 or a negative errno (-EIO for a short write of 0) */
int fsio_write_all(int fd, const void *buf, size_t len);
/* Replace relpath with a file of this content and mode, or a symlink to
 * content when is_link; missing parents get dir_mode. Atomically (a new
 * file renamed over) unless in_place and it is a regular file of one link:
 * then it is rewritten where it is, and its holders keep the file the
 * user sees. */
int fsio_write(int rootfd, const char *relpath, const void *buf, size_t len,
	       mode_t mode, mode_t dir_mode, int is_link, int in_place);
/* Remove relpath (file, symlink or, recursively, a directory), then its
 * parent directories that became empty. */
int fsio_remove(int rootfd, const char *relpath);
int fsio_rmdir_empty_parents(int rootfd, const char *relpath);
/* Make directory relpath and its missing parents, all with dir_mode: 0
 * when a directory is there (made or not), -EEXIST when something else. */
int fsio_mkdir(int rootfd, const char *relpath, mode_t dir_mode);
/* Remove directory relpath if it is empty: 0 when done or nothing is
 * there, -ENOTEMPTY, -ENOTDIR or another negative errno when not. */
int fsio_rmdir(int rootfd, const char *relpath);
/* Hash the blob of an open file of known size and keep it for the next
 * flush unless its id is have (-EAGAIN: it changed while being read). */
int fsio_hash_fd(struct store *st, int fd, size_t size, const git_oid *have, git_oid *out);
/* The same for bytes already read. */
int fsio_hash_buf(struct store *st, const void *buf, size_t size, const git_oid *have,
		  git_oid *out);

/* store_scan.c */
/* Build a tree object of the tree's current tracked state. */
int store_scan_tree(struct store *st, int rootfd, int baseline, store_progress_fn progress,
		    void *progress_arg, git_oid *tree_oid, struct store_skips *skips,
		    struct herr *e);
/* Hash the blob of the regular file or symlink name in dirfd (sb from
 * lstat) and keep it for the next flush unless its id is have (may be
 * NULL); seen receives the stat of what was read. */
int store_hash_at(struct store *st, int dirfd, const char *name, const struct stat *sb,
		  const git_oid *have, git_oid *oid, struct stat *seen);
/* The same for a file that may be being written: one O_DIRECT read of the
 * whole file, which waits for a write() in progress (ext4 and most disk
 * filesystems), where the filesystem allows it and the file is at most
 * 64 MiB; else as store_hash_at. */
int store_hash_stable_at(struct store *st, int dirfd, const char *name,
			 const struct stat *sb, const git_oid *have, git_oid *oid,
			 struct stat *seen);
static inline git_filemode_t store_mode_of(const struct stat *sb)
{
	if (S_ISLNK(sb->st_mode))
		return GIT_FILEMODE_LINK;
	return (sb->st_mode & 0100) ? GIT_FILEMODE_BLOB_EXECUTABLE : GIT_FILEMODE_BLOB;
}
/* Baseline guard: count tracked files, fail (and turn checkpoints off)
 * above max_files. */
int store_baseline_check(struct store *st, int rootfd, struct herr *e);

/* store_big.c: trees of STORE_BIG_MIN bytes or more (a directory of some
 * 7,000 entries) are hashed chunk by chunk, written as loose objects, and
 * the last few kept in memory, entries indexed, for the next checkpoint. */
#define STORE_BIG_MIN ((size_t)256 << 10)
struct store_big;
struct store_obj;
int store_big_init(struct store *st);
void store_big_free(struct store *st);
/* The size from which a tree is big (HERMES_STORE_BIG_MIN for tests). */
size_t store_big_min(const struct store *st);
/* The id of big tree o (data, len), its chunk sums into o->sums. */
int store_big_hash(struct store *st, struct store_obj *o);
/* Write big tree o as a loose object, then keep it (its data, ents and
 * sums move here; o is left empty). */
int store_big_write(struct store *st, struct store_obj *o, struct herr *e);
/* A buffer of size bytes for a big tree or its entries (malloc'ed: one a
 * kept tree let go when there is one). */
void *store_big_alloc(struct store *st, size_t size);
/* A kept tree's bytes, for the sink's reads (NULL: not kept). */
const struct store_obj *store_big_find(const struct store *st, const git_oid *oid);
/* After a power cut: verify the loose objects written since ns (less
 * slack); the damaged ones go to objects/pack/lost/. The number moved. */
int store_big_verify_loose(struct store *st, long long since_ns);

/* A tree's entries, from libgit2 or from a big tree kept here (which
 * needs no read, inflate and parse of megabytes). */
struct store_tent {
	const char *name; /* NUL-terminated */
	size_t len;
	git_filemode_t mode;
	git_oid oid;
};
struct big_tree;
struct store_tview {
	git_tree *t;
	struct big_tree *b;
};
/* 0, -EIO (no such tree, or unreadable) or -ENOMEM. */
int store_tv_lookup(struct store *st, const git_oid *oid, struct store_tview *out);
/* A view of a tree the caller holds (taken with a reference of its own). */
int store_tv_of(const git_tree *t, struct store_tview *out);
void store_tv_free(struct store_tview *tv);
size_t store_tv_count(const struct store_tview *tv);
void store_tv_at(const struct store_tview *tv, size_t i, struct store_tent *out);
/* 1 and the entry, or 0: no entry of that name. */
int store_tv_byname(const struct store_tview *tv, const char *name, size_t len,
		    struct store_tent *out);
static inline int store_tent_is_tree(const struct store_tent *te)
{
	return te->mode == GIT_FILEMODE_TREE;
}
/* A kept tree's bytes and entry offsets (NULL: tv is libgit2's). */
const struct store_obj *store_tv_big(const struct store_tview *tv);
/* Entry i of a kept tree, and the first entry not before name (as a
 * tree or not) in git's order. */
void store_big_ent(const struct store_obj *o, size_t i, struct store_tent *out);
size_t store_big_lower(const struct store_obj *o, const char *name, size_t len, int tree);

/* store_lookup.c: entries of one tree by path, each directory's tree read
 * once for the life of the lookup (git_tree_entry_bypath reads every tree
 * on the path again, and libgit2's cache may have dropped them) */
struct store_lookup;
/* root stays the caller's and must outlive the lookup. */
int store_lookup_new(struct store *st, const git_tree *root, struct store_lookup **out);
void store_lookup_free(struct store_lookup *lk);
/* 1 and the entry at a normalised relative path, or 0. */
int store_lookup_entry(struct store_lookup *lk, const char *path, struct store_tent *out);
/* The tree at path[0..len) ("" is the root), or NULL when nothing or no
 * tree stands there; valid until store_lookup_free. */
const struct store_tview *store_lookup_tree_n(struct store_lookup *lk, const char *path,
					      size_t len);
const struct store_tview *store_lookup_tree(struct store_lookup *lk, const char *path);
/* 0, or the first failure (-ENOMEM, -EIO: a tree could not be read) that
 * made a lookup answer NULL. */
int store_lookup_error(const struct store_lookup *lk);

/* store_chain.c: walking the chain newest to oldest. It ends at the first
 * commit or at the oldest kept one, named in `shallow` (which git reads as
 * a commit without parents): trimming moves that mark, never rewrites. */
/* Read `shallow` again; is id where the chain ends? */
int store_chain_load(struct store *st);
int store_chain_is_end(const struct store *st, const git_oid *id);
/* HEAD, with `shallow` read again for the walk that starts there. */
int store_chain_head(struct store *st, git_commit **head, struct herr *e);
/* The parent of c in the chain, or NULL where the chain ends. */
int store_chain_parent(struct store *st, const git_commit *c, git_commit **parent,
		       struct herr *e);
/* Make oldest the oldest kept checkpoint; -EAGAIN (no message) when
 * another process moved the mark since store_chain_head or holds its lock. */
int store_chain_cut(struct store *st, const git_oid *oldest, struct herr *e);

/* store_ignore.c: the rules on this path only (its parents known clean) */
int store_ignore_match_leaf(const struct store_ignore *ig, const char *relpath, int is_dir);
/* Verdicts of store_ignore_foreign_dir on the directories of one
 * checkpoint or restore, by path (NULL works, uncached). */
struct store_foreign;
struct store_foreign *store_foreign_new(void);
void store_foreign_free(struct store_foreign *f);
/* Does relpath lie in a foreign directory of the tree at rootfd (with
 * parents_known, its parents were found not to be), or is it one
 * (is_dir)? The root never is. */
int store_foreign_match(struct store_foreign *f, int rootfd, const char *relpath, int is_dir,
			int parents_known);

/* store_pack.c: one packfile for the many blobs of a first baseline */
struct store_pack;
/* level: zlib level (Z_NO_COMPRESSION for a checkpoint's few objects: the
 * background repack compresses them, off the checkpoint's path) */
int store_pack_begin(struct store *st, int level, struct store_pack **out);
/* Add the blob read from fd (size bytes; -EAGAIN when it changed). */
int store_pack_add_fd(struct store_pack *p, int fd, size_t size, git_oid *oid);
int store_pack_add_buf(struct store_pack *p, const void *buf, size_t len, git_oid *oid);
/* An object whose id libgit2 already computed. */
int store_pack_add_object(struct store_pack *p, git_object_t type, const void *buf, size_t len,
			  const git_oid *oid);
/* Refuse (-EFBIG) to grow past this many bytes. */
void store_pack_limit(struct store_pack *p, unsigned long long bytes);
unsigned long long store_pack_size(const struct store_pack *p);
/* Write the .pack and .idx into objects/pack and make them visible. */
int store_pack_finish(struct store_pack *p, struct herr *e);
void store_pack_abort(struct store_pack *p);

/* One object held in memory until it is written into a pack (or, a big
 * tree, as a loose object: store_big.c). */
struct big_sums;
struct store_obj {
	git_oid oid;
	git_object_t type;
	size_t len;
	unsigned char *data;
	uint32_t *ents; /* a big tree: the offset of each entry, */
	size_t nents;
	struct big_sums *sums; /* and the checksums of its chunks */
};
/* Free what o holds (not o). */
void store_obj_release(struct store_obj *o);

/* Write these objects as one uncompressed pack with its index and make
 * them visible. */
int store_pack_write_objects(struct store *st, const struct store_obj *v, size_t n,
			     struct herr *e);

/* store_sink.c: objects written during an operation stay in memory and
 * reach the disk as one pack at store_sink_flush(), before any ref moves */
int store_sink_install(struct store *st);
int store_sink_flush(struct store *st, struct herr *e);
/* The git id of an object (SHA-1 of "type len\0" + content). */
int store_object_id(git_object_t type, const void *buf, size_t len, git_oid *oid);
/* Hash an object and keep it for the next flush, without going through
 * git_odb_write (see store_sink.c for why). */
int store_sink_put(struct store *st, git_object_t type, const void *buf, size_t len,
		   git_oid *oid);
/* The same for a malloc'ed buf, which the sink takes (a big tree is not
 * copied once more); freed on failure too. */
int store_sink_give(struct store *st, git_object_t type, void *buf, size_t len, git_oid *oid);
/* A tree so given, with the offset of each of its n entries (ents, taken
 * too: kept with a big tree, freed with a small one). */
int store_sink_give_tree(struct store *st, void *buf, size_t len, uint32_t *ents, size_t n,
			 git_oid *oid);
/* The same for an object whose id the caller computed. */
int store_sink_keep(struct store *st, git_object_t type, const void *buf, size_t len,
		    const git_oid *oid);
/* Set the objects waiting aside (a retention pass commits and flushes in
 * between) and bring them back (NULL: out of memory, nothing set aside). */
void *store_sink_stash(struct store *st);
void store_sink_unstash(struct store *st, void *saved);
/* Forget the objects waiting (the tree they were for is stored already). */
void store_sink_discard(struct store *st);
/* Bytes of the objects waiting for the next flush. */
size_t store_sink_bytes(const struct store *st);

/* store_prune.c */
/* Open the object database again (keeping the objects waiting in the
 * sink): a collection replaced packs that libgit2 still lists. */
int store_reopen_odb(struct store *st, struct herr *e);
int store_prune_after_commit(struct store *st, struct herr *e);
/* Before writing need bytes: when the store would pass max_total_size_mb,
 * drop the oldest checkpoints and collect now until it fits; *trimmed
 * tells that the chain was rewritten (the caller reads HEAD again).
 * -ENOSPC when even the newest checkpoint alone leaves no room. */
int store_prune_make_room(struct store *st, long long need, int *trimmed, struct herr *e);
