/* Dirty-path set: open addressing over string hashes, grown at 50% load.
 * Turns touch a handful to a few thousand paths, so this stays small. */
#include "pathset.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct pathset {
	char **slots;
	size_t cap, count;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

struct pathset *pathset_new(void)
{
	struct pathset *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->cap = 64;
	s->slots = calloc(s->cap, sizeof(*s->slots));
	if (!s->slots) {
		free(s);
		return NULL;
	}
	return s;
}

void pathset_clear(struct pathset *s)
{
	for (size_t i = 0; i < s->cap; i++) {
		free(s->slots[i]);
		s->slots[i] = NULL;
	}
	s->count = 0;
}

void pathset_free(struct pathset *s)
{
	if (!s)
		return;
	pathset_clear(s);
	free(s->slots);
	free(s);
}

static char **find_slot(char **slots, size_t cap, const char *path)
{
	size_t i = hash_str(path) & (cap - 1);
	while (slots[i] && strcmp(slots[i], path) != 0)
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

static int grow(struct pathset *s)
{
	size_t ncap = s->cap * 2;
	char **ns = calloc(ncap, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < s->cap; i++)
		if (s->slots[i])
			*find_slot(ns, ncap, s->slots[i]) = s->slots[i];
	free(s->slots);
	s->slots = ns;
	s->cap = ncap;
	return 0;
}

int pathset_add(struct pathset *s, const char *path)
{
	char **slot;

	if ((s->count + 1) * 2 > s->cap && grow(s) < 0)
		return -ENOMEM;
	slot = find_slot(s->slots, s->cap, path);
	if (*slot)
		return 1;
	*slot = strdup(path);
	if (!*slot)
		return -ENOMEM;
	s->count++;
	return 0;
}

size_t pathset_count(const struct pathset *s)
{
	return s->count;
}

static int cmp_paths(const void *a, const void *b)
{
	/* order so that "a" sorts right before "a/..." (compare '/' as lowest) */
	const unsigned char *x = *(const unsigned char *const *)a;
	const unsigned char *y = *(const unsigned char *const *)b;
	for (;; x++, y++) {
		unsigned cx = *x == '/' ? 1 : *x, cy = *y == '/' ? 1 : *y;
		if (cx != cy || !cx)
			return (int)cx - (int)cy;
	}
}

const char **pathset_minimal(const struct pathset *s, size_t *n)
{
	const char **v = malloc((s->count + 1) * sizeof(*v));
	size_t k = 0, out = 0;

	*n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < s->cap; i++)
		if (s->slots[i])
			v[k++] = s->slots[i];
	qsort(v, k, sizeof(*v), cmp_paths);
	for (size_t i = 0; i < k; i++) {
		if (out) {
			const char *prev = v[out - 1];
			size_t pl = strlen(prev);
			if (strncmp(v[i], prev, pl) == 0 && v[i][pl] == '/')
				continue; /* below a listed path */
		}
		v[out++] = v[i];
	}
	*n = out;
	return v;
}
