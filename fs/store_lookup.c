/* Entries of one tree by path for the length of one operation: each
 * directory's tree is read once and kept, so a lookup costs a hash probe and
 * a binary search in its directory, whatever the number of paths. */
#include "store_int.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct lookup_slot {
	char *path; /* a directory relative to the root; NULL: free slot */
	size_t len;
	/* NULL: nothing, or no tree, at path (on the heap: the table moves) */
	struct store_tview *tree;
};

struct store_lookup {
	struct store *st;
	struct store_tview root;
	struct lookup_slot *v;
	size_t n, cap; /* cap a power of two, n at most half of it */
	int err;       /* the first failure: -ENOMEM, or -EIO for an unreadable tree */
};

int store_lookup_new(struct store *st, const git_tree *root, struct store_lookup **out)
{
	struct store_lookup *lk = calloc(1, sizeof(*lk));

	if (!lk || (root && store_tv_of(root, &lk->root) < 0)) {
		free(lk);
		return -ENOMEM;
	}
	lk->st = st;
	*out = lk;
	return 0;
}

int store_lookup_error(const struct store_lookup *lk)
{
	return lk->err;
}

void store_lookup_free(struct store_lookup *lk)
{
	if (!lk)
		return;
	for (size_t i = 0; i < lk->cap; i++) {
		free(lk->v[i].path);
		store_tv_free(lk->v[i].tree);
		free(lk->v[i].tree);
	}
	store_tv_free(&lk->root);
	free(lk->v);
	free(lk);
}

/* FNV-1a */
static uint64_t lookup_hash(const char *s, size_t len)
{
	uint64_t h = 14695981039346656037ULL;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return h;
}

static struct lookup_slot *lookup_probe(struct lookup_slot *v, size_t cap, const char *path,
					size_t len)
{
	size_t i = (size_t)lookup_hash(path, len) & (cap - 1);

	while (v[i].path && (v[i].len != len || memcmp(v[i].path, path, len) != 0))
		i = (i + 1) & (cap - 1);
	return &v[i];
}

static int lookup_grow(struct store_lookup *lk)
{
	size_t cap = lk->cap ? lk->cap * 2 : 64;
	struct lookup_slot *v = calloc(cap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < lk->cap; i++)
		if (lk->v[i].path)
			*lookup_probe(v, cap, lk->v[i].path, lk->v[i].len) = lk->v[i];
	free(lk->v);
	lk->v = v;
	lk->cap = cap;
	return 0;
}

/* The subtree name[0..len) of t, read from the store (NULL: none). */
static struct store_tview *lookup_child(struct store_lookup *lk, const struct store_tview *t,
					const char *name, size_t len)
{
	struct store_tview *sub;
	struct store_tent te;
	int r;

	if (!t || !store_tv_byname(t, name, len, &te) || !store_tent_is_tree(&te))
		return NULL;
	if (!(sub = malloc(sizeof(*sub)))) {
		lk->err = -ENOMEM;
		return NULL;
	}
	if ((r = store_tv_lookup(lk->st, &te.oid, sub)) < 0) {
		lk->err = r == -ENOMEM ? r : -EIO;
		free(sub);
		return NULL;
	}
	return sub;
}

const struct store_tview *store_lookup_tree_n(struct store_lookup *lk, const char *path,
					      size_t len)
{
	const struct store_tview *t = lk->root.t || lk->root.b ? &lk->root : NULL;
	size_t at = len, start = 0;

	if (len == 0)
		return t;
	/* the deepest directory of path already known, then down from it */
	while (at > 0) {
		struct lookup_slot *s;

		if (lk->cap && (s = lookup_probe(lk->v, lk->cap, path, at))->path) {
			if (at == len || !s->tree)
				return s->tree;
			t = s->tree;
			start = at + 1;
			break;
		}
		while (at > 0 && path[at - 1] != '/')
			at--;
		if (at > 0)
			at--; /* onto the slash: path[0..at) is the parent */
	}
	while (start < len) {
		const char *slash = memchr(path + start, '/', len - start);
		size_t end = slash ? (size_t)(slash - path) : len;
		struct store_tview *sub;
		char *key;

		if ((lk->n + 1) * 2 > lk->cap && lookup_grow(lk) < 0) {
			lk->err = -ENOMEM;
			return NULL;
		}
		key = strndup(path, end);
		if (!key) {
			lk->err = -ENOMEM;
			return NULL;
		}
		/* an absent one is remembered too: lookups below it end there */
		sub = lookup_child(lk, t, path + start, end - start);
		*lookup_probe(lk->v, lk->cap, path, end) = (struct lookup_slot){ key, end, sub };
		lk->n++;
		if (!sub)
			return NULL;
		t = sub;
		start = end + 1;
	}
	return t;
}

const struct store_tview *store_lookup_tree(struct store_lookup *lk, const char *path)
{
	return store_lookup_tree_n(lk, path, strlen(path));
}

int store_lookup_entry(struct store_lookup *lk, const char *path, struct store_tent *out)
{
	const char *slash = strrchr(path, '/');
	const struct store_tview *dir =
		store_lookup_tree_n(lk, path, slash ? (size_t)(slash - path) : 0);
	const char *name = slash ? slash + 1 : path;

	return dir ? store_tv_byname(dir, name, strlen(name), out) : 0;
}
