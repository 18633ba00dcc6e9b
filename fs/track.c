/* Dirty tracking hooks for the FUSE ops: turn a mutation of an inode or a
 * name into relative paths, drop excluded ones, and bracket the operation
 * with the turn gate so a checkpoint never sees it half done. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>

#include "ckptd.h"
#include "hfs.h"
#include "turn.h"

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
		if (ckptd_excluded(fs->ckpt, path, S_ISDIR(in->type))) {
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

void track_rename(fuse_req_t req, struct hfs_inode *d1, const char *n1,
		  struct hfs_inode *d2, const char *n2, struct track *tk)
{
	struct hfs *fs = hfs_of(req);
	struct turns *t = track_turns(fs);
	char p1[PATH_MAX], p2[PATH_MAX];
	int x1, x2 = 1;

	tk->turns = NULL;
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
	x1 = ckptd_excluded(fs->ckpt, p1, 0);
	if (d2)
		x2 = ckptd_excluded(fs->ckpt, p2, 0);
	if (x1 && x2)
		return;
	track_begin(req, t, tk);
	if (!x1)
		turns_mark(t, p1);
	if (!x2)
		turns_mark(t, p2);
}

void track_done(fuse_req_t req, struct track *tk)
{
	(void)req;
	if (tk->turns)
		turns_exit(tk->turns);
	tk->turns = NULL;
}
