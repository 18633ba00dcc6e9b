/* Big trees. A directory of 100,000 entries is a tree of 3.7 MB, and one
 * changed file in it cost a checkpoint 20 ms: the previous tree read from
 * its pack (inflated, then parsed by libgit2), every entry copied one by
 * one into the new tree, the new tree hashed, then checksummed three
 * times more on its way into a pack (crc32, adler32, the pack's SHA-1).
 * So a tree of store_big_min() bytes or more
 * - is kept here once written, with the offset of each entry (the last
 *   few such trees, up to BIG_KEEP_BYTES): the next checkpoint reads its
 *   entries through a store_tview and splices the new tree out of its
 *   bytes (store_paths.c);
 * - is hashed in chunks of BIG_CHUNK bytes, the SHA-1 state after each
 *   and the adler32 of each kept: a new tree of the same size (a file
 *   changed, none added or removed) resumes from the state before its
 *   first changed chunk, and reuses the adler32 of every unchanged one;
 * - is written as a loose object whose zlib stream is one stored block a
 *   chunk, which needs no checksum but that adler32 (a pack needed its
 *   crc32 and the pack's SHA-1 over all of it too). The background
 *   collection packs and compresses it with the rest. */
#include "store_int.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zlib.h>

#include "cleanup.h"
#include "log.h"

#define BIG_CHUNK 65535u /* bytes of the object's stream in one stored block */
#define BIG_KEEP 4
#define BIG_KEEP_BYTES ((size_t)96 << 20)

struct big_sums {
	size_t n;          /* chunks */
	uint32_t *adler;   /* of each chunk alone */
	EVP_MD_CTX **md;   /* SHA-1 of the stream up to the end of each chunk */
};

struct big_tree {
	int refs;
	struct store_obj o;
	struct store_big *bg;
};

static void big_md_freep(EVP_MD_CTX **md)
{
	EVP_MD_CTX_free(*md);
}

struct store_big {
	struct big_tree *keep[BIG_KEEP]; /* newest first */
	size_t min;
	/* the buffers of the last tree let go, for the next one: a fresh
	 * malloc of megabytes is a fresh mapping, and faulting its pages in
	 * cost more than the copy into them */
	void *spare[2];
};

static void big_sums_free(struct big_sums *s)
{
	if (!s)
		return;
	for (size_t i = 0; s->md && i < s->n; i++)
		EVP_MD_CTX_free(s->md[i]);
	free(s->md);
	free(s->adler);
	free(s);
}

void store_obj_release(struct store_obj *o)
{
	free(o->data);
	free(o->ents);
	big_sums_free(o->sums);
	o->data = NULL;
	o->ents = NULL;
	o->sums = NULL;
	o->nents = 0;
}

/* Keep buf as a spare (0), or let the caller free it. */
static int big_spare_put(struct store_big *bg, void *buf)
{
	for (int i = 0; bg && buf && i < 2; i++) {
		if (!bg->spare[i]) {
			bg->spare[i] = buf;
			return 0;
		}
	}
	return -1;
}

void *store_big_alloc(struct store *st, size_t size)
{
	struct store_big *bg = st->big;

	for (int i = 0; bg && i < 2; i++) {
		if (bg->spare[i] && malloc_usable_size(bg->spare[i]) >= size) {
			void *p = bg->spare[i];
			bg->spare[i] = NULL;
			return p;
		}
	}
	return malloc(size ? size : 1);
}

static void big_unref(struct big_tree *b)
{
	if (b && --b->refs == 0) {
		if (big_spare_put(b->bg, b->o.data) == 0)
			b->o.data = NULL;
		if (big_spare_put(b->bg, b->o.ents) == 0)
			b->o.ents = NULL;
		store_obj_release(&b->o);
		free(b);
	}
}

int store_big_init(struct store *st)
{
	const char *env = getenv("HERMES_STORE_BIG_MIN");

	st->big = calloc(1, sizeof(*st->big));
	if (!st->big)
		return -ENOMEM;
	st->big->min = env && *env ? (size_t)strtoull(env, NULL, 10) : STORE_BIG_MIN;
	if (st->big->min == 0)
		st->big->min = 1;
	return 0;
}

void store_big_free(struct store *st)
{
	if (!st->big)
		return;
	for (unsigned i = 0; i < BIG_KEEP; i++)
		if (st->big->keep[i])
			st->big->keep[i]->bg = NULL;
	for (unsigned i = 0; i < BIG_KEEP; i++)
		big_unref(st->big->keep[i]);
	free(st->big->spare[0]);
	free(st->big->spare[1]);
	free(st->big);
	st->big = NULL;
}

size_t store_big_min(const struct store *st)
{
	return st->big ? st->big->min : STORE_BIG_MIN;
}

static struct big_tree *big_find(const struct store *st, const git_oid *oid)
{
	for (unsigned i = 0; st->big && i < BIG_KEEP; i++)
		if (st->big->keep[i] && git_oid_equal(&st->big->keep[i]->o.oid, oid))
			return st->big->keep[i];
	return NULL;
}

const struct store_obj *store_big_find(const struct store *st, const git_oid *oid)
{
	struct big_tree *b = big_find(st, oid);
	return b ? &b->o : NULL;
}

/* Keep o (moved in), newest first; the oldest go past BIG_KEEP or past
 * BIG_KEEP_BYTES in all (the newest is always kept). */
static void big_keep(struct store *st, struct store_obj *o)
{
	struct store_big *bg = st->big;
	struct big_tree *b;
	size_t bytes = 0;

	if (!bg || big_find(st, &o->oid) || !(b = calloc(1, sizeof(*b)))) {
		store_obj_release(o);
		return;
	}
	b->refs = 1;
	b->bg = bg;
	b->o = *o;
	*o = (struct store_obj){ .oid = o->oid, .type = o->type, .len = o->len };
	big_unref(bg->keep[BIG_KEEP - 1]);
	memmove(bg->keep + 1, bg->keep, (BIG_KEEP - 1) * sizeof(*bg->keep));
	bg->keep[0] = b;
	for (unsigned i = 0; i < BIG_KEEP; i++) {
		if (!bg->keep[i])
			continue;
		bytes += bg->keep[i]->o.len + bg->keep[i]->o.nents * sizeof(uint32_t);
		if (i > 0 && bytes > BIG_KEEP_BYTES) {
			big_unref(bg->keep[i]);
			bg->keep[i] = NULL;
		}
	}
}

/* The loose object's stream is "tree <len>\0" then the content; chunk c
 * is its bytes [c * BIG_CHUNK, (c + 1) * BIG_CHUNK). */
static size_t big_header(const struct store_obj *o, char *hdr, size_t size)
{
	return (size_t)snprintf(hdr, size, "%s %zu", git_object_type2string(o->type), o->len) + 1;
}

/* The part of chunk c that is content: [*lo, *hi) of o->data. */
static void big_chunk_data(size_t hl, size_t len, size_t c, size_t *lo, size_t *hi)
{
	size_t s = (size_t)c * BIG_CHUNK, e = s + BIG_CHUNK;

	if (e > hl + len)
		e = hl + len;
	*lo = s > hl ? s - hl : 0;
	*hi = e - hl;
}

int store_big_hash(struct store *st, struct store_obj *o)
{
	char hdr[48];
	size_t hl = big_header(o, hdr, sizeof(hdr)), n = (hl + o->len + BIG_CHUNK - 1) / BIG_CHUNK;
	const struct store_obj *tpl = NULL;
	struct big_sums *s = calloc(1, sizeof(*s));
	_cleanup_(big_md_freep) EVP_MD_CTX *md = EVP_MD_CTX_new();
	unsigned int mdlen;
	int same, ok = 1;

	if (!s || !md || !(s->adler = calloc(n, sizeof(*s->adler))) ||
	    !(s->md = calloc(n, sizeof(*s->md)))) {
		big_sums_free(s);
		return -ENOMEM;
	}
	s->n = n;
	/* the newest kept tree of the same size: the same header, and the
	 * same chunk boundaries */
	for (unsigned i = 0; st->big && i < BIG_KEEP && !tpl; i++) {
		struct big_tree *b = st->big->keep[i];
		if (b && b->o.len == o->len && b->o.type == o->type && b->o.sums &&
		    b->o.sums->n == n)
			tpl = &b->o;
	}
	same = tpl != NULL; /* every chunk so far equal to the template's */
	if (!same)
		ok = EVP_DigestInit_ex(md, EVP_sha1(), NULL);
	for (size_t c = 0; c < n && ok; c++) {
		size_t lo, hi;
		int eq;

		big_chunk_data(hl, o->len, c, &lo, &hi);
		eq = tpl && memcmp(o->data + lo, tpl->data + lo, hi - lo) == 0;
		if (!(s->md[c] = EVP_MD_CTX_new())) {
			ok = 0;
			break;
		}
		if (same && eq) {
			s->adler[c] = tpl->sums->adler[c];
			ok = EVP_MD_CTX_copy_ex(s->md[c], tpl->sums->md[c]);
			continue;
		}
		if (same) { /* the first changed chunk: on from the state before it */
			same = 0;
			ok = c ? EVP_MD_CTX_copy_ex(md, tpl->sums->md[c - 1])
			       : EVP_DigestInit_ex(md, EVP_sha1(), NULL);
		}
		if (c == 0)
			ok = ok && EVP_DigestUpdate(md, hdr, hl);
		ok = ok && EVP_DigestUpdate(md, o->data + lo, hi - lo);
		if (eq) {
			s->adler[c] = tpl->sums->adler[c];
		} else {
			uLong a = adler32_z(1, NULL, 0);
			if (c == 0)
				a = adler32_z(a, (const Bytef *)hdr, hl);
			s->adler[c] = (uint32_t)adler32_z(a, o->data + lo, hi - lo);
		}
		ok = ok && EVP_MD_CTX_copy_ex(s->md[c], md);
	}
	if (ok && same) {
		o->oid = tpl->oid; /* all of it equal: the same object */
	} else if (ok) {
		ok = EVP_DigestFinal_ex(md, o->oid.id, &mdlen);
	}
	if (!ok) {
		big_sums_free(s);
		return -EIO;
	}
	big_sums_free(o->sums);
	o->sums = s;
	return 0;
}

static int big_writev_all(int fd, struct iovec *iov, size_t n)
{
	while (n > 0) {
		ssize_t w = writev(fd, iov, n > IOV_MAX ? IOV_MAX : (int)n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		while (n > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

/* objects/xx/tmp_obj_hermes_XXXXXX: git's prune sweeps such leftovers of a
 * killed writer. A collection may remove an empty objects/xx between our
 * mkdir and our create: both are tried again. */
static int big_tmpfile(struct store *st, const char *hex, char *dir, size_t dsize, char *tmp,
		       size_t tsize, int *made)
{
	int fd = -1;

	snprintf(dir, dsize, "%s/objects/%.2s", st->dir, hex);
	snprintf(tmp, tsize, "%s/tmp_obj_hermes_XXXXXX", dir);
	for (int i = 0; i < 3 && fd < 0; i++) {
		if (mkdir(dir, 0755) == 0)
			*made = 1;
		else if (errno != EEXIST)
			return -errno;
		snprintf(tmp, tsize, "%s/tmp_obj_hermes_XXXXXX", dir);
		fd = mkostemp(tmp, O_CLOEXEC);
		if (fd < 0 && errno != ENOENT)
			return -errno;
	}
	return fd < 0 ? -ENOENT : fd;
}

int store_big_write(struct store *st, struct store_obj *o, struct herr *e)
{
	char hdr[48], hex[GIT_OID_HEXSZ + 1], dir[PATH_MAX + 16], tmp[PATH_MAX + 64],
		path[PATH_MAX + 64];
	size_t hl = big_header(o, hdr, sizeof(hdr)), n, k = 0;
	static const unsigned char zhdr[2] = { 0x78, 0x01 };
	_cleanup_free_ struct iovec *iov = NULL;
	_cleanup_free_ unsigned char *blk = NULL;
	uint32_t adler;
	int fd, r, made = 0;

	if (!o->sums && (r = store_big_hash(st, o)) < 0)
		return err_sys(e, r, "cannot hash a tree of the checkpoint");
	n = o->sums->n;
	iov = calloc(3 * n + 2, sizeof(*iov));
	blk = malloc(5 * n);
	if (!iov || !blk)
		return err_set(e, -ENOMEM, "out of memory");
	adler = o->sums->adler[0];
	iov[k++] = (struct iovec){ (void *)zhdr, 2 };
	for (size_t c = 0; c < n; c++) {
		size_t lo, hi, clen;
		unsigned char *b = blk + 5 * c;

		big_chunk_data(hl, o->len, c, &lo, &hi);
		clen = hi - lo + (c == 0 ? hl : 0);
		if (c > 0)
			adler = (uint32_t)adler32_combine(adler, o->sums->adler[c], (z_off_t)clen);
		b[0] = c + 1 == n; /* BFINAL on the last, BTYPE 00: stored */
		b[1] = (unsigned char)(clen & 0xff);
		b[2] = (unsigned char)(clen >> 8);
		b[3] = (unsigned char)~b[1];
		b[4] = (unsigned char)~b[2];
		iov[k++] = (struct iovec){ b, 5 };
		if (c == 0)
			iov[k++] = (struct iovec){ hdr, hl };
		iov[k++] = (struct iovec){ o->data + lo, hi - lo };
	}
	adler = htonl(adler);
	iov[k++] = (struct iovec){ &adler, 4 };
	git_oid_tostr(hex, sizeof(hex), &o->oid);
	fd = big_tmpfile(st, hex, dir, sizeof(dir), tmp, sizeof(tmp), &made);
	if (fd < 0)
		return err_sys(e, fd, "cannot write a tree into the checkpoint store");
	snprintf(path, sizeof(path), "%s/%s", dir, hex + 2);
	r = big_writev_all(fd, iov, k);
	if (r == 0 && fchmod(fd, 0444) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0) {
		unlink(tmp);
		return err_sys(e, r, "cannot write a tree into the checkpoint store");
	}
	/* synced later, off the hot path (store_durable.c) */
	store_durable_note(st, path);
	store_durable_note(st, dir);
	if (made) { /* its entry in objects/ is new too */
		snprintf(dir, sizeof(dir), "%s/objects", st->dir);
		store_durable_note(st, dir);
	}
	big_keep(st, o);
	return 0;
}

/* Is the loose object at path whole: a zlib stream that inflates to bytes
 * whose SHA-1 is its name? 1, 0 (damaged), or -errno (cannot tell). */
static int big_loose_ok(const char *path, const char *hex)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	_cleanup_(big_md_freep) EVP_MD_CTX *md = EVP_MD_CTX_new();
	unsigned char out[1 << 16], sha[GIT_OID_RAWSZ];
	git_oid want;
	struct stat sb;
	z_stream zs = { 0 };
	unsigned char *p;
	unsigned int mdlen;
	int zr = Z_OK, ok;

	/* only what the bytes say is damage: a failure to look is not */
	if (fd < 0 || fstat(fd, &sb) < 0)
		return -errno;
	if (!md)
		return -ENOMEM;
	if (sb.st_size == 0 || git_oid_fromstr(&want, hex) < 0)
		return 0;
	p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	if (inflateInit(&zs) != Z_OK || !EVP_DigestInit_ex(md, EVP_sha1(), NULL)) {
		inflateEnd(&zs);
		munmap(p, (size_t)sb.st_size);
		return -ENOMEM;
	}
	ok = 1;
	zs.next_in = p;
	zs.avail_in = (uInt)sb.st_size;
	while (ok && zr == Z_OK) {
		zs.next_out = out;
		zs.avail_out = sizeof(out);
		zr = inflate(&zs, Z_NO_FLUSH);
		if (zr != Z_OK && zr != Z_STREAM_END)
			ok = 0;
		else
			ok = EVP_DigestUpdate(md, out, sizeof(out) - zs.avail_out);
		if (zr == Z_OK && zs.avail_in == 0 && zs.avail_out != 0)
			ok = 0; /* cut short */
	}
	inflateEnd(&zs);
	munmap(p, (size_t)sb.st_size);
	ok = ok && zr == Z_STREAM_END && EVP_DigestFinal_ex(md, sha, &mdlen) &&
	     memcmp(sha, want.id, GIT_OID_RAWSZ) == 0;
	return ok;
}

int store_big_verify_loose(struct store *st, long long since_ns)
{
	int lost = 0;

	for (int x = 0; x < 256; x++) {
		char dir[PATH_MAX + 16], path[PATH_MAX + 64], hex[GIT_OID_HEXSZ + 1];
		_cleanup_closedir_ DIR *d = NULL;
		struct dirent *de;

		snprintf(dir, sizeof(dir), "%s/objects/%02x", st->dir, x);
		if (!(d = opendir(dir)))
			continue;
		while ((de = readdir(d))) {
			struct stat sb;

			if (strlen(de->d_name) != GIT_OID_HEXSZ - 2 ||
			    strspn(de->d_name, "0123456789abcdef") != GIT_OID_HEXSZ - 2)
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			snprintf(hex, sizeof(hex), "%02x%s", x, de->d_name);
			if (stat(path, &sb) < 0 ||
			    (long long)sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec <
				    since_ns)
				continue;
			if (big_loose_ok(path, hex) != 0)
				continue; /* whole, gone, or not to be judged now */
			char lost_dir[PATH_MAX + 32], to[PATH_MAX + 96];
			snprintf(lost_dir, sizeof(lost_dir), "%s/objects/pack/lost", st->dir);
			snprintf(to, sizeof(to), "%s/loose-%s", lost_dir, hex);
			mkdir(lost_dir, 0755);
			if (rename(path, to) < 0 && unlink(path) < 0)
				continue;
			log_warn("checkpoint store %s: object %s is damaged (a crash before it "
				 "reached the disk); moved to objects/pack/lost",
				 st->dir, hex);
			lost++;
		}
	}
	return lost;
}

/* Views */

int store_tv_lookup(struct store *st, const git_oid *oid, struct store_tview *out)
{
	struct big_tree *b = big_find(st, oid);

	*out = (struct store_tview){ 0 };
	if (b) {
		b->refs++;
		out->b = b;
		return 0;
	}
	return git_tree_lookup(&out->t, st->repo, oid) < 0 ? -EIO : 0;
}

int store_tv_of(const git_tree *t, struct store_tview *out)
{
	git_tree *dup = NULL;

	*out = (struct store_tview){ 0 };
	if (git_tree_dup(&dup, (git_tree *)t) < 0)
		return -ENOMEM;
	out->t = dup;
	return 0;
}

void store_tv_free(struct store_tview *tv)
{
	if (!tv)
		return;
	git_tree_free(tv->t);
	big_unref(tv->b);
	*tv = (struct store_tview){ 0 };
}

const struct store_obj *store_tv_big(const struct store_tview *tv)
{
	return tv->b ? &tv->b->o : NULL;
}

size_t store_tv_count(const struct store_tview *tv)
{
	return tv->b ? tv->b->o.nents : tv->t ? git_tree_entrycount(tv->t) : 0;
}

/* "<octal mode> <name>\0<20-byte id>" at offset off of a kept tree. */
static void big_ent(const struct store_obj *o, size_t i, struct store_tent *out)
{
	const unsigned char *p = o->data + o->ents[i], *end = o->data + o->len, *nul;
	unsigned mode = 0;

	while (p < end && *p >= '0' && *p <= '7')
		mode = mode * 8 + (unsigned)(*p++ - '0');
	p++; /* the space */
	nul = p < end ? memchr(p, '\0', (size_t)(end - p)) : NULL;
	if (!nul || end - nul < 1 + GIT_OID_RAWSZ) {
		/* cannot be: it was written here */
		*out = (struct store_tent){ "", 0, 0, { { 0 } } };
		return;
	}
	out->name = (const char *)p;
	out->len = (size_t)(nul - p);
	out->mode = (git_filemode_t)mode;
	memcpy(out->oid.id, nul + 1, GIT_OID_RAWSZ);
}

void store_tv_at(const struct store_tview *tv, size_t i, struct store_tent *out)
{
	const git_tree_entry *te;

	if (tv->b) {
		big_ent(&tv->b->o, i, out);
		return;
	}
	te = git_tree_entry_byindex(tv->t, i);
	out->name = git_tree_entry_name(te);
	out->len = strlen(out->name);
	out->mode = git_tree_entry_filemode(te);
	git_oid_cpy(&out->oid, git_tree_entry_id(te));
}

/* git's order: a tree sorts as if its name ended with '/'. */
static int big_cmp(const char *a, size_t la, int ta, const char *b, size_t lb, int tb)
{
	size_t n = la < lb ? la : lb;
	int c = memcmp(a, b, n);
	unsigned ca, cb;

	if (c)
		return c;
	ca = la > n ? (unsigned char)a[n] : (ta ? '/' : 0);
	cb = lb > n ? (unsigned char)b[n] : (tb ? '/' : 0);
	return (int)ca - (int)cb;
}

/* The first entry of o not before (name, as a tree or not). */
static size_t big_lower(const struct store_obj *o, const char *name, size_t len, int tree)
{
	size_t lo = 0, hi = o->nents;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		struct store_tent te;

		big_ent(o, mid, &te);
		if (big_cmp(te.name, te.len, store_tent_is_tree(&te), name, len, tree) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int store_tv_byname(const struct store_tview *tv, const char *name, size_t len,
		    struct store_tent *out)
{
	if (tv->b) {
		const struct store_obj *o = &tv->b->o;
		for (int tree = 0; tree < 2; tree++) {
			size_t i = big_lower(o, name, len, tree);
			if (i < o->nents) {
				big_ent(o, i, out);
				if (out->len == len && memcmp(out->name, name, len) == 0 &&
				    store_tent_is_tree(out) == tree)
					return 1;
			}
		}
		return 0;
	}
	if (!tv->t || len > NAME_MAX)
		return 0;
	char nm[NAME_MAX + 1];
	memcpy(nm, name, len);
	nm[len] = '\0';
	const git_tree_entry *te = git_tree_entry_byname(tv->t, nm);
	if (!te)
		return 0;
	out->name = git_tree_entry_name(te);
	out->len = len;
	out->mode = git_tree_entry_filemode(te);
	git_oid_cpy(&out->oid, git_tree_entry_id(te));
	return 1;
}

size_t store_big_lower(const struct store_obj *o, const char *name, size_t len, int tree)
{
	return big_lower(o, name, len, tree);
}

void store_big_ent(const struct store_obj *o, size_t i, struct store_tent *out)
{
	big_ent(o, i, out);
}
