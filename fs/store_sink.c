/* The object sink: an odb backend of the highest priority that keeps what
 * a checkpoint writes (blobs, trees, the commit) in memory and flushes it
 * as one packfile, so a checkpoint creates two files instead of one per
 * object. Reads of objects not yet flushed are served from memory;
 * everything else falls through to the pack and loose backends.
 * store_sink_put() is the direct way in: git_odb_write() first "freshens"
 * the object in every backend, and for a new object that means a readdir
 * of objects/pack (an odb refresh) and a utime() attempt per object, which
 * cost more than the rest of a checkpoint together. */
#include "store_int.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2/sys/odb_backend.h>
#include <openssl/evp.h>

#include "cleanup.h"

struct sink_backend {
	git_odb_backend parent;
	struct store_obj *v;
	size_t n, cap;
	uint32_t *slots; /* open addressing on the oid: index + 1, 0 = empty */
	size_t nslots;
	size_t bytes; /* sum of the objects' sizes */
	struct store *st;
};

static size_t sink_slot(const struct sink_backend *b, const git_oid *oid)
{
	uint64_t h;

	memcpy(&h, oid->id, sizeof(h));
	return (size_t)h & (b->nslots - 1);
}

/* The slot of oid, or of the empty slot where it would go. */
static size_t sink_lookup(const struct sink_backend *b, const git_oid *oid)
{
	size_t s = sink_slot(b, oid);

	while (b->slots[s] && !git_oid_equal(&b->v[b->slots[s] - 1].oid, oid))
		s = (s + 1) & (b->nslots - 1);
	return s;
}

static struct store_obj *sink_find(struct sink_backend *b, const git_oid *oid)
{
	size_t s;

	if (b->n == 0)
		return NULL;
	s = sink_lookup(b, oid);
	return b->slots[s] ? &b->v[b->slots[s] - 1] : NULL;
}

/* Big trees already written are read from memory too (store_big.c). Only
 * reads: exists() and read_header() answer for what waits here, so that
 * nothing takes a kept tree for one the store holds (a collection may
 * have dropped it since). */
static int sink_read(void **out, size_t *len, git_object_t *type, git_odb_backend *be,
		     const git_oid *oid)
{
	struct store_obj *o = sink_find((struct sink_backend *)be, oid);

	if (!o || !o->data)
		o = (struct store_obj *)store_big_find(((struct sink_backend *)be)->st, oid);

	if (!o)
		return GIT_ENOTFOUND;
	*out = git_odb_backend_data_alloc(be, o->len ? o->len : 1);
	if (!*out)
		return -1;
	memcpy(*out, o->data, o->len);
	*len = o->len;
	*type = o->type;
	return 0;
}

static int sink_read_header(size_t *len, git_object_t *type, git_odb_backend *be,
			    const git_oid *oid)
{
	struct store_obj *o = sink_find((struct sink_backend *)be, oid);

	if (!o)
		return GIT_ENOTFOUND;
	*len = o->len;
	*type = o->type;
	return 0;
}

static int sink_exists(git_odb_backend *be, const git_oid *oid)
{
	return sink_find((struct sink_backend *)be, oid) != NULL;
}

/* Keep object o, whose id is known (the caller hashed it): what it holds
 * moves here, or is freed when the object waits here already. */
static int sink_take(struct sink_backend *b, struct store_obj *o)
{
	struct store_obj *have = sink_find(b, &o->oid);

	/* one written by a flush that failed after it holds no data: the
	 * file may be gone by now (nothing names it), so write it again */
	if (have && !have->data) {
		b->bytes -= have->len;
		store_obj_release(have);
		*have = *o;
		b->bytes += o->len;
		return 0;
	}
	if (have) {
		store_obj_release(o);
		return 0;
	}
	if ((b->n + 1) * 2 > b->nslots) {
		size_t ns = b->nslots ? b->nslots * 2 : 256;
		uint32_t *sl = calloc(ns, sizeof(*sl));
		if (!sl) {
			store_obj_release(o);
			return -ENOMEM;
		}
		free(b->slots);
		b->slots = sl;
		b->nslots = ns;
		for (size_t i = 0; i < b->n; i++)
			b->slots[sink_lookup(b, &b->v[i].oid)] = (uint32_t)i + 1;
	}
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		struct store_obj *v = realloc(b->v, cap * sizeof(*v));
		if (!v) {
			store_obj_release(o);
			return -ENOMEM;
		}
		b->v = v;
		b->cap = cap;
	}
	b->v[b->n] = *o;
	b->slots[sink_lookup(b, &o->oid)] = (uint32_t)++b->n;
	b->bytes += o->len;
	return 0;
}

/* The same for a copy of data, or data itself when given (malloc'ed;
 * ours then in any case). */
static int sink_add(struct sink_backend *b, const git_oid *oid, const void *data, size_t len,
		    git_object_t type, void *given)
{
	struct store_obj o = { .oid = *oid, .type = type, .len = len, .data = given };
	struct store_obj *have = sink_find(b, oid);

	if (have && have->data) {
		free(given);
		return 0;
	}
	if (!given) {
		o.data = malloc(len ? len : 1);
		if (!o.data)
			return -ENOMEM;
		memcpy(o.data, data, len);
	}
	return sink_take(b, &o);
}

static int sink_write(git_odb_backend *be, const git_oid *oid, const void *data, size_t len,
		      git_object_t type)
{
	return sink_add((struct sink_backend *)be, oid, data, len, type, NULL) < 0 ? -1 : 0;
}

int store_object_id(git_object_t type, const void *buf, size_t len, git_oid *oid)
{
	char hdr[32];
	int n = snprintf(hdr, sizeof(hdr), "%s %zu", git_object_type2string(type), len);
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	unsigned int mdlen;
	int ok;

	if (!md)
		return -ENOMEM;
	ok = EVP_DigestInit_ex(md, EVP_sha1(), NULL) &&
	     EVP_DigestUpdate(md, hdr, (size_t)n + 1) && EVP_DigestUpdate(md, buf, len) &&
	     EVP_DigestFinal_ex(md, oid->id, &mdlen);
	EVP_MD_CTX_free(md);
	return ok ? 0 : -EIO;
}

int store_sink_put(struct store *st, git_object_t type, const void *buf, size_t len,
		   git_oid *oid)
{
	int r = store_object_id(type, buf, len, oid);

	if (r == 0)
		r = sink_add(st->sink, oid, buf, len, type, NULL);
	return r;
}

int store_sink_give(struct store *st, git_object_t type, void *buf, size_t len, git_oid *oid)
{
	int r = store_object_id(type, buf, len, oid);

	if (r < 0) {
		free(buf);
		return r;
	}
	return sink_add(st->sink, oid, buf, len, type, buf);
}

int store_sink_give_tree(struct store *st, void *buf, size_t len, uint32_t *ents, size_t n,
			 git_oid *oid)
{
	struct store_obj o = { .type = GIT_OBJECT_TREE, .len = len, .data = buf };
	int r;

	if (len < store_big_min(st) || len > UINT32_MAX) {
		free(ents);
		return store_sink_give(st, GIT_OBJECT_TREE, buf, len, oid);
	}
	o.ents = ents;
	o.nents = n;
	r = store_big_hash(st, &o);
	if (r < 0) {
		store_obj_release(&o);
		return r;
	}
	*oid = o.oid;
	return sink_take(st->sink, &o);
}

int store_sink_keep(struct store *st, git_object_t type, const void *buf, size_t len,
		    const git_oid *oid)
{
	return sink_add(st->sink, oid, buf, len, type, NULL);
}

static void sink_clear(struct sink_backend *b)
{
	for (size_t i = 0; i < b->n; i++)
		store_obj_release(&b->v[i]);
	b->n = 0;
	b->bytes = 0;
	if (b->slots)
		memset(b->slots, 0, b->nslots * sizeof(*b->slots));
}

struct store_sink_saved {
	struct store_obj *v;
	size_t n, cap;
	uint32_t *slots;
	size_t nslots, bytes;
};

void *store_sink_stash(struct store *st)
{
	struct sink_backend *b = st->sink;
	struct store_sink_saved *sv = calloc(1, sizeof(*sv));

	if (!sv || !b)
		return sv;
	*sv = (struct store_sink_saved){ b->v, b->n, b->cap, b->slots, b->nslots, b->bytes };
	b->v = NULL;
	b->slots = NULL;
	b->n = b->cap = b->nslots = b->bytes = 0;
	return sv;
}

void store_sink_unstash(struct store *st, void *saved)
{
	struct sink_backend *b = st->sink;
	struct store_sink_saved *sv = saved;

	if (!sv)
		return;
	if (b) {
		sink_clear(b);
		free(b->v);
		free(b->slots);
		b->v = sv->v;
		b->n = sv->n;
		b->cap = sv->cap;
		b->slots = sv->slots;
		b->nslots = sv->nslots;
		b->bytes = sv->bytes;
	}
	free(sv);
}

void store_sink_discard(struct store *st)
{
	if (st->sink)
		sink_clear(st->sink);
}

size_t store_sink_bytes(const struct store *st)
{
	return st->sink ? st->sink->bytes : 0;
}

static void sink_free(git_odb_backend *be)
{
	struct sink_backend *b = (struct sink_backend *)be;

	sink_clear(b);
	free(b->v);
	free(b->slots);
	free(b);
}

int store_sink_install(struct store *st)
{
	struct sink_backend *b = calloc(1, sizeof(*b));
	git_odb *odb = NULL;
	int rc;

	if (!b)
		return -ENOMEM;
	git_odb_init_backend(&b->parent, GIT_ODB_BACKEND_VERSION);
	b->parent.read = sink_read;
	b->parent.read_header = sink_read_header;
	b->parent.write = sink_write;
	b->parent.exists = sink_exists;
	b->parent.free = sink_free;
	rc = git_repository_odb(&odb, st->repo);
	if (rc == 0)
		rc = git_odb_add_backend(odb, &b->parent, 100);
	git_odb_free(odb);
	if (rc < 0) {
		free(b);
		return -EIO;
	}
	b->st = st;
	st->sink = b;
	return 0;
}

/* Big trees as loose objects (store_big.c), everything else in one pack;
 * the pack last, so that a failure leaves nothing that names a missing
 * object (a loose tree alone is garbage a collection sweeps). */
int store_sink_flush(struct store *st, struct herr *e)
{
	struct sink_backend *b = st->sink;
	size_t k = 0;
	int r = 0;

	if (!b || b->n == 0)
		return 0;
	/* a big tree written by a flush that failed after it is kept by
	 * store_big.c, its data gone from here */
	for (size_t i = 0; i < b->n; i++)
		if (!b->v[i].sums && b->v[i].data)
			k++;
	for (size_t i = 0; i < b->n && r == 0; i++)
		if (b->v[i].sums && b->v[i].data)
			r = store_big_write(st, &b->v[i], e);
	if (r == 0 && k == b->n) {
		r = store_pack_write_objects(st, b->v, b->n, e);
	} else if (r == 0 && k > 0) {
		_cleanup_free_ struct store_obj *small = malloc(k * sizeof(*small));
		size_t j = 0;
		if (!small)
			return err_set(e, -ENOMEM, "out of memory");
		for (size_t i = 0; i < b->n; i++)
			if (!b->v[i].sums && b->v[i].data)
				small[j++] = b->v[i];
		r = store_pack_write_objects(st, small, k, e);
	}
	if (r == 0)
		sink_clear(b);
	return r;
}
