/* Restore: make the tracked part of the tree (or some paths of it) equal to
 * a checkpoint, by applying the difference between the newest checkpoint
 * (the tree as it is, after the caller's safety checkpoint) and the target.
 * Deletions first (emptied directories pruned), then atomic writes. */
#include "store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cleanup.h"

struct restore_ctx {
	struct store *st;
	int rootfd;
	size_t changed;
	int first_err;
	struct herr *e;
};

static void restore_fail(struct restore_ctx *c, int r, const char *path, const char *why)
{
	if (c->first_err == 0) {
		c->first_err = r;
		if (why)
			err_set(c->e, r, "cannot restore %s: %s", path, why);
		else
			err_sys(c->e, r, "cannot restore %s", path);
	}
}

static mode_t restore_mode(struct restore_ctx *c, const char *path, int exec)
{
	struct stat sb;
	mode_t m;

	if (fsio_lstat(c->rootfd, path, &sb) == 0 && S_ISREG(sb.st_mode))
		m = sb.st_mode & 07777;
	else
		m = 0666 & ~c->st->umask;
	if (exec)
		m |= (m & 0444) >> 2;
	else
		m &= ~(mode_t)0111;
	return m;
}

static void restore_write(struct restore_ctx *c, const git_diff_file *f)
{
	git_blob *blob = NULL;
	int r;

	if (store_ignore_match(c->st->ignore, f->path, 0))
		return;
	if (git_blob_lookup(&blob, c->st->repo, &f->id) < 0) {
		restore_fail(c, -EIO, f->path, "the checkpoint lacks its content");
		return;
	}
	r = fsio_write(c->rootfd, f->path, git_blob_rawcontent(blob),
		       (size_t)git_blob_rawsize(blob),
		       restore_mode(c, f->path, f->mode == GIT_FILEMODE_BLOB_EXECUTABLE),
		       f->mode == GIT_FILEMODE_LINK);
	git_blob_free(blob);
	if (r == -EISDIR || r == -ENOTEMPTY || r == -EEXIST)
		restore_fail(c, r, f->path, "a directory holding untracked files is in the way");
	else if (r == -ENOTDIR)
		restore_fail(c, r, f->path, "a parent is not a directory");
	else if (r < 0)
		restore_fail(c, r, f->path, NULL);
	else
		c->changed++;
}

static void restore_remove(struct restore_ctx *c, const char *path)
{
	int r;

	if (store_ignore_match(c->st->ignore, path, 0))
		return;
	r = fsio_remove(c->rootfd, path);
	if (r < 0 && r != -ENOTEMPTY)
		restore_fail(c, r, path, NULL);
	else
		c->changed++;
}

/* Fail early for paths in neither the target nor the current tree. */
static int restore_check_paths(git_tree *target, git_tree *cur, const char *const *paths,
			       size_t npaths, const char *oid, struct herr *e)
{
	for (size_t i = 0; i < npaths; i++) {
		git_tree_entry *a = NULL, *b = NULL;
		int found = git_tree_entry_bypath(&a, target, paths[i]) == 0 ||
			    git_tree_entry_bypath(&b, cur, paths[i]) == 0;
		git_tree_entry_free(a);
		git_tree_entry_free(b);
		if (!found)
			return err_set(e, -ENOENT, "cannot restore %s: not in checkpoint %.8s",
				       paths[i], oid);
	}
	return 0;
}

int store_restore(struct store *st, int rootfd, const char *oid,
		  const char *const *paths, size_t npaths, size_t *changed,
		  struct herr *e)
{
	struct restore_ctx c = { .st = st, .rootfd = rootfd, .e = e };
	git_diff_options o;
	git_commit *head = NULL, *target = NULL;
	git_tree *cur = NULL, *tt = NULL;
	git_diff *diff = NULL;
	git_oid id;
	int rc;

	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	*changed = 0;
	store_inflight(st, 1);
	rc = store_ignore_refresh(st, rootfd, e);
	if (rc == 0)
		rc = store_head(st, &head, &cur, e);
	if (rc == 0 && !head)
		rc = err_set(e, -ENOENT, "no checkpoints yet");
	if (rc < 0)
		goto out;
	if (git_oid_fromstr(&id, oid) < 0 || git_commit_lookup(&target, st->repo, &id) < 0 ||
	    git_commit_tree(&tt, target) < 0) {
		rc = err_set(e, -ENOENT, "checkpoint %.8s cannot be read", oid);
		goto out;
	}
	if (npaths) {
		rc = restore_check_paths(tt, cur, paths, npaths, oid, e);
		if (rc < 0)
			goto out;
		o.pathspec.strings = (char **)paths;
		o.pathspec.count = npaths;
		o.flags |= GIT_DIFF_DISABLE_PATHSPEC_MATCH;
	}
	rc = git_diff_tree_to_tree(&diff, st->repo, cur, tt, &o);
	if (rc < 0) {
		rc = store_git_err(e, rc, "cannot compare with the checkpoint");
		goto out;
	}
	/* removals first, so files and directories can swap places */
	for (size_t i = 0; i < git_diff_num_deltas(diff); i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		if (d->status == GIT_DELTA_DELETED)
			restore_remove(&c, d->old_file.path);
	}
	for (size_t i = 0; i < git_diff_num_deltas(diff); i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		if (d->status != GIT_DELTA_DELETED)
			restore_write(&c, &d->new_file);
	}
	*changed = c.changed;
	rc = c.first_err;
out:
	store_inflight(st, 0);
	git_diff_free(diff);
	git_tree_free(tt);
	git_tree_free(cur);
	git_commit_free(target);
	git_commit_free(head);
	return rc;
}
