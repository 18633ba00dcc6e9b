/* Dirty tracking hooks for the FUSE ops: turn a mutation of an inode or a
 * name into relative paths, drop excluded ones (by the rules, or inside a
 * git repository or virtualenv), and bracket the operation with the turn
 * gate so a checkpoint never sees it half done. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>

#include "ckptd.h"
#include "hfs.h"
#include "store.h"
#include "turn.h"

/* hfs_inode.dir_kind: the verdict in the low bits, a generation above */
enum { TRACK_DIR_UNKNOWN, TRACK_DIR_PLAIN, TRACK_DIR_FOREIGN };
#define TRACK_DIR_MASK 3u
#define TRACK_DIR_GEN 4u
/* directories judged per walk of the parent chain, and walks per question:
 * deeper unknown chains are left to the store, which judges again */
#define TRACK_WALK_TAKE 16
#define TRACK_WALK_ROUNDS 4

static struct turns *track_turns(struct hfs *fs)
{
	return fs->ckpt ? ckptd_turns(fs->ckpt) : NULL;
}

/* Join dir's path and name; 0, or -ENAMETOOLONG. */
static int name_path(struct hfs *fs, struct hfs_inode *dir, const char *name, char *out,
		     size_t size)
{
	char dp[PATH_MAX];
	int r = inode_path(fs, dir, dp, sizeof(dp));

	if (r < 0)
		return r;
	r = snprintf(out, size, "%s%s%s", dp, dp[0] ? "/" : "", name);
	return r < 0 || (size_t)r >= size ? -ENAMETOOLONG : 0;
}

/* The verdict on directory d: cached, or read from the disk below (by its
 * fd, leased: past the fd budget a directory keeps only a handle). */
static int track_dir_kind(struct hfs *fs, struct hfs_inode *d)
{
	uint_fast32_t s = atomic_load(&d->dir_kind);
	struct inode_fd f;
	int kind;

	if ((s & TRACK_DIR_MASK) != TRACK_DIR_UNKNOWN)
		return (int)(s & TRACK_DIR_MASK);
	if (inode_fd_get(fs, d, &f) < 0)
		return TRACK_DIR_PLAIN; /* gone: not cached, asked again next time */
	kind = store_ignore_foreign_dir(f.fd) ? TRACK_DIR_FOREIGN : TRACK_DIR_PLAIN;
	inode_fd_put(&f);
	/* lost to a change of a deciding name meanwhile: ours is then
	 * maybe stale, and the next question reads the disk again */
	atomic_compare_exchange_strong(&d->dir_kind, &s, (s & ~TRACK_DIR_MASK) | (unsigned)kind);
	return kind;
}

/* A name deciding d's verdict changed: forget it. */
static void track_dir_forget(struct hfs_inode *d)
{
	uint_fast32_t s = atomic_load(&d->dir_kind);

	while (!atomic_compare_exchange_weak(&d->dir_kind, &s,
					     ((s & ~TRACK_DIR_MASK) + TRACK_DIR_GEN) |
						     TRACK_DIR_UNKNOWN))
		;
}

struct track_walk {
	struct hfs_inode *skip; /* not judged itself (may be NULL) */
	int found;
};

static enum inode_walk track_foreign_visit(struct hfs_inode *in, void *arg)
{
	struct track_walk *w = arg;

	if (in == w->skip || !S_ISDIR(in->type))
		return INODE_WALK_NEXT;
	switch (atomic_load(&in->dir_kind) & TRACK_DIR_MASK) {
	case TRACK_DIR_PLAIN:
		return INODE_WALK_NEXT;
	case TRACK_DIR_FOREIGN:
		w->found = 1;
		return INODE_WALK_STOP;
	default:
		return INODE_WALK_TAKE; /* judged outside the table lock */
	}
}

/* Is in (unless skip), or a directory above it, a git repository or a
 * virtualenv? */
static int track_foreign_walk(struct hfs *fs, struct hfs_inode *in, struct hfs_inode *skip)
{
	struct hfs_inode *todo[TRACK_WALK_TAKE];
	struct track_walk w = { skip, 0 };

	for (int round = 0; round < TRACK_WALK_ROUNDS && !w.found; round++) {
		size_t n = inode_walk_up(fs, in, track_foreign_visit, &w, todo, TRACK_WALK_TAKE);
		for (size_t i = 0; i < n && !w.found; i++)
			w.found = track_dir_kind(fs, todo[i]) == TRACK_DIR_FOREIGN;
		inode_put_all(fs, todo, n);
		if (n < TRACK_WALK_TAKE)
			break; /* every directory up to the root was judged */
	}
	return w.found;
}

int track_foreign(struct hfs *fs, struct hfs_inode *in)
{
	return track_foreign_walk(fs, in, NULL);
}

static void track_begin(fuse_req_t req, struct turns *t, struct track *tk)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	turns_enter_ex(t, ctx->pid, ctx->uid, tk->continuation);
	tk->turns = t;
}

/* A file with other names in the tree: we know only the name it was last
 * looked up by, so the next checkpoint re-validates the whole tree (with the
 * stat cache; once per file and checkpoint). */
static int track_hard_linked(struct hfs *fs, struct hfs_inode *in)
{
	struct inode_fd f;
	struct stat st;
	int linked = 0;

	if (inode_fd_get(fs, in, &f) < 0)
		return 0;
	if (fstatat(f.fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0)
		linked = st.st_nlink > 1;
	inode_fd_put(&f);
	return linked;
}

void track_write(fuse_req_t req, struct hfs_inode *in, off_t off, size_t size,
		 struct track *tk)
{
	struct turns *t = track_turns(hfs_of(req));
	uint64_t end = (uint64_t)off + size;
	/* a request as big as the kernel sends may be followed by the rest of
	 * the same write() (direct I/O cuts where the caller's pages run out) */
	int splits = (end % 4096 == 0 && off % 4096 != 0) || size + 4096 > HFS_MAX_WRITE;
	uint64_t prev = atomic_load(&in->write_split_end);

	/* one write() crossing a page boundary can arrive as two requests:
	 * the first ends on the boundary, the second starts right there */
	tk->continuation = prev != 0 && (uint64_t)off == prev;
	track_inode(req, in, tk);
	tk->continuation = 0;
	/* inside the gate now (or untracked): account the split state */
	prev = atomic_exchange(&in->write_split_end, splits ? end : 0);
	if (t && (prev != 0) != splits)
		turns_split(t, splits ? 1 : -1);
}

void track_inode(fuse_req_t req, struct hfs_inode *in, struct track *tk)
{
	struct hfs *fs = hfs_of(req);
	struct turns *t = track_turns(fs);
	char path[PATH_MAX];
	int have_path = 0;

	tk->turns = NULL;
	if (!t)
		return;
	/* exclusion first: a change to an excluded path must not even start
	 * the turn's checkpoint (epochs only make these lookups rare) */
	unsigned long long ep = turns_epoch(t);
	if (atomic_load(&in->skip_epoch) == ep)
		return;
	if (atomic_load(&in->mark_epoch) != ep) {
		if (inode_path(fs, in, path, sizeof(path)) < 0) {
			track_begin(req, t, tk);
			turns_need_full_scan(t); /* cannot name it: re-validate all */
			return;
		}
		if (ckptd_excluded(fs->ckpt, path, S_ISDIR(in->type)) || track_foreign(fs, in)) {
			atomic_store(&in->skip_epoch, ep);
			return;
		}
		have_path = 1;
	}
	track_begin(req, t, tk);
	ep = turns_epoch(t); /* stable now: no checkpoint while we are in */
	if (atomic_load(&in->mark_epoch) == ep)
		return; /* already dirty */
	if (!have_path && inode_path(fs, in, path, sizeof(path)) < 0) {
		turns_need_full_scan(t);
		return;
	}
	turns_mark(t, path);
	atomic_store(&in->mark_epoch, ep);
	if (S_ISREG(in->type) && track_hard_linked(fs, in))
		turns_need_full_scan(t); /* its other names change too */
}

void track_name(fuse_req_t req, struct hfs_inode *dir, const char *name, struct track *tk)
{
	track_rename(req, dir, name, NULL, NULL, tk);
}

/* Name (path: dir's path, then name) in dir may decide whether dir is a git
 * repository or a virtualenv: keep dir's verdict before the operation, for
 * track_done to compare. Not for the root (never excluded) nor for a
 * directory the rules exclude anyway (a .git: git rewrites its HEAD often). */
static void track_kind_watch(struct hfs *fs, struct track *tk, struct hfs_inode *dir,
			     const char *name, const char *path)
{
	size_t plen = strlen(path), nlen = strlen(name);
	char dpath[PATH_MAX];
	int i;

	if (dir == &fs->root || !store_ignore_foreign_name(name) || plen <= nlen + 1)
		return;
	for (i = 0; i < 2 && tk->kind_dir[i]; i++)
		if (tk->kind_dir[i] == dir)
			return;
	if (i == 2)
		return;
	memcpy(dpath, path, plen - nlen - 1);
	dpath[plen - nlen - 1] = '\0';
	if (ckptd_excluded(fs->ckpt, dpath, 1))
		return;
	tk->kind_dir[i] = dir;
	tk->kind_before[i] = track_dir_kind(fs, dir);
}

void track_rename(fuse_req_t req, struct hfs_inode *d1, const char *n1,
		  struct hfs_inode *d2, const char *n2, struct track *tk)
{
	struct hfs *fs = hfs_of(req);
	struct turns *t = track_turns(fs);
	char p1[PATH_MAX], p2[PATH_MAX];
	int x1, x2 = 1;

	tk->turns = NULL;
	tk->kind_dir[0] = tk->kind_dir[1] = NULL;
	if (!t)
		return;
	if (name_path(fs, d1, n1, p1, sizeof(p1)) < 0 ||
	    (d2 && name_path(fs, d2, n2, p2, sizeof(p2)) < 0)) {
		track_begin(req, t, tk);
		turns_need_full_scan(t);
		return;
	}
	/* is_dir unknown here: a rule for directories only ("build/") must
	 * still keep what is inside out, which the matcher does by parents */
	x1 = ckptd_excluded(fs->ckpt, p1, 0) || track_foreign(fs, d1);
	if (d2)
		x2 = ckptd_excluded(fs->ckpt, p2, 0) || track_foreign(fs, d2);
	track_kind_watch(fs, tk, d1, n1, p1);
	if (d2)
		track_kind_watch(fs, tk, d2, n2, p2);
	if (x1 && x2)
		return;
	track_begin(req, t, tk);
	if (!x1)
		turns_mark(t, p1);
	if (!x2)
		turns_mark(t, p2);
}

/* After the operation: if dir became a git repository or virtualenv, or
 * stopped being one, the next checkpoint reads it whole, and so leaves out
 * or takes in what it holds (files there were not tracked, or were). */
static void track_kind_settle(fuse_req_t req, struct track *tk, int i)
{
	struct hfs *fs = hfs_of(req);
	struct turns *t = track_turns(fs);
	struct hfs_inode *dir = tk->kind_dir[i];
	char path[PATH_MAX];

	tk->kind_dir[i] = NULL;
	track_dir_forget(dir);
	if (!t || track_dir_kind(fs, dir) == tk->kind_before[i] || track_foreign_walk(fs, dir, dir))
		return;
	if (!tk->turns)
		track_begin(req, t, tk); /* a change seen after the fact */
	if (inode_path(fs, dir, path, sizeof(path)) < 0)
		turns_need_full_scan(t);
	else
		turns_mark(t, path);
}

void track_done(fuse_req_t req, struct track *tk)
{
	for (int i = 0; i < 2; i++)
		if (tk->kind_dir[i])
			track_kind_settle(req, tk, i);
	if (tk->turns)
		turns_exit(tk->turns);
	tk->turns = NULL;
}
