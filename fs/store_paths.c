/* Checkpoints in O(changed): the new tree is the previous one plus updates
 * for the given paths only; only the trees on their paths are read and
 * rewritten (tree_build). */
#include "store_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"

struct upd {
	char *path;
	git_oid oid;
	git_filemode_t mode;
};

struct upd_vec {
	struct upd *v;
	size_t n, cap;
};

struct paths_ctx {
	struct store *st;
	int rootfd;
	git_tree *prev;
	struct store_lookup *prev_at; /* entries of prev by path */
	struct upd_vec rm, up;
	struct store_skips skips;
	/* what changed, counted from the updates as the tree is built; when
	 * that cannot be done (below), the commit diffs the two trees */
	struct store_counts counts;
	int count_by_diff;
	const struct ckpt_meta *meta;
	struct store_foreign *foreign; /* git repositories, virtualenvs met */
	int empty_put;                 /* the empty tree is in the store */
	struct herr *e;
};

static int names_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Is rel a file that may be written while we read it? */
static int paths_live(const struct paths_ctx *c, const char *rel)
{
	return c->meta && c->meta->nlive &&
	       bsearch(&rel, c->meta->live, c->meta->nlive, sizeof(char *), names_cmp);
}

static int upd_push(struct upd_vec *u, const char *path, const git_oid *oid,
		    git_filemode_t mode)
{
	if (u->n == u->cap) {
		size_t cap = u->cap ? u->cap * 2 : 64;
		struct upd *v = realloc(u->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		u->v = v;
		u->cap = cap;
	}
	u->v[u->n].path = strdup(path);
	if (!u->v[u->n].path)
		return -ENOMEM;
	if (oid)
		u->v[u->n].oid = *oid;
	u->v[u->n].mode = mode;
	u->n++;
	return 0;
}

static void upd_free(struct upd_vec *u)
{
	for (size_t i = 0; i < u->n; i++)
		free(u->v[i].path);
	free(u->v);
}

static int upd_cmp(const void *a, const void *b)
{
	return strcmp(((const struct upd *)a)->path, ((const struct upd *)b)->path);
}

/* Is a an ancestor directory of b? */
static int path_is_parent(const char *a, const char *b)
{
	size_t l = strlen(a);
	return strncmp(a, b, l) == 0 && b[l] == '/';
}

/* Sort, drop duplicates (the last wins) and, for removals, anything below
 * another removal. */
static void upd_normalise(struct upd_vec *u, int removals)
{
	size_t out = 0;

	if (u->n == 0)
		return; /* qsort of a NULL array is undefined */
	qsort(u->v, u->n, sizeof(*u->v), upd_cmp);
	for (size_t i = 0; i < u->n; i++) {
		if (out > 0 && (strcmp(u->v[out - 1].path, u->v[i].path) == 0 ||
				(removals && path_is_parent(u->v[out - 1].path, u->v[i].path)))) {
			if (!removals) {
				free(u->v[out - 1].path);
				u->v[out - 1] = u->v[i];
			} else {
				free(u->v[i].path);
			}
			continue;
		}
		u->v[out++] = u->v[i];
	}
	u->n = out;
}

/* "./a//b/" -> "a/b"; -EINVAL for absolute paths and "..". */
static int paths_normalise(const char *in, char *out, size_t size)
{
	size_t n = 0;
	const char *p = in;

	if (in[0] == '/')
		return -EINVAL;
	while (*p) {
		const char *end = strchr(p, '/');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == 2 && p[0] == '.' && p[1] == '.')
			return -EINVAL;
		if (len > 0 && !(len == 1 && p[0] == '.')) {
			if (n + len + 2 > size)
				return -ENAMETOOLONG;
			if (n)
				out[n++] = '/';
			memcpy(out + n, p, len);
			n += len;
		}
		p += len;
		while (*p == '/')
			p++;
	}
	out[n] = '\0';
	return 0;
}

/* The previous checkpoint's entry at rel: one probe and one binary search
 * in its directory, which is read once per checkpoint however many of its
 * entries are asked for (reading it from the root for each, as
 * git_tree_entry_bypath does, made a checkpoint O(changed x entries) once
 * the directory's tree fell out of libgit2's cache). */
static int prev_entry(struct paths_ctx *c, const char *rel, struct store_tent *te)
{
	return store_lookup_entry(c->prev_at, rel, te);
}

/* A new path needs its ancestors to be trees: blobs in the way go. */
static int remove_blob_ancestors(struct paths_ctx *c, const char *rel)
{
	const char *last = strrchr(rel, '/');
	char buf[PATH_MAX];

	if (!last || store_lookup_tree_n(c->prev_at, rel, (size_t)(last - rel)))
		return 0; /* the parent is a tree already, so are its parents */
	snprintf(buf, sizeof(buf), "%s", rel);
	for (char *s = buf; (s = strchr(s, '/')); s++) {
		struct store_tent te;
		*s = '\0';
		if (!prev_entry(c, buf, &te))
			return 0; /* nothing deeper can exist either */
		if (!store_tent_is_tree(&te))
			return upd_push(&c->rm, buf, NULL, 0);
		*s = '/';
	}
	return 0;
}

static int paths_one(struct paths_ctx *c, const char *rel, int parents_known);

/* A directory: everything below it now, and what of it is gone. */
static int paths_dir(struct paths_ctx *c, const char *rel, const struct store_tview *prev_sub)
{
	int fd = rel[0] ? fsio_open(c->rootfd, rel, O_RDONLY | O_DIRECTORY)
			: openat(c->rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_closedir_ DIR *d = NULL;
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	char child[PATH_MAX];
	int r = 0;

	if (fd < 0)
		return 0; /* gone meanwhile: the next checkpoint sees it */
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return err_sys(c->e, -errno, "cannot read directory %s", rel);
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' &&
		    (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			char **nv = realloc(names, cap * sizeof(*nv));
			if (!nv) {
				r = -ENOMEM;
				break;
			}
			names = nv;
		}
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			r = -ENOMEM;
			break;
		}
		n++;
	}
	if (r == 0 && n > 0)
		qsort(names, n, sizeof(*names), names_cmp);
	for (size_t i = 0; r == 0 && i < n; i++) {
		snprintf(child, sizeof(child), "%s%s%s", rel, rel[0] ? "/" : "", names[i]);
		r = paths_one(c, child, 1);
	}
	for (size_t i = 0; r == 0 && prev_sub && i < store_tv_count(prev_sub); i++) {
		struct store_tent pe;
		store_tv_at(prev_sub, i, &pe);
		const char *name = pe.name;
		if (n && bsearch(&name, names, n, sizeof(*names), names_cmp))
			continue;
		snprintf(child, sizeof(child), "%s%s%s", rel, rel[0] ? "/" : "", name);
		r = upd_push(&c->rm, child, NULL, 0);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return r == -ENOMEM ? err_set(c->e, r, "out of memory") : r;
}

/* parents_known: no parent of rel is a foreign directory. */
static int paths_one(struct paths_ctx *c, const char *rel, int parents_known)
{
	struct store_tent tent;
	const struct store_tent *te = prev_entry(c, rel, &tent) ? &tent : NULL;
	int was_tree = te && store_tent_is_tree(te);
	struct stat sb;
	int r = fsio_lstat(c->rootfd, rel, &sb);
	int trackable = r == 0 && (S_ISREG(sb.st_mode) || S_ISLNK(sb.st_mode) ||
				   S_ISDIR(sb.st_mode));

	if (r < 0 && r != -ENOENT && r != -ENOTDIR && r != -ELOOP && r != -EXDEV)
		return err_sys(c->e, r, "cannot read %s", rel);
	if (!trackable || store_ignore_match(c->st->ignore, rel, S_ISDIR(sb.st_mode)) ||
	    store_foreign_match(c->foreign, c->rootfd, rel, S_ISDIR(sb.st_mode), parents_known)) {
		r = te ? upd_push(&c->rm, rel, NULL, 0) : 0;
		goto out;
	}
	/* a change of kind (file <-> directory) removes the old one first */
	if (te && was_tree != !!S_ISDIR(sb.st_mode))
		r = upd_push(&c->rm, rel, NULL, 0);
	else if (!te)
		r = remove_blob_ancestors(c, rel);
	if (r < 0)
		goto out;
	if (S_ISDIR(sb.st_mode)) {
		/* the directory itself: kept even when nothing in it is */
		r = upd_push(&c->up, rel, &store_empty_tree, GIT_FILEMODE_TREE);
		if (r == 0)
			r = paths_dir(c, rel, was_tree ? store_lookup_tree(c->prev_at, rel) : NULL);
		goto out;
	}
	if (S_ISREG(sb.st_mode) && sb.st_size > c->st->max_file_bytes && (!te || was_tree)) {
		store_skip_note(&c->skips, rel, (long long)sb.st_size);
		goto out;
	}
	{
		const char *base;
		_cleanup_close_ int dfd = fsio_open_parent(c->rootfd, rel, 0, &base);
		struct stat seen;
		git_oid oid;

		if (dfd < 0) {
			r = te ? upd_push(&c->rm, rel, NULL, 0) : 0;
			goto out;
		}
		r = (paths_live(c, rel) ? store_hash_stable_at : store_hash_at)(
			c->st, dfd, base, &sb, te && !was_tree ? &te->oid : NULL, &oid,
			&seen);
		if (r == -ENOENT || r == -ELOOP) {
			r = te ? upd_push(&c->rm, rel, NULL, 0) : 0;
			goto out;
		}
		if (r == -EPIPE) { /* the object store refused the write */
			r = store_git_err(c->e, r, "cannot write it into the checkpoint store");
			err_prefix(c->e, "%s", rel);
			goto out;
		}
		if (r < 0) {
			r = err_sys(c->e, r, "cannot read %s", rel);
			goto out;
		}
		c->st->written_since_gc += (long long)seen.st_size;
		if (te && !was_tree && git_oid_equal(&oid, &te->oid) &&
		    te->mode == store_mode_of(&seen))
			goto out;
		r = upd_push(&c->up, rel, &oid, store_mode_of(&seen));
	}
out:
	return r == -ENOMEM ? err_set(c->e, r, "out of memory") : r;
}

/* The new tree: the previous one with the removals, then the upserts,
 * applied level by level. Only the trees on the paths of updates are read
 * and rewritten; they go straight to the sink (store_sink_put). A
 * directory is an upsert of mode tree (its contents come as their own
 * ops); a tree left empty stays, as git's empty tree, while its directory
 * is there. */
struct tree_op {
	const char *path; /* relative to the level being built */
	const struct upd *u;
	int remove;
};

struct tree_ent {
	const char *name;
	size_t len;
	git_filemode_t mode;
	git_oid oid;
};

/* Paths ordered component by component ('/' before any other byte), so
 * that everything below one name is contiguous. */
static int tree_op_cmp(const void *a, const void *b)
{
	const unsigned char *x = (const unsigned char *)((const struct tree_op *)a)->path;
	const unsigned char *y = (const unsigned char *)((const struct tree_op *)b)->path;

	for (;; x++, y++) {
		unsigned cx = *x == '/' ? 1 : *x, cy = *y == '/' ? 1 : *y;
		if (cx != cy || !cx)
			return (int)cx - (int)cy;
	}
}

/* git's order: a tree sorts as if its name ended with '/'. */
static int tree_ent_cmp(const void *a, const void *b)
{
	const struct tree_ent *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->name, y->name, n);
	unsigned cx, cy;

	if (c)
		return c;
	cx = x->len > n ? (unsigned char)x->name[n] : (x->mode == GIT_FILEMODE_TREE ? '/' : 0);
	cy = y->len > n ? (unsigned char)y->name[n] : (y->mode == GIT_FILEMODE_TREE ? '/' : 0);
	return (int)cx - (int)cy;
}

/* Plain byte order of names, as the groups of ops come. */
static int tree_name_cmp(const void *a, const void *b)
{
	const struct tree_ent *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->name, y->name, n);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

static size_t tree_name_len(const char *path)
{
	const char *slash = strchr(path, '/');
	return slash ? (size_t)(slash - path) : strlen(path);
}

/* A mode as a tree entry spells it, with its space: the modes git
 * writes are a handful, and sprintf was a tenth of a tree's cost. */
static size_t tree_mode_put(char *out, git_filemode_t mode)
{
	const char *s;

	switch (mode) {
	case GIT_FILEMODE_BLOB: s = "100644 "; break;
	case GIT_FILEMODE_BLOB_EXECUTABLE: s = "100755 "; break;
	case GIT_FILEMODE_LINK: s = "120000 "; break;
	case GIT_FILEMODE_TREE: s = "40000 "; break;
	case GIT_FILEMODE_COMMIT: s = "160000 "; break;
	default: return (size_t)sprintf(out, "%o ", (unsigned)mode);
	}
	memcpy(out, s, strlen(s));
	return strlen(s);
}

/* One entry as a tree spells it: "<mode> <name>\0<20-byte id>". */
static size_t tree_ent_put(char *out, const struct tree_ent *t)
{
	size_t at = tree_mode_put(out, t->mode);

	memcpy(out + at, t->name, t->len);
	at += t->len;
	out[at++] = '\0';
	memcpy(out + at, t->oid.id, GIT_OID_RAWSZ);
	return at + GIT_OID_RAWSZ;
}

/* Room for need more bytes after the first at of *buf. */
static int tree_reserve(char **buf, size_t *cap, size_t at, size_t need)
{
	char *nb;
	size_t ncap = *cap;

	if (at + need <= *cap)
		return 0;
	while (ncap < at + need)
		ncap = ncap ? ncap * 2 : 4096;
	nb = realloc(*buf, ncap);
	if (!nb)
		return -ENOMEM;
	*buf = nb;
	*cap = ncap;
	return 0;
}

static int size_t_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

/* tree_write for a base kept by store_big.c: the new tree is the base's
 * bytes with the groups' entries cut out and v's put in, found by binary
 * search; runs of untouched entries are copied whole, their offsets
 * shifted. */
static int tree_splice(struct paths_ctx *c, const struct store_obj *bo, struct tree_ent *v,
		       size_t k, const struct tree_ent *groups, size_t ng, git_oid *oid,
		       int *empty)
{
	size_t nb = bo->nents, nd = 0, n = 0, at = 0, cap = bo->len + 1, i = 0, j = 0, d = 0;
	_cleanup_free_ size_t *del = calloc(ng + 1, sizeof(*del));
	_cleanup_free_ size_t *pos = calloc(k + 1, sizeof(*pos));
	_cleanup_free_ char *buf = NULL;
	_cleanup_free_ uint32_t *ents = NULL;
	int r;

	if (!del || !pos)
		return err_set(c->e, -ENOMEM, "out of memory");
	for (size_t g = 0; g < ng; g++) {
		for (int tree = 0; tree < 2; tree++) {
			struct store_tent te;
			size_t x = store_big_lower(bo, groups[g].name, groups[g].len, tree);
			if (x >= nb)
				continue;
			store_big_ent(bo, x, &te);
			if (te.len == groups[g].len && memcmp(te.name, groups[g].name, te.len) == 0 &&
			    store_tent_is_tree(&te) == tree) {
				del[nd++] = x;
				break;
			}
		}
	}
	qsort(del, nd, sizeof(*del), size_t_cmp);
	for (size_t x = 0; x < k; x++) {
		pos[x] = store_big_lower(bo, v[x].name, v[x].len, v[x].mode == GIT_FILEMODE_TREE);
		cap += 16 + v[x].len + 1 + GIT_OID_RAWSZ; /* "<mode> " fits in 16 */
	}
	buf = store_big_alloc(c->st, cap);
	ents = store_big_alloc(c->st, (nb + k + 1) * sizeof(*ents));
	if (!buf || !ents)
		return err_set(c->e, -ENOMEM, "out of memory");
	for (;;) {
		size_t stop = nb;

		while (d < nd && del[d] < i)
			d++; /* named twice: a damaged base */
		if (j < k && pos[j] < stop)
			stop = pos[j];
		if (d < nd && del[d] < stop)
			stop = del[d];
		if (stop > i) {
			size_t from = bo->ents[i], to = stop < nb ? bo->ents[stop] : bo->len;
			memcpy(buf + at, bo->data + from, to - from);
			for (size_t x = i; x < stop; x++)
				ents[n++] = (uint32_t)(bo->ents[x] - from + at);
			at += to - from;
			i = stop;
		}
		if (j < k && pos[j] == i) {
			ents[n++] = (uint32_t)at;
			at += tree_ent_put(buf + at, &v[j++]);
		} else if (d < nd && del[d] == i) {
			i++;
			d++;
		} else if (i >= nb) {
			break;
		}
	}
	*empty = n == 0;
	if (n == 0)
		return 0;
	r = store_sink_give_tree(c->st, steal_ptr(&buf), at, steal_ptr(&ents), n, oid);
	return r < 0 ? err_sys(c->e, r, "cannot build the checkpoint tree") : 0;
}

/* The tree: the k changed entries of v (any order) merged, as it is
 * written, into the entries of base whose names no op touched (groups).
 * Those are in git's order already and copied as they come, with no sort
 * of the whole (which, with the copies it needed, was most of the cost of
 * one change in a big directory); a base not in git's order could only be
 * a damaged store, and stays as unordered as it was. */
static int tree_write(struct paths_ctx *c, const struct store_tview *base, struct tree_ent *v,
		      size_t k, const struct tree_ent *groups, size_t ng, git_oid *oid, int *empty)
{
	size_t nbase = base ? store_tv_count(base) : 0, cap = 0, at = 0, n = 0, j = 0;
	const struct store_obj *bo = base ? store_tv_big(base) : NULL;
	_cleanup_free_ char *buf = NULL;
	_cleanup_free_ uint32_t *ents = NULL;
	int r;

	qsort(v, k, sizeof(*v), tree_ent_cmp);
	if (bo)
		return tree_splice(c, bo, v, k, groups, ng, oid, empty);
	ents = malloc((nbase + k + 1) * sizeof(*ents));
	if (!ents || tree_reserve(&buf, &cap, 0, nbase * 48 + k * 64 + 1) < 0)
		return err_set(c->e, -ENOMEM, "out of memory");
	for (size_t i = 0; i <= nbase; i++) {
		struct tree_ent be = { 0 };

		if (i < nbase) {
			struct store_tent te;
			store_tv_at(base, i, &te);
			be.name = te.name;
			be.len = te.len;
			if (ng && bsearch(&be, groups, ng, sizeof(*groups), tree_name_cmp))
				continue;
			be.mode = te.mode;
			git_oid_cpy(&be.oid, &te.oid);
		}
		for (; j < k && (i == nbase || tree_ent_cmp(&v[j], &be) < 0); j++) {
			if (tree_reserve(&buf, &cap, at, 16 + v[j].len + 1 + GIT_OID_RAWSZ) < 0)
				return err_set(c->e, -ENOMEM, "out of memory");
			ents[n++] = (uint32_t)at;
			at += tree_ent_put(buf + at, &v[j]);
		}
		if (i == nbase)
			break;
		if (tree_reserve(&buf, &cap, at, 16 + be.len + 1 + GIT_OID_RAWSZ) < 0)
			return err_set(c->e, -ENOMEM, "out of memory");
		ents[n++] = (uint32_t)at;
		at += tree_ent_put(buf + at, &be);
	}
	*empty = n == 0;
	if (n == 0)
		return 0;
	r = store_sink_give_tree(c->st, steal_ptr(&buf), at, steal_ptr(&ents), n, oid);
	return r < 0 ? err_sys(c->e, r, "cannot build the checkpoint tree") : 0;
}

/* Count the change of one name from old (may be NULL) to id b with mode mb
 * (b NULL: gone). */
static void tree_count(struct paths_ctx *c, const struct store_tent *old, const git_oid *b,
		       git_filemode_t mb)
{
	/* an unreadable blob (a collection replaced its pack): the commit
	 * diffs the trees instead, and reopens the store if it must */
	if (!c->count_by_diff &&
	    store_count_change(c->st, &c->counts, old ? &old->oid : NULL, old ? old->mode : 0, b,
			       mb) < 0)
		c->count_by_diff = 1;
}

/* The empty tree's id, written into the store once per checkpoint. */
static int paths_empty(struct paths_ctx *c, git_oid *oid)
{
	int r = 0;

	if (!c->empty_put) {
		r = store_sink_put(c->st, GIT_OBJECT_TREE, "", 0, oid);
		if (r < 0)
			return err_sys(c->e, r, "cannot build the checkpoint tree");
		c->empty_put = 1;
	}
	*oid = store_empty_tree;
	return 0;
}

/* Is the directory at rel still there, and tracked? */
static int paths_dir_stays(struct paths_ctx *c, const char *rel)
{
	struct stat sb;

	return fsio_lstat(c->rootfd, rel, &sb) == 0 && S_ISDIR(sb.st_mode) &&
	       !store_ignore_match(c->st->ignore, rel, 1);
}

/* Build base (may be NULL), the tree of directory dir ("" for the root),
 * with ops[0..n) applied into *oid (ops are reordered); *empty when
 * nothing is left, and then nothing is written. */
static int tree_build(struct paths_ctx *c, const struct store_tview *base, const char *dir,
		      struct tree_op *ops, size_t n, git_oid *oid, int *empty)
{
	size_t nv = 0, ng = 0;
	_cleanup_free_ struct tree_ent *v = calloc(n + 1, sizeof(*v));
	_cleanup_free_ struct tree_ent *groups = calloc(n + 1, sizeof(*groups));
	int r = 0;

	if (!v || !groups)
		return err_set(c->e, -ENOMEM, "out of memory");
	/* each group of ops on one name decides that name's entry */
	for (size_t i = 0, j; i < n && r == 0; i = j) {
		const char *name = ops[i].path;
		size_t len = tree_name_len(name), m = 0;
		struct store_tent oent;
		const struct store_tent *be = NULL, *old;
		const struct upd *blob = NULL;
		int removed = 0, deeper_up = 0, deeper = 0, be_tree, is_dir = 0;
		char nm[NAME_MAX + 1], sub_dir[PATH_MAX];

		for (j = i; j < n && strncmp(ops[j].path, name, len) == 0 &&
			    (ops[j].path[len] == '\0' || ops[j].path[len] == '/');
		     j++) {
			if (ops[j].path[len] == '\0') {
				removed |= ops[j].remove;
				if (!ops[j].remove)
					blob = ops[j].u;
			} else {
				deeper = 1;
				deeper_up |= !ops[j].remove;
			}
		}
		if (blob && blob->mode == GIT_FILEMODE_TREE) {
			is_dir = 1; /* a directory that is there */
			blob = NULL;
		}
		if (len > NAME_MAX)
			continue; /* cannot exist */
		groups[ng++] = (struct tree_ent){ name, len, 0, { { 0 } } };
		memcpy(nm, name, len);
		nm[len] = '\0';
		old = be = base && store_tv_byname(base, name, len, &oent) ? &oent : NULL;
		if (be && removed)
			be = NULL;
		be_tree = be && store_tent_is_tree(be);
		if (blob && !deeper_up) {
			v[nv++] = (struct tree_ent){ name, len, blob->mode, blob->oid };
			tree_count(c, old, &blob->oid, blob->mode);
			continue;
		}
		if (!deeper || (be && !be_tree && !deeper_up)) {
			/* nothing below a file to remove: it stays */
			if (be) {
				v[nv++] = (struct tree_ent){ name, len, be->mode, be->oid };
				continue;
			}
			if (old)
				tree_count(c, old, NULL, 0);
			if (is_dir) { /* made again, or new: empty so far */
				git_oid eo;
				if ((r = paths_empty(c, &eo)) < 0)
					break;
				v[nv++] = (struct tree_ent){ name, len, GIT_FILEMODE_TREE, eo };
			}
			continue;
		}
		/* below: the new subtree counts its own changes against be;
		 * a file it replaces is gone, and a directory removed and
		 * made again pairs its old and new files only in a diff */
		if (old && !store_tent_is_tree(old))
			tree_count(c, old, NULL, 0);
		else if (old && !be)
			c->count_by_diff = 1;
		/* a file in the way of a path below it goes */
		struct store_tview sub = { 0 };
		git_oid sub_oid;
		int sub_empty = 1;

		if (be_tree && (r = store_tv_lookup(c->st, &be->oid, &sub)) < 0) {
			r = r == -ENOMEM ? err_set(c->e, r, "out of memory")
					 : store_git_err(c->e, -EIO, "cannot read the previous checkpoint");
			break;
		}
		for (size_t k = i; k < j; k++)
			if (ops[k].path[len] == '/')
				ops[i + m++] = (struct tree_op){ ops[k].path + len + 1, ops[k].u,
								 ops[k].remove };
		snprintf(sub_dir, sizeof(sub_dir), "%s%s%s", dir, dir[0] ? "/" : "", nm);
		r = tree_build(c, be_tree ? &sub : NULL, sub_dir, ops + i, m, &sub_oid, &sub_empty);
		store_tv_free(&sub);
		/* emptied: kept while the directory is there (a removal of the
		 * files in it names no directory) */
		if (r == 0 && sub_empty && (is_dir || paths_dir_stays(c, sub_dir))) {
			r = paths_empty(c, &sub_oid);
			sub_empty = 0;
		}
		if (r == 0 && !sub_empty)
			v[nv++] = (struct tree_ent){ name, len, GIT_FILEMODE_TREE, sub_oid };
	}
	if (r < 0)
		return r;
	return tree_write(c, base, v, nv, groups, ng, oid, empty);
}

/* The previous tree with the updates collected in c applied. */
static int paths_build(struct paths_ctx *c, git_oid *tree_oid)
{
	size_t n = 0;
	_cleanup_free_ struct tree_op *ops = NULL;
	int empty = 0, r;

	upd_normalise(&c->rm, 1);
	upd_normalise(&c->up, 0);
	if (c->rm.n + c->up.n == 0) {
		*tree_oid = *git_tree_id(c->prev);
		return 0;
	}
	ops = calloc(c->rm.n + c->up.n, sizeof(*ops));
	if (!ops)
		return err_set(c->e, -ENOMEM, "out of memory");
	for (size_t i = 0; i < c->rm.n; i++)
		ops[n++] = (struct tree_op){ c->rm.v[i].path, &c->rm.v[i], 1 };
	for (size_t i = 0; i < c->up.n; i++)
		ops[n++] = (struct tree_op){ c->up.v[i].path, &c->up.v[i], 0 };
	qsort(ops, n, sizeof(*ops), tree_op_cmp);
	{
		struct store_tview root;
		if (store_tv_of(c->prev, &root) < 0)
			return err_set(c->e, -ENOMEM, "out of memory");
		r = tree_build(c, &root, "", ops, n, tree_oid, &empty);
		store_tv_free(&root);
	}
	if (r == 0 && empty) {
		r = store_sink_put(c->st, GIT_OBJECT_TREE, "", 0, tree_oid);
		if (r < 0)
			r = err_sys(c->e, r, "cannot build the checkpoint tree");
	}
	return r;
}

int store_checkpoint_paths(struct store *st, int rootfd, const char *const *relpaths,
			   size_t n, const struct ckpt_meta *meta,
			   char out_oid[STORE_OID_HEX], struct herr *e)
{
	struct paths_ctx c = { .st = st, .rootfd = rootfd, .meta = meta, .e = e };
	git_commit *head = NULL;
	git_oid tree_oid;
	char rel[PATH_MAX];
	int r;

	if (st->disabled[0])
		return err_set(e, -EFBIG, "%s", st->disabled);
	/* the lock first: the tree is built on the head read under it */
	store_inflight(st, 1);
	r = store_head(st, &head, &c.prev, e);
	if (r == 0 && !head)
		r = store_checkpoint_scan(st, rootfd, meta, NULL, NULL, out_oid, e);
	if (r < 0 || !head) {
		store_inflight(st, 0);
		return r;
	}
	r = store_ignore_refresh(st, rootfd, e);
	c.foreign = store_foreign_new();
	if (r == 0 && store_lookup_new(st, c.prev, &c.prev_at) < 0)
		r = err_set(e, -ENOMEM, "out of memory");
	for (size_t i = 0; r == 0 && i < n; i++) {
		if (paths_normalise(relpaths[i], rel, sizeof(rel)) < 0) {
			r = err_set(e, -EINVAL, "%s: not a path inside the tree", relpaths[i]);
			break;
		}
		r = rel[0] ? paths_one(&c, rel, 0) : paths_dir(&c, rel, store_lookup_tree(c.prev_at, ""));
	}
	/* an entry read as absent would be taken for a new file */
	if (r == 0 && store_lookup_error(c.prev_at) < 0)
		r = store_lookup_error(c.prev_at) == -ENOMEM
			    ? err_set(e, -ENOMEM, "out of memory")
			    : store_git_err(e, -EIO, "cannot read the previous checkpoint");
	store_lookup_free(c.prev_at);
	if (r == 0)
		r = paths_build(&c, &tree_oid);
	if (r == 0)
		r = store_commit_tree(st, &tree_oid, meta, &c.skips,
				      c.count_by_diff ? NULL : &c.counts, out_oid, e);
	store_inflight(st, 0);
	git_tree_free(c.prev);
	git_commit_free(head);
	upd_free(&c.rm);
	upd_free(&c.up);
	store_foreign_free(c.foreign);
	return r;
}
