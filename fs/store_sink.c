/* The object sink: an odb backend of the highest priority that keeps what
 * libgit2 writes during a checkpoint (blobs, trees, the commit) in memory
 * and flushes it as one packfile, so a checkpoint creates two files instead
 * of one per object. Reads of objects not yet flushed are served from
 * memory; everything else falls through to the pack and loose backends. */
#include "store_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <git2/sys/odb_backend.h>

struct sink_obj {
	git_oid oid;
	git_object_t type;
	size_t len;
	unsigned char *data;
};

struct sink_backend {
	git_odb_backend parent;
	struct sink_obj *v;
	size_t n, cap;
};

static struct sink_obj *sink_find(struct sink_backend *b, const git_oid *oid)
{
	/* a checkpoint writes a handful of objects: a scan is enough */
	for (size_t i = b->n; i-- > 0;)
		if (git_oid_equal(&b->v[i].oid, oid))
			return &b->v[i];
	return NULL;
}

static int sink_read(void **out, size_t *len, git_object_t *type, git_odb_backend *be,
		     const git_oid *oid)
{
	struct sink_obj *o = sink_find((struct sink_backend *)be, oid);

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
	struct sink_obj *o = sink_find((struct sink_backend *)be, oid);

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

static int sink_write(git_odb_backend *be, const git_oid *oid, const void *data, size_t len,
		      git_object_t type)
{
	struct sink_backend *b = (struct sink_backend *)be;
	struct sink_obj *o;

	if (sink_find(b, oid))
		return 0;
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		struct sink_obj *v = realloc(b->v, cap * sizeof(*v));
		if (!v)
			return -1;
		b->v = v;
		b->cap = cap;
	}
	o = &b->v[b->n];
	o->data = malloc(len ? len : 1);
	if (!o->data)
		return -1;
	memcpy(o->data, data, len);
	o->oid = *oid;
	o->type = type;
	o->len = len;
	b->n++;
	return 0;
}

static void sink_clear(struct sink_backend *b)
{
	for (size_t i = 0; i < b->n; i++)
		free(b->v[i].data);
	b->n = 0;
}

static void sink_free(git_odb_backend *be)
{
	struct sink_backend *b = (struct sink_backend *)be;

	sink_clear(b);
	free(b->v);
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
	st->sink = b;
	return 0;
}

int store_sink_flush(struct store *st, struct herr *e)
{
	struct sink_backend *b = st->sink;
	struct store_pack *p = NULL;
	int r;

	if (!b || b->n == 0)
		return 0;
	r = store_pack_begin(st, 0, &p);
	if (r < 0)
		return err_sys(e, r, "cannot write the checkpoint's objects");
	for (size_t i = 0; i < b->n; i++) {
		r = store_pack_add_object(p, b->v[i].type, b->v[i].data, b->v[i].len,
					  &b->v[i].oid);
		if (r < 0) {
			store_pack_abort(p);
			return err_sys(e, r, "cannot write the checkpoint's objects");
		}
	}
	r = store_pack_finish(p, e);
	if (r == 0)
		sink_clear(b);
	return r;
}
