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
	const char *s = buf;

	if (crc)
		*crc = (uint32_t)crc32(*crc, buf, (uInt)len);
	while (len > 0) {
		ssize_t w = write(p->fd, s, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		s += w;
		len -= (size_t)w;
		p->off += (uint64_t)w;
	}
	return 0;
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
/* known: oid is already the object's id (from libgit2): no hashing */
static int pack_add(struct store_pack *p, git_object_t type, const void *buf, int fd,
		    size_t size, git_oid *oid, int known)
{
	unsigned char hdr[16], *h = hdr;
	char ghdr[32];
	uint64_t start = p->off;
	uint32_t crc = 0;
	size_t left = size, sz = size;
	EVP_MD_CTX *md = known ? NULL : EVP_MD_CTX_new();
	unsigned int mdlen;
	int r = 0, n;

	if (!known && !md)
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
	if (md) {
		EVP_DigestInit_ex(md, EVP_sha1(), NULL);
		EVP_DigestUpdate(md, ghdr, (size_t)n + 1);
	}
	deflateReset(&p->zs);
	r = pack_write(p, hdr, (size_t)(h - hdr), &crc);
	if (buf) {
		if (md)
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
	if (md) {
		EVP_DigestFinal_ex(md, oid->id, &mdlen);
		EVP_MD_CTX_free(md);
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

int store_pack_add_fd(struct store_pack *p, int fd, size_t size, git_oid *oid)
{
	return pack_add(p, GIT_OBJECT_BLOB, NULL, fd, size, oid, 0);
}

int store_pack_add_buf(struct store_pack *p, const void *buf, size_t len, git_oid *oid)
{
	return pack_add(p, GIT_OBJECT_BLOB, buf, -1, len, oid, 0);
}

int store_pack_add_object(struct store_pack *p, git_object_t type, const void *buf, size_t len,
			  const git_oid *oid)
{
	git_oid id = *oid;
	return pack_add(p, type, buf, -1, len, &id, 1);
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

static int pack_write_idx(struct store_pack *p, const char *path, const unsigned char sha[20])
{
	_cleanup_fclose_ FILE *f = fopen(path, "w+e");
	EVP_MD_CTX *md;
	uint32_t fan[256] = { 0 }, be;
	size_t nlarge = 0;
	unsigned char out[20];
	unsigned int mdlen;
	static const unsigned char magic[8] = { 0xff, 't', 'O', 'c', 0, 0, 0, 2 };
	_cleanup_free_ unsigned char *buf = NULL;
	long len;

	if (!f)
		return -errno;
	for (size_t i = 0; i < p->n; i++)
		fan[p->v[i].oid.id[0]]++;
	for (int b = 1; b < 256; b++)
		fan[b] += fan[b - 1];
	fwrite(magic, 1, 8, f);
	for (int b = 0; b < 256; b++) {
		be = htonl(fan[b]);
		fwrite(&be, 4, 1, f);
	}
	for (size_t i = 0; i < p->n; i++)
		fwrite(p->v[i].oid.id, 1, 20, f);
	for (size_t i = 0; i < p->n; i++) {
		be = htonl(p->v[i].crc);
		fwrite(&be, 4, 1, f);
	}
	for (size_t i = 0; i < p->n; i++) {
		if (p->v[i].off < 0x80000000ULL)
			be = htonl((uint32_t)p->v[i].off);
		else
			be = htonl(0x80000000u | (uint32_t)nlarge++);
		fwrite(&be, 4, 1, f);
	}
	for (size_t i = 0; i < p->n; i++) {
		if (p->v[i].off >= 0x80000000ULL) {
			uint32_t hl[2] = { htonl((uint32_t)(p->v[i].off >> 32)),
					   htonl((uint32_t)p->v[i].off) };
			fwrite(hl, 4, 2, f);
		}
	}
	fwrite(sha, 1, 20, f);
	if (fflush(f) != 0 || ferror(f))
		return errno ? -errno : -EIO;
	/* the trailer: SHA-1 of everything above */
	len = ftell(f);
	buf = malloc((size_t)len);
	md = EVP_MD_CTX_new();
	if (!buf || !md || pread(fileno(f), buf, (size_t)len, 0) != len) {
		EVP_MD_CTX_free(md);
		return -EIO;
	}
	EVP_DigestInit_ex(md, EVP_sha1(), NULL);
	EVP_DigestUpdate(md, buf, (size_t)len);
	EVP_DigestFinal_ex(md, out, &mdlen);
	EVP_MD_CTX_free(md);
	fwrite(out, 1, 20, f);
	if (fflush(f) != 0 || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}

int store_pack_finish(struct store_pack *p, struct herr *e)
{
	unsigned char sha[20];
	char hex[41], pack[PATH_MAX + 96], idx[PATH_MAX + 96], tmpidx[PATH_MAX + 96];
	uint32_t be = htonl((uint32_t)p->n);
	struct store *st = p->st;
	git_odb *odb = NULL;
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
	for (int i = 0; i < 20; i++)
		snprintf(hex + 2 * i, 3, "%02x", sha[i]);
	snprintf(pack, sizeof(pack), "%s/objects/pack/pack-%s.pack", p->st->dir, hex);
	snprintf(idx, sizeof(idx), "%s/objects/pack/pack-%s.idx", p->st->dir, hex);
	snprintf(tmpidx, sizeof(tmpidx), "%s.tmp", p->tmp);
	if (r == 0)
		r = pack_write_idx(p, tmpidx, sha);
	if (r == 0 && (fchmod(p->fd, 0444) < 0 || rename(p->tmp, pack) < 0))
		r = -errno;
	if (r == 0 && (chmod(tmpidx, 0444) < 0 || rename(tmpidx, idx) < 0))
		r = -errno;
	if (r < 0) {
		unlink(tmpidx);
		store_pack_abort(p);
		return err_sys(e, r, "cannot write the baseline pack");
	}
	pack_free(p, 0);
	if (git_repository_odb(&odb, st->repo) == 0) {
		git_odb_refresh(odb);
		git_odb_free(odb);
	}
	return 0;
}
