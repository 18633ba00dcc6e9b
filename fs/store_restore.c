/* Restore: make the tracked part of the tree (or some paths of it) equal to
 * a checkpoint, by applying the difference between the newest checkpoint
 * (the tree as it is, after the caller's safety checkpoint) and the target.
 * Deletions first (emptied directories pruned), then atomic writes, then
 * the directories: the target's empty ones made, the ones it lacks gone. */
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
	git_tree *cur; /* the newest checkpoint: the safety one */
	struct store_foreign *foreign; /* git repositories, virtualenvs met */
	struct store_lookup *cur_at; /* entries of cur by path */
	mode_t umask;
	struct store_restore_out *out;
	const struct store_restore_hooks *hooks;
	int first_err;
	struct herr *e;
};

void store_restore_out_free(struct store_restore_out *o)
{
	for (size_t i = 0; i < o->nkept; i++)
		free(o->kept[i]);
	free(o->kept);
	o->kept = NULL;
	o->nkept = 0;
	for (size_t i = 0; i < o->npaths; i++)
		free(o->paths[i]);
	free(o->paths);
	o->paths = NULL;
	o->npaths = 0;
}

/* Append a copy of path to *v (of *n); -ENOMEM on failure. */
static int restore_push(char ***v, size_t *n, const char *path)
{
	char *dup = strdup(path);
	char **k;

	if (!dup)
		return -ENOMEM;
	if ((*n & (*n - 1)) == 0) { /* 0, 1, 2, 4, ...: grow to the next power */
		k = realloc(*v, (*n ? *n * 2 : 1) * sizeof(*k));
		if (!k) {
			free(dup);
			return -ENOMEM;
		}
		*v = k;
	}
	(*v)[(*n)++] = dup;
	return 0;
}

static void restore_keep(struct restore_ctx *c, const char *path)
{
	if (restore_push(&c->out->kept, &c->out->nkept, path) < 0 && c->first_err == 0)
		c->first_err = err_set(c->e, -ENOMEM, "out of memory");
}

/* A path the restore changed: counted, and named when the caller asks
 * (the daemon marks them dirty and drops the kernel's caches of them). */
static void restore_changed(struct restore_ctx *c, const char *path)
{
	c->out->changed++;
	if (c->hooks->want_paths && restore_push(&c->out->paths, &c->out->npaths, path) < 0 &&
	    c->first_err == 0)
		c->first_err = err_set(c->e, -ENOMEM, "out of memory");
}

/* Does writing path destroy something no checkpoint holds? True when path
 * or one of its parents stands on the disk as a non-directory that the
 * safety checkpoint lacks: a new file over the size cap, or one made
 * since (on a live mount). Only the first such component matters. */
static int restore_in_way(struct restore_ctx *c, const char *path)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);
	char *p = buf;

	if (len >= sizeof(buf))
		return 0;
	memcpy(buf, path, len + 1);
	for (;;) {
		char *slash = strchr(p, '/');
		struct stat sb;

		if (slash)
			*slash = '\0';
		if (fsio_lstat(c->rootfd, buf, &sb) < 0)
			return 0; /* nothing there: nothing to lose */
		/* once per written file: a lookup from the root each time
		 * re-read a big directory's tree for every file in it */
		if (!S_ISDIR(sb.st_mode)) {
			struct store_tent te;
			return !store_lookup_entry(c->cur_at, buf, &te);
		}
		if (!slash)
			return 0;
		*slash = '/';
		p = slash + 1;
	}
}

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
		m = 0666 & ~c->umask;
	if (exec)
		m |= (m & 0444) >> 2;
	else
		m &= ~(mode_t)0111;
	return m;
}

/* Never touched by a restore: what the rules exclude, and what lies in a
 * git repository or virtualenv as the tree now holds them (a checkpoint
 * taken before they were excluded may name their files). */
static int restore_excluded(struct restore_ctx *c, const char *path)
{
	return store_ignore_match(c->st->ignore, path, 0) ||
	       store_foreign_match(c->foreign, c->rootfd, path, 0, 0);
}

/* What stands at path before the restore changes it: to rewrite in place
 * a file open for writing, and to tell the caller which file it replaced. */
struct restore_old {
	int have;
	struct stat st;
};

static void restore_old_get(struct restore_ctx *c, const char *path, struct restore_old *o)
{
	o->have = c->hooks->replaced && fsio_lstat(c->rootfd, path, &o->st) == 0 &&
		  !S_ISDIR(o->st.st_mode);
}

static int restore_old_in_use(struct restore_ctx *c, const struct restore_old *o)
{
	return o->have && S_ISREG(o->st.st_mode) && c->hooks->in_use &&
	       c->hooks->in_use(c->hooks->arg, o->st.st_dev, o->st.st_ino);
}

/* The file at path is another one now (or none): say which it was. */
static void restore_old_gone(struct restore_ctx *c, const char *path, const struct restore_old *o)
{
	struct stat now;

	if (!o->have)
		return;
	if (fsio_lstat(c->rootfd, path, &now) == 0 && now.st_dev == o->st.st_dev &&
	    now.st_ino == o->st.st_ino)
		return; /* rewritten in place */
	c->hooks->replaced(c->hooks->arg, o->st.st_dev, o->st.st_ino, o->st.st_nlink);
}

static void restore_write(struct restore_ctx *c, const git_diff_file *f)
{
	git_blob *blob = NULL;
	struct restore_old old;
	int r;

	if (restore_excluded(c, f->path))
		return;
	if (restore_in_way(c, f->path)) {
		restore_keep(c, f->path);
		return;
	}
	if (git_blob_lookup(&blob, c->st->repo, &f->id) < 0) {
		restore_fail(c, -EIO, f->path, "the checkpoint lacks its content");
		return;
	}
	restore_old_get(c, f->path, &old);
	r = fsio_write(c->rootfd, f->path, git_blob_rawcontent(blob),
		       (size_t)git_blob_rawsize(blob),
		       restore_mode(c, f->path, f->mode == GIT_FILEMODE_BLOB_EXECUTABLE),
		       S_IFDIR | (0777 & ~c->umask), f->mode == GIT_FILEMODE_LINK,
		       restore_old_in_use(c, &old));
	git_blob_free(blob);
	if (r == 0)
		restore_old_gone(c, f->path, &old);
	if (r == -EISDIR || r == -ENOTEMPTY || r == -EEXIST)
		restore_fail(c, r, f->path, "a directory holding untracked files is in the way");
	else if (r == -ENOTDIR)
		restore_fail(c, r, f->path, "a parent is not a directory");
	else if (r < 0)
		restore_fail(c, r, f->path, NULL);
	else
		restore_changed(c, f->path);
}

static void restore_remove(struct restore_ctx *c, const char *path)
{
	struct restore_old old;
	int r;

	if (restore_excluded(c, path))
		return;
	restore_old_get(c, path, &old);
	r = fsio_remove(c->rootfd, path);
	if (r < 0 && r != -ENOTEMPTY)
		restore_fail(c, r, path, NULL);
	else
		restore_changed(c, path);
	if (r == 0)
		restore_old_gone(c, path, &old);
}

static int restore_dir_excluded(struct restore_ctx *c, const char *path)
{
	return store_ignore_match(c->st->ignore, path, 1) ||
	       store_foreign_match(c->foreign, c->rootfd, path, 1, 0);
}

/* An empty directory of the target: made, unless a file no checkpoint
 * holds stands there (kept, as for files). */
static void restore_mkdir(struct restore_ctx *c, const char *path)
{
	struct stat sb;
	int r;

	if (fsio_lstat(c->rootfd, path, &sb) == 0 && S_ISDIR(sb.st_mode))
		return;
	/* a file in the way that no checkpoint holds (a new one over the
	 * size cap) stays, as for files */
	if (restore_in_way(c, path)) {
		restore_keep(c, path);
		return;
	}
	r = fsio_mkdir(c->rootfd, path, S_IFDIR | (0777 & ~c->umask));
	if (r == -EEXIST || r == -ENOTDIR)
		restore_keep(c, path);
	else if (r < 0)
		restore_fail(c, r, path, NULL);
	else
		restore_changed(c, path);
}

/* A directory of the current tree the target lacks: removed once empty
 * (what is left in it is untracked, and stays). */
static void restore_rmdir(struct restore_ctx *c, const char *path)
{
	struct stat sb;

	if (fsio_lstat(c->rootfd, path, &sb) < 0 || !S_ISDIR(sb.st_mode))
		return;
	if (fsio_rmdir(c->rootfd, path) == 0)
		restore_changed(c, path);
}

/* path (of length len, room for PATH_MAX) with /name appended; its new
 * length, or 0 when it would not fit. */
static size_t restore_join(char *path, size_t len, const char *name)
{
	int n = snprintf(path + len, PATH_MAX - len, "%s%s", len ? "/" : "", name);

	return n < 0 || (size_t)n >= PATH_MAX - len ? 0 : len + (size_t)n;
}

static void restore_dirs(struct restore_ctx *c, const git_tree *cur, const git_tree *tgt,
			 char *path, size_t len);

/* The directory at path: in the target as tgt_e, in the current tree as
 * cur_e (either may be NULL or not a tree). */
static void restore_dir_at(struct restore_ctx *c, const git_tree_entry *cur_e,
			   const git_tree_entry *tgt_e, char *path, size_t len)
{
	int cur_tree = cur_e && git_tree_entry_type(cur_e) == GIT_OBJECT_TREE;
	int tgt_tree = tgt_e && git_tree_entry_type(tgt_e) == GIT_OBJECT_TREE;
	git_tree *cs = NULL, *ts = NULL;
	int empty;

	if ((!cur_tree && !tgt_tree) ||
	    (cur_tree && tgt_tree && git_oid_equal(git_tree_entry_id(cur_e), git_tree_entry_id(tgt_e))))
		return;
	if (restore_dir_excluded(c, path))
		return;
	empty = tgt_tree && git_oid_equal(git_tree_entry_id(tgt_e), &store_empty_tree);
	if (tgt_tree && !empty && git_tree_lookup(&ts, c->st->repo, git_tree_entry_id(tgt_e)) < 0) {
		restore_fail(c, -EIO, path, "the checkpoint lacks its directory");
		return;
	}
	/* an unreadable current tree only means less to remove */
	if (cur_tree && git_tree_lookup(&cs, c->st->repo, git_tree_entry_id(cur_e)) < 0)
		cs = NULL;
	restore_dirs(c, cs, ts, path, len);
	if (!tgt_tree)
		restore_rmdir(c, path);
	else if (empty)
		restore_mkdir(c, path);
	git_tree_free(cs);
	git_tree_free(ts);
}

/* Directories, once the files are done: those the target holds empty are
 * made, those of the current tree the target lacks are removed when
 * empty. Only subtrees that differ are walked. */
static void restore_dirs(struct restore_ctx *c, const git_tree *cur, const git_tree *tgt,
			 char *path, size_t len)
{
	size_t nt = tgt ? git_tree_entrycount(tgt) : 0, nc = cur ? git_tree_entrycount(cur) : 0;

	for (size_t i = 0; i < nt; i++) {
		const git_tree_entry *te = git_tree_entry_byindex(tgt, i);
		size_t l;

		if (git_tree_entry_type(te) != GIT_OBJECT_TREE ||
		    !(l = restore_join(path, len, git_tree_entry_name(te))))
			continue;
		restore_dir_at(c, cur ? git_tree_entry_byname(cur, git_tree_entry_name(te)) : NULL,
			       te, path, l);
		path[len] = '\0';
	}
	for (size_t i = 0; i < nc; i++) {
		const git_tree_entry *ce = git_tree_entry_byindex(cur, i), *te;
		size_t l;

		if (git_tree_entry_type(ce) != GIT_OBJECT_TREE)
			continue;
		te = tgt ? git_tree_entry_byname(tgt, git_tree_entry_name(ce)) : NULL;
		if ((te && git_tree_entry_type(te) == GIT_OBJECT_TREE) ||
		    !(l = restore_join(path, len, git_tree_entry_name(ce))))
			continue; /* a directory in both was walked above */
		restore_dir_at(c, ce, NULL, path, l);
		path[len] = '\0';
	}
}

/* The same for the paths of a partial restore. */
static void restore_dirs_paths(struct restore_ctx *c, git_tree *cur, git_tree *tgt,
			       const char *const *paths, size_t npaths)
{
	char path[PATH_MAX];

	for (size_t i = 0; i < npaths; i++) {
		git_tree_entry *ce = NULL, *te = NULL;
		size_t l = strlen(paths[i]);

		if (l == 0 || l >= sizeof(path))
			continue;
		memcpy(path, paths[i], l + 1);
		if (git_tree_entry_bypath(&ce, cur, paths[i]) < 0)
			ce = NULL;
		if (git_tree_entry_bypath(&te, tgt, paths[i]) < 0)
			te = NULL;
		restore_dir_at(c, ce, te, path, l);
		git_tree_entry_free(ce);
		git_tree_entry_free(te);
		/* its parents: a removal may have pruned one the target has */
		for (char *slash; (slash = strrchr(path, '/'));) {
			*slash = '\0';
			if (git_tree_entry_bypath(&te, tgt, path) == 0) {
				if (git_tree_entry_type(te) == GIT_OBJECT_TREE &&
				    !restore_dir_excluded(c, path))
					restore_mkdir(c, path);
				git_tree_entry_free(te);
			}
		}
	}
}

/* Fail early for paths in neither the target nor the current tree (nor,
 * before the safety checkpoint, rootfd >= 0, on the disk). */
static int restore_check_paths(git_tree *target, git_tree *cur, int rootfd,
			       const char *const *paths, size_t npaths, const char *oid,
			       struct herr *e)
{
	for (size_t i = 0; i < npaths; i++) {
		git_tree_entry *a = NULL, *b = NULL;
		struct stat sb;
		int found = git_tree_entry_bypath(&a, target, paths[i]) == 0 ||
			    (cur && git_tree_entry_bypath(&b, cur, paths[i]) == 0) ||
			    (rootfd >= 0 && fsio_lstat(rootfd, paths[i], &sb) == 0);
		git_tree_entry_free(a);
		git_tree_entry_free(b);
		if (!found)
			return err_set(e, -ENOENT,
				       "cannot restore %s: not in checkpoint %.8s, nor in the tree",
				       paths[i], oid);
	}
	return 0;
}

static int restore_target(struct store *st, const char *oid, git_commit **c, git_tree **t,
			  struct herr *e)
{
	git_oid id;

	if (git_oid_fromstr(&id, oid) < 0 || git_commit_lookup(c, st->repo, &id) < 0 ||
	    git_commit_tree(t, *c) < 0)
		return err_set(e, -ENOENT, "checkpoint %.8s cannot be read", oid);
	return 0;
}

int store_restore_check(struct store *st, int rootfd, const char *oid,
			const char *const *paths, size_t npaths, struct herr *e)
{
	git_commit *head = NULL, *target = NULL;
	git_tree *cur = NULL, *tt = NULL;
	int rc = restore_target(st, oid, &target, &tt, e);

	if (rc == 0 && npaths)
		rc = store_head(st, &head, &cur, e);
	if (rc == 0 && npaths)
		rc = restore_check_paths(tt, cur, rootfd, paths, npaths, oid, e);
	git_tree_free(tt);
	git_tree_free(cur);
	git_commit_free(target);
	git_commit_free(head);
	return rc;
}

int store_restore(struct store *st, int rootfd, const char *oid,
		  const char *const *paths, size_t npaths, mode_t umask,
		  const struct store_restore_hooks *hooks, struct store_restore_out *out,
		  struct herr *e)
{
	struct restore_ctx c = { .st = st, .rootfd = rootfd, .umask = umask & 0777,
				 .out = out, .e = e };
	git_diff_options o;
	git_commit *head = NULL, *target = NULL;
	git_tree *cur = NULL, *tt = NULL;
	git_diff *diff = NULL;
	int rc;

	static const struct store_restore_hooks none = { 0 };

	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	memset(out, 0, sizeof(*out));
	c.hooks = hooks ? hooks : &none;
	store_inflight(st, 1);
	rc = store_ignore_refresh(st, rootfd, e);
	if (rc == 0)
		rc = store_head(st, &head, &cur, e);
	if (rc == 0 && !head)
		rc = err_set(e, -ENOENT, "no checkpoints yet");
	if (rc < 0)
		goto out;
	if ((rc = restore_target(st, oid, &target, &tt, e)) < 0)
		goto out;
	c.cur = cur;
	c.foreign = store_foreign_new();
	if (store_lookup_new(st, cur, &c.cur_at) < 0) {
		rc = err_set(e, -ENOMEM, "out of memory");
		goto out;
	}
	if (npaths) {
		rc = restore_check_paths(tt, cur, -1, paths, npaths, oid, e);
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
	if (npaths) {
		restore_dirs_paths(&c, cur, tt, paths, npaths);
	} else {
		char path[PATH_MAX] = "";
		restore_dirs(&c, cur, tt, path, 0);
	}
	rc = c.first_err;
out:
	store_inflight(st, 0);
	store_foreign_free(c.foreign);
	store_lookup_free(c.cur_at);
	git_diff_free(diff);
	git_tree_free(tt);
	git_tree_free(cur);
	git_commit_free(target);
	git_commit_free(head);
	return rc;
}
