/* A pack writer: the blobs of a first baseline, and the few objects of
 * every other checkpoint (through the sink in store_sink.c), go into one
 * packfile (version 2, with its .idx) instead of one loose object file
 * each, whose creation dominated the cost of a checkpoint. Objects are
 * deflated at Z_BEST_SPEED without deltas; `git gc` makes them smaller. */
#include "store_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "cleanup.h"

struct pack_ent {
	git_oid oid;
	uint32_t crc;
	uint64_t off;
};

struct store_pack {
	struct store *st;
	int fd;
	char tmp[PATH_MAX + 64];
	uint64_t off;
	uint64_t limit; /* -EFBIG past this many bytes (0: none) */
	uint64_t peak;  /* the size it reached before an -EFBIG took an object back */
	struct pack_ent *v;
	size_t n, cap;
	uint32_t *slots; /* open addressing on the oid: index + 1 */
	size_t nslots;
	z_stream zs;
	unsigned char *zbuf, *rbuf;
};

#define PACK_CHUNK (1u << 17)

static int pack_write(struct store_pack *p, const void *buf, size_t len, uint32_t *crc)
{
	int r;

	if (crc)
		*crc = (uint32_t)crc32(*crc, buf, (uInt)len);
	if ((r = fsio_write_all(p->fd, buf, len)) == 0)
		p->off += (uint64_t)len;
	return r;
}

int store_pack_begin(struct store *st, int level, struct store_pack **out)
{
	struct store_pack *p = calloc(1, sizeof(*p));
	static const unsigned char hdr[12] = { 'P', 'A', 'C', 'K', 0, 0, 0, 2, 0, 0, 0, 0 };

	if (!p)
		return -ENOMEM;
	p->st = st;
	snprintf(p->tmp, sizeof(p->tmp), "%s/objects/pack/tmp_hermes_%d_XXXXXX", st->dir,
		 (int)getpid());
	p->fd = mkostemp(p->tmp, O_CLOEXEC);
	p->zbuf = malloc(PACK_CHUNK);
	p->rbuf = malloc(PACK_CHUNK);
	if (p->fd < 0 || !p->zbuf || !p->rbuf ||
	    deflateInit(&p->zs, level) != Z_OK) {
		int r = p->fd < 0 ? -errno : -ENOMEM;
		if (p->fd >= 0) {
			close(p->fd);
			unlink(p->tmp);
		}
		free(p->zbuf);
		free(p->rbuf);
		free(p);
		return r;
	}
	{
		int r = pack_write(p, hdr, sizeof(hdr), NULL);
		if (r < 0) {
			store_pack_abort(p);
			return r;
		}
	}
	*out = p;
	return 0;
}

static void pack_free(struct store_pack *p, int remove_tmp)
{
	close(p->fd);
	if (remove_tmp)
		unlink(p->tmp);
	deflateEnd(&p->zs);
	free(p->zbuf);
	free(p->rbuf);
	free(p->v);
	free(p->slots);
	free(p);
}

void store_pack_abort(struct store_pack *p)
{
	if (p)
		pack_free(p, 1);
}

static uint64_t pack_slot_hash(const git_oid *oid)
{
	uint64_t h;
	memcpy(&h, oid->id, sizeof(h));
	return h;
}

/* Is oid already in the pack? Adds it otherwise. */
static int pack_seen(struct store_pack *p, const git_oid *oid, uint32_t crc, uint64_t off)
{
	size_t s;

	if (p->n * 2 >= p->nslots) {
		size_t ns = p->nslots ? p->nslots * 2 : 4096;
		uint32_t *sl = calloc(ns, sizeof(*sl));
		if (!sl)
			return -ENOMEM;
		for (size_t i = 0; i < p->n; i++) {
			s = pack_slot_hash(&p->v[i].oid) & (ns - 1);
			while (sl[s])
				s = (s + 1) & (ns - 1);
			sl[s] = (uint32_t)i + 1;
		}
		free(p->slots);
		p->slots = sl;
		p->nslots = ns;
	}
	for (s = pack_slot_hash(oid) & (p->nslots - 1); p->slots[s]; s = (s + 1) & (p->nslots - 1))
		if (git_oid_equal(&p->v[p->slots[s] - 1].oid, oid))
			return 1;
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 4096;
		struct pack_ent *v = realloc(p->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		p->v = v;
		p->cap = cap;
	}
	p->v[p->n] = (struct pack_ent){ *oid, crc, off };
	p->slots[s] = (uint32_t)++p->n;
	return 0;
}

/* Deflate len bytes (flush at the end) into the pack. */
static int pack_deflate(struct store_pack *p, const void *buf, size_t len, int last,
			uint32_t *crc)
{
	int zr, r;

	p->zs.next_in = (Bytef *)buf;
	p->zs.avail_in = (uInt)len;
	do {
		p->zs.next_out = p->zbuf;
		p->zs.avail_out = PACK_CHUNK;
		zr = deflate(&p->zs, last ? Z_FINISH : Z_NO_FLUSH);
		if (zr == Z_STREAM_ERROR)
			return -EIO;
		r = pack_write(p, p->zbuf, PACK_CHUNK - p->zs.avail_out, crc);
		if (r < 0)
			return r;
	} while (p->zs.avail_out == 0 || (last && zr != Z_STREAM_END));
	return 0;
}

/* One blob from a buffer or (buf NULL) from fd, size bytes either way. */
static int pack_add(struct store_pack *p, git_object_t type, const void *buf, int fd,
		    size_t size, git_oid *oid)
{
	unsigned char hdr[16], *h = hdr;
	char ghdr[32];
	uint64_t start = p->off;
	uint32_t crc = 0;
	size_t left = size, sz = size;
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	unsigned int mdlen;
	int r = 0, n;

	if (!md)
		return -ENOMEM;
	/* entry header: type (commit 1, tree 2, blob 3), size in 4 + 7*k bits */
	*h = (unsigned char)(((unsigned)type << 4) | (sz & 0x0f));
	sz >>= 4;
	while (sz) {
		*h++ |= 0x80;
		*h = (unsigned char)(sz & 0x7f);
		sz >>= 7;
	}
	h++;
	n = snprintf(ghdr, sizeof(ghdr), "%s %zu", git_object_type2string(type), size);
	EVP_DigestInit_ex(md, EVP_sha1(), NULL);
	EVP_DigestUpdate(md, ghdr, (size_t)n + 1);
	deflateReset(&p->zs);
	r = pack_write(p, hdr, (size_t)(h - hdr), &crc);
	if (buf) {
		EVP_DigestUpdate(md, buf, size);
		if (r == 0)
			r = pack_deflate(p, buf, size, 1, &crc);
	} else {
		while (r == 0) {
			size_t want = left < PACK_CHUNK ? left : PACK_CHUNK;
			ssize_t got = want ? read(fd, p->rbuf, want) : 0;
			if (got < 0 && errno == EINTR)
				continue;
			if (got < 0) {
				r = -errno;
				break;
			}
			if ((size_t)got != want && got == 0) {
				r = -EAGAIN; /* shorter than its stat said: changed */
				break;
			}
			left -= (size_t)got;
			EVP_DigestUpdate(md, p->rbuf, (size_t)got);
			r = pack_deflate(p, p->rbuf, (size_t)got, left == 0, &crc);
			if (left == 0)
				break;
		}
		if (r == 0 && read(fd, p->rbuf, 1) != 0)
			r = -EAGAIN; /* longer than its stat said */
	}
	EVP_DigestFinal_ex(md, oid->id, &mdlen);
	EVP_MD_CTX_free(md);
	if (r == 0 && p->limit && p->off > p->limit) {
		r = -EFBIG;
		p->peak = p->off;
	}
	if (r == 0) {
		r = pack_seen(p, oid, crc, start);
		if (r == 1)
			r = 0; /* a duplicate: take it back out */
		else if (r == 0)
			return 0;
	}
	if (ftruncate(p->fd, (off_t)start) < 0 || lseek(p->fd, (off_t)start, SEEK_SET) < 0)
		return -EIO;
	p->off = start;
	return r;
}

void store_pack_limit(struct store_pack *p, unsigned long long bytes)
{
	p->limit = bytes;
}

unsigned long long store_pack_size(const struct store_pack *p)
{
	return p->peak > p->off ? p->peak : p->off;
}

int store_pack_add_fd(struct store_pack *p, int fd, size_t size, git_oid *oid)
{
	return pack_add(p, GIT_OBJECT_BLOB, NULL, fd, size, oid);
}

int store_pack_add_buf(struct store_pack *p, const void *buf, size_t len, git_oid *oid)
{
	return pack_add(p, GIT_OBJECT_BLOB, buf, -1, len, oid);
}

static int pack_ent_cmp(const void *a, const void *b)
{
	return git_oid_cmp(&((const struct pack_ent *)a)->oid, &((const struct pack_ent *)b)->oid);
}

/* SHA-1 of the first len bytes of fd. */
static int pack_sha1_file(int fd, uint64_t len, unsigned char out[20], unsigned char *buf)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	uint64_t at = 0;
	unsigned int mdlen;

	if (!md)
		return -ENOMEM;
	EVP_DigestInit_ex(md, EVP_sha1(), NULL);
	while (at < len) {
		size_t want = len - at < PACK_CHUNK ? (size_t)(len - at) : PACK_CHUNK;
		ssize_t got = pread(fd, buf, want, (off_t)at);
		if (got <= 0) {
			EVP_MD_CTX_free(md);
			return -EIO;
		}
		EVP_DigestUpdate(md, buf, (size_t)got);
		at += (uint64_t)got;
	}
	EVP_DigestFinal_ex(md, out, &mdlen);
	EVP_MD_CTX_free(md);
	return 0;
}

static void pack_put32(unsigned char **at, uint32_t v)
{
	uint32_t be = htonl(v);
	memcpy(*at, &be, 4);
	*at += 4;
}

/* The .idx (version 2) of entries sorted by oid, built in memory. */
static unsigned char *pack_idx_build(const struct pack_ent *v, size_t n,
				     const unsigned char sha[20], size_t *len)
{
	static const unsigned char magic[8] = { 0xff, 't', 'O', 'c', 0, 0, 0, 2 };
	uint32_t fan[256] = { 0 };
	size_t nlarge = 0, large = 0;
	unsigned char *buf, *at;
	unsigned int mdlen;

	for (size_t i = 0; i < n; i++) {
		fan[v[i].oid.id[0]]++;
		nlarge += v[i].off >= 0x80000000ULL;
	}
	for (int b = 1; b < 256; b++)
		fan[b] += fan[b - 1];
	*len = 8 + 256 * 4 + n * 28 + nlarge * 8 + 40;
	buf = malloc(*len);
	if (!buf)
		return NULL;
	at = buf;
	memcpy(at, magic, 8);
	at += 8;
	for (int b = 0; b < 256; b++)
		pack_put32(&at, fan[b]);
	for (size_t i = 0; i < n; i++, at += 20)
		memcpy(at, v[i].oid.id, 20);
	for (size_t i = 0; i < n; i++)
		pack_put32(&at, v[i].crc);
	for (size_t i = 0; i < n; i++)
		pack_put32(&at, v[i].off < 0x80000000ULL ? (uint32_t)v[i].off
							  : 0x80000000u | (uint32_t)large++);
	for (size_t i = 0; i < n; i++) {
		if (v[i].off >= 0x80000000ULL) {
			pack_put32(&at, (uint32_t)(v[i].off >> 32));
			pack_put32(&at, (uint32_t)v[i].off);
		}
	}
	memcpy(at, sha, 20);
	at += 20;
	/* the trailer: SHA-1 of everything above */
	if (!EVP_Digest(buf, (size_t)(at - buf), at, &mdlen, EVP_sha1(), NULL)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Put a complete pack (fd, trailer included, at tmp) and the index of its
 * entries (sorted) in place: the pack first, as git looks for packs by
 * their index. Neither is fsync'ed here (two fdatasyncs cost 3-16 ms, more
 * than the rest of a checkpoint): a killed process leaves the page cache
 * whole, the ref moves only after both are in place, and a power cut
 * before the sync that follows is repaired at open (store_durable.c). */
static int pack_publish(struct store *st, int fd, const char *tmp, const struct pack_ent *v,
			size_t n, const unsigned char sha[20])
{
	char hex[41], pack[PATH_MAX + 96], idx[PATH_MAX + 96], tmpidx[PATH_MAX + 96];
	_cleanup_free_ unsigned char *ibuf = NULL;
	_cleanup_close_ int ifd = -1;
	size_t ilen;
	int r = 0;

	for (int i = 0; i < 20; i++)
		snprintf(hex + 2 * i, 3, "%02x", sha[i]);
	snprintf(pack, sizeof(pack), "%s/objects/pack/pack-%s.pack", st->dir, hex);
	snprintf(idx, sizeof(idx), "%s/objects/pack/pack-%s.idx", st->dir, hex);
	/* not "<tmp>.idx": git gc deletes an .idx without its .pack as
	 * garbage (clean_pack_garbage), and a background collection would
	 * take it from under this rename */
	snprintf(tmpidx, sizeof(tmpidx), "%s_idx", tmp);
	ibuf = pack_idx_build(v, n, sha, &ilen);
	if (!ibuf)
		return -ENOMEM;
	ifd = open(tmpidx, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0444);
	if (ifd < 0)
		return -errno;
	r = fsio_write_all(ifd, ibuf, ilen);
	if (r == 0 && (fchmod(fd, 0444) < 0 || rename(tmp, pack) < 0))
		r = -errno;
	if (r == 0 && rename(tmpidx, idx) < 0)
		r = -errno;
	if (r < 0) {
		unlink(tmpidx);
		return r;
	}
	/* synced later, off the hot path (store_durable.c) */
	store_durable_note(st, pack);
	store_durable_note(st, idx);
	/* No git_odb_refresh here: it rescans objects/pack, O(packs), on
	 * every checkpoint. The next checkpoint finds what it reads again in
	 * the object cache, and a read that misses refreshes by itself. */
	return 0;
}

int store_pack_finish(struct store_pack *p, struct herr *e)
{
	unsigned char sha[20];
	uint32_t be = htonl((uint32_t)p->n);
	int r;

	if (p->n == 0) {
		store_pack_abort(p);
		return 0;
	}
	qsort(p->v, p->n, sizeof(*p->v), pack_ent_cmp);
	r = pwrite(p->fd, &be, 4, 8) == 4 ? 0 : (errno ? -errno : -EIO);
	if (r == 0)
		r = pack_sha1_file(p->fd, p->off, sha, p->rbuf);
	if (r == 0 && pwrite(p->fd, sha, 20, (off_t)p->off) != 20)
		r = errno ? -errno : -EIO;
	if (r == 0)
		r = pack_publish(p->st, p->fd, p->tmp, p->v, p->n, sha);
	if (r < 0) {
		store_pack_abort(p);
		return err_sys(e, r, "cannot write the baseline pack");
	}
	pack_free(p, 0);
	return 0;
}

/* A buffered pack being written: every byte goes through the SHA-1 of the
 * pack, and the bytes of one entry through its CRC. */
struct pack_out {
	int fd;
	EVP_MD_CTX *md;
	unsigned char *buf;
	size_t used;
	uint64_t off;
	int err;
};

static void pack_out_flush(struct pack_out *o)
{
	if (o->err == 0 && o->used)
		o->err = fsio_write_all(o->fd, o->buf, o->used);
	o->used = 0;
}

static void pack_out_put(struct pack_out *o, const void *data, size_t len, uint32_t *crc)
{
	const unsigned char *s = data;

	if (crc)
		*crc = (uint32_t)crc32_z(*crc, s, len);
	EVP_DigestUpdate(o->md, s, len);
	o->off += len;
	while (len > 0 && o->err == 0) {
		size_t room = PACK_CHUNK - o->used, k = len < room ? len : room;
		memcpy(o->buf + o->used, s, k);
		o->used += k;
		s += k;
		len -= k;
		if (o->used == PACK_CHUNK)
			pack_out_flush(o);
	}
}

/* An entry: its header, then the content as a zlib stream of stored
 * blocks (no compression: the background repack compresses). */
static void pack_out_object(struct pack_out *o, const struct store_obj *ob, uint32_t *crc)
{
	unsigned char hdr[16], *h = hdr, blk[5];
	size_t sz = ob->len, at = 0;
	uint32_t adler = (uint32_t)adler32_z(1, ob->data, ob->len);
	static const unsigned char zhdr[2] = { 0x78, 0x01 };

	*h = (unsigned char)(((unsigned)ob->type << 4) | (sz & 0x0f));
	sz >>= 4;
	while (sz) {
		*h++ |= 0x80;
		*h = (unsigned char)(sz & 0x7f);
		sz >>= 7;
	}
	h++;
	pack_out_put(o, hdr, (size_t)(h - hdr), crc);
	pack_out_put(o, zhdr, 2, crc);
	do {
		size_t k = ob->len - at > 65535 ? 65535 : ob->len - at;
		blk[0] = at + k == ob->len; /* BFINAL, BTYPE 00 */
		blk[1] = (unsigned char)(k & 0xff);
		blk[2] = (unsigned char)(k >> 8);
		blk[3] = (unsigned char)~blk[1];
		blk[4] = (unsigned char)~blk[2];
		pack_out_put(o, blk, 5, crc);
		pack_out_put(o, ob->data + at, k, crc);
		at += k;
	} while (at < ob->len);
	adler = htonl(adler);
	pack_out_put(o, &adler, 4, crc);
}

int store_pack_write_objects(struct store *st, const struct store_obj *v, size_t n,
			     struct herr *e)
{
	unsigned char hdr[12] = { 'P', 'A', 'C', 'K', 0, 0, 0, 2 }, sha[20];
	char tmp[PATH_MAX + 64];
	_cleanup_free_ struct pack_ent *ents = calloc(n ? n : 1, sizeof(*ents));
	struct pack_out o = { .fd = -1 };
	unsigned int mdlen;
	int r;

	snprintf(tmp, sizeof(tmp), "%s/objects/pack/tmp_hermes_%d_XXXXXX", st->dir, (int)getpid());
	o.md = EVP_MD_CTX_new();
	o.buf = malloc(PACK_CHUNK);
	if (!ents || !o.md || !o.buf) {
		r = -ENOMEM;
		goto out;
	}
	o.fd = mkostemp(tmp, O_CLOEXEC);
	if (o.fd < 0) {
		r = -errno;
		goto out;
	}
	EVP_DigestInit_ex(o.md, EVP_sha1(), NULL);
	{
		unsigned char *at = hdr + 8;
		pack_put32(&at, (uint32_t)n);
	}
	pack_out_put(&o, hdr, sizeof(hdr), NULL);
	for (size_t i = 0; i < n; i++) {
		ents[i].oid = v[i].oid;
		ents[i].off = o.off;
		ents[i].crc = 0;
		pack_out_object(&o, &v[i], &ents[i].crc);
	}
	EVP_DigestFinal_ex(o.md, sha, &mdlen);
	pack_out_flush(&o);
	r = o.err;
	if (r == 0)
		r = fsio_write_all(o.fd, sha, 20);
	if (r == 0) {
		qsort(ents, n, sizeof(*ents), pack_ent_cmp);
		r = pack_publish(st, o.fd, tmp, ents, n, sha);
	}
	if (r < 0)
		unlink(tmp);
out:
	if (o.fd >= 0)
		close(o.fd);
	EVP_MD_CTX_free(o.md);
	free(o.buf);
	return r < 0 ? err_sys(e, r, "cannot write the checkpoint's objects") : 0;
}
