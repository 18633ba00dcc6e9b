/* The full scan: walk the tree, hash what the stat cache cannot vouch for,
 * build the tree objects bottom-up. Used for the first baseline and for a
 * checkpoint of an unmounted tree. The stat cache (hermes-statcache) keeps
 * (mode, size, mtime, ctime, ino) -> blob for every file of the last scan. */
#include "store_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"

#define SC_MAGIC "HSC1"
/* kernel timestamps are coarse (a jiffy): an entry is trusted only when the
 * file's times are older than the scan that recorded it by this margin */
#define SC_RACY_NS 100000000LL

struct sc_entry {
	git_oid oid;
	uint32_t mode;
	uint64_t size, ino;
	int64_t mtime, ctime;
	char *path;
};

struct sc_table {
	struct sc_entry *v;
	size_t n, cap;
	uint32_t *slots; /* index + 1, 0 = empty */
	size_t nslots;
	int64_t scan_start;
	char *blob; /* the loaded file (paths point into it) */
};

struct scan_ctx {
	struct store *st;
	git_odb *odb;
	git_tree *prev;
	struct sc_table old, new_tab;
	struct store_skips *skips;
	store_progress_fn progress;
	void *progress_arg;
	size_t files, counted;
	unsigned long long bytes;
	long long limit; /* count only, stop above it (baseline check) */
	struct store_pack *pack; /* baseline: blobs go into one pack */
	struct herr *e;
};

static uint64_t sc_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000LL + t->tv_nsec;
}

static void sc_free(struct sc_table *t)
{
	if (!t->blob)
		for (size_t i = 0; i < t->n; i++)
			free(t->v[i].path);
	free(t->v);
	free(t->slots);
	free(t->blob);
	memset(t, 0, sizeof(*t));
}

static int sc_index(struct sc_table *t)
{
	t->nslots = 16;
	while (t->nslots < t->n * 2)
		t->nslots *= 2;
	t->slots = calloc(t->nslots, sizeof(*t->slots));
	if (!t->slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		size_t s = sc_hash(t->v[i].path) & (t->nslots - 1);
		while (t->slots[s])
			s = (s + 1) & (t->nslots - 1);
		t->slots[s] = (uint32_t)i + 1;
	}
	return 0;
}

static const struct sc_entry *sc_find(const struct sc_table *t, const char *path)
{
	if (!t->slots)
		return NULL;
	for (size_t s = sc_hash(path) & (t->nslots - 1); t->slots[s];
	     s = (s + 1) & (t->nslots - 1))
		if (strcmp(t->v[t->slots[s] - 1].path, path) == 0)
			return &t->v[t->slots[s] - 1];
	return NULL;
}

static int sc_add(struct sc_table *t, const char *path, const git_oid *oid,
		  const struct stat *sb)
{
	struct sc_entry *en;

	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct sc_entry *v = realloc(t->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	en = &t->v[t->n];
	en->path = strdup(path);
	if (!en->path)
		return -ENOMEM;
	en->oid = *oid;
	en->mode = sb->st_mode;
	en->size = (uint64_t)sb->st_size;
	en->ino = sb->st_ino;
	en->mtime = ts_ns(&sb->st_mtim);
	en->ctime = ts_ns(&sb->st_ctim);
	t->n++;
	return 0;
}

/* Record: oid[20] mode[4] size[8] ino[8] mtime[8] ctime[8] len[2] path. */
#define SC_REC 58

static void sc_load(struct store *st, struct sc_table *t)
{
	char path[PATH_MAX + 32];
	_cleanup_close_ int fd = -1;
	struct stat sb;
	char *p, *end;

	snprintf(path, sizeof(path), "%s/hermes-statcache", st->dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb) < 0 || sb.st_size < 12)
		return;
	t->blob = malloc((size_t)sb.st_size + 1);
	if (!t->blob || read(fd, t->blob, (size_t)sb.st_size) != sb.st_size ||
	    memcmp(t->blob, SC_MAGIC, 4) != 0) {
		sc_free(t);
		return;
	}
	memcpy(&t->scan_start, t->blob + 4, 8);
	p = t->blob + 12;
	end = t->blob + sb.st_size;
	while (end - p >= SC_REC) {
		struct sc_entry en;
		uint16_t len;

		memcpy(en.oid.id, p, 20);
		memcpy(&en.mode, p + 20, 4);
		memcpy(&en.size, p + 24, 8);
		memcpy(&en.ino, p + 32, 8);
		memcpy(&en.mtime, p + 40, 8);
		memcpy(&en.ctime, p + 48, 8);
		memcpy(&len, p + 56, 2);
		if (end - p - SC_REC < len + 1 || p[SC_REC + len] != '\0')
			break;
		en.path = p + SC_REC;
		p += SC_REC + len + 1;
		if (t->n == t->cap) {
			size_t cap = t->cap ? t->cap * 2 : 1024;
			struct sc_entry *v = realloc(t->v, cap * sizeof(*v));
			if (!v)
				break;
			t->v = v;
			t->cap = cap;
		}
		t->v[t->n++] = en;
	}
	if (sc_index(t) < 0)
		sc_free(t);
}

static int sc_save(struct store *st, const struct sc_table *t)
{
	char path[PATH_MAX + 32], tmp[PATH_MAX + 48];
	_cleanup_fclose_ FILE *f = NULL;

	snprintf(path, sizeof(path), "%s/hermes-statcache", st->dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int)getpid());
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fwrite(SC_MAGIC, 1, 4, f);
	fwrite(&t->scan_start, 8, 1, f);
	for (size_t i = 0; i < t->n; i++) {
		const struct sc_entry *en = &t->v[i];
		char rec[SC_REC];
		size_t l = strlen(en->path);
		uint16_t len = (uint16_t)l;

		if (l > UINT16_MAX)
			continue;
		memcpy(rec, en->oid.id, 20);
		memcpy(rec + 20, &en->mode, 4);
		memcpy(rec + 24, &en->size, 8);
		memcpy(rec + 32, &en->ino, 8);
		memcpy(rec + 40, &en->mtime, 8);
		memcpy(rec + 48, &en->ctime, 8);
		memcpy(rec + 56, &len, 2);
		fwrite(rec, 1, SC_REC, f);
		fwrite(en->path, 1, l + 1, f);
	}
	if (fflush(f) != 0 || ferror(f)) {
		unlink(tmp);
		return -EIO;
	}
	return rename(tmp, path) < 0 ? -errno : 0;
}

static int sc_trusted(const struct sc_table *t, const struct sc_entry *en,
		      const struct stat *sb)
{
	int64_t m = ts_ns(&sb->st_mtim), c = ts_ns(&sb->st_ctim);

	return en->mode == sb->st_mode && en->size == (uint64_t)sb->st_size &&
	       en->ino == sb->st_ino && en->mtime == m && en->ctime == c &&
	       m < t->scan_start - SC_RACY_NS && c < t->scan_start - SC_RACY_NS;
}

/* Where the bytes of a file being hashed go: store_hash_at puts them in
 * the sink, the first baseline into its pack. */
struct hash_dest {
	int (*put_buf)(void *ctx, const void *buf, size_t len, git_oid *oid);
	int (*put_fd)(void *ctx, int fd, size_t size, git_oid *oid); /* -EAGAIN: changed */
	void *ctx;
};

/* Reading the tree for a checkpoint is not a use of its files: their
 * access times stay (O_NOATIME, allowed to the owner and to root). */
static int scan_open(int dirfd, const char *name, int flags)
{
	int fd = openat(dirfd, name, flags | O_NOATIME);

	if (fd < 0 && errno == EPERM)
		fd = openat(dirfd, name, flags);
	return fd;
}

static int hash_at(const struct hash_dest *d, int dirfd, const char *name,
		   const struct stat *sb, git_oid *oid, struct stat *seen)
{
	int r = -EIO;

	if (S_ISLNK(sb->st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlinkat(dirfd, name, target, sizeof(target));
		if (n < 0)
			return -errno;
		r = d->put_buf(d->ctx, target, (size_t)n, oid);
		if (r == 0 && fstatat(dirfd, name, seen, AT_SYMLINK_NOFOLLOW) < 0)
			r = -errno;
		return r;
	}
	for (int tries = 0; tries < 3; tries++) {
		_cleanup_close_ int fd = scan_open(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
							   O_CLOEXEC);
		if (fd < 0)
			return -errno;
		if (fstat(fd, seen) < 0 || !S_ISREG(seen->st_mode))
			return -ENOENT;
		r = d->put_fd(d->ctx, fd, (size_t)seen->st_size, oid);
		if (r != -EAGAIN)
			break;
	}
	return r;
}

struct sink_dest {
	struct store *st;
	const git_oid *have;
};

static int sink_put_buf(void *ctx, const void *buf, size_t len, git_oid *oid)
{
	return store_sink_put(((struct sink_dest *)ctx)->st, GIT_OBJECT_BLOB, buf, len, oid);
}

static int sink_put_fd(void *ctx, int fd, size_t size, git_oid *oid)
{
	struct sink_dest *s = ctx;
	return fsio_hash_fd(s->st, fd, size, s->have, oid);
}

int store_hash_at(struct store *st, int dirfd, const char *name, const struct stat *sb,
		  const git_oid *have, git_oid *oid, struct stat *seen)
{
	struct sink_dest s = { st, have };
	const struct hash_dest d = { sink_put_buf, sink_put_fd, &s };

	return hash_at(&d, dirfd, name, sb, oid, seen);
}

#define STABLE_MAX (64u << 20)
#define STABLE_ALIGN 4096u

int store_hash_stable_at(struct store *st, int dirfd, const char *name,
			 const struct stat *sb, const git_oid *have, git_oid *oid,
			 struct stat *seen)
{
	_cleanup_close_ int fd = -1;
	void *buf = NULL;
	size_t cap;
	ssize_t n;
	int r;

	if (!S_ISREG(sb->st_mode) || (size_t)sb->st_size > STABLE_MAX)
		return store_hash_at(st, dirfd, name, sb, have, oid, seen);
	fd = scan_open(dirfd, name, O_RDONLY | O_DIRECT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == EINVAL) /* no O_DIRECT here */
		return store_hash_at(st, dirfd, name, sb, have, oid, seen);
	if (fd < 0)
		return -errno;
	if (fstat(fd, seen) < 0 || !S_ISREG(seen->st_mode))
		return -ENOENT;
	/* room for what it holds plus a block, so one read reaches the end
	 * even if the file grew since */
	cap = ((size_t)seen->st_size + 2 * STABLE_ALIGN) & ~(size_t)(STABLE_ALIGN - 1);
	if (cap > STABLE_MAX + STABLE_ALIGN)
		return store_hash_at(st, dirfd, name, sb, have, oid, seen);
	if (posix_memalign(&buf, STABLE_ALIGN, cap) != 0)
		return -ENOMEM;
	/* one call: the filesystem holds the file's lock against writers
	 * across it, so it sees each write() whole or not at all */
	n = pread(fd, buf, cap, 0);
	if (n < 0 && errno != EINVAL) {
		r = -errno;
		free(buf);
		return r;
	}
	if (n < 0 || (size_t)n == cap) {
		/* alignment refused, or it grew past the room: read it plainly */
		free(buf);
		return store_hash_at(st, dirfd, name, sb, have, oid, seen);
	}
	seen->st_size = n;
	r = fsio_hash_buf(st, buf, (size_t)n, have, oid);
	free(buf);
	return r;
}

static int pack_put_buf(void *ctx, const void *buf, size_t len, git_oid *oid)
{
	return store_pack_add_buf(ctx, buf, len, oid);
}

static int pack_put_fd(void *ctx, int fd, size_t size, git_oid *oid)
{
	return store_pack_add_fd(ctx, fd, size, oid);
}

/* Like store_hash_at, into the baseline pack. */
static int scan_pack_hash(struct scan_ctx *c, int dirfd, const char *name,
			  const struct stat *sb, git_oid *oid, struct stat *seen)
{
	const struct hash_dest d = { pack_put_buf, pack_put_fd, c->pack };

	return hash_at(&d, dirfd, name, sb, oid, seen);
}

static int scan_file(struct scan_ctx *c, int dirfd, const char *name, const char *rel,
		     const struct stat *sb, git_treebuilder *bld)
{
	const struct sc_entry *en = sc_find(&c->old, rel);
	struct stat seen = *sb;
	git_oid oid;
	int r;

	if (en && sc_trusted(&c->old, en, sb)) {
		oid = en->oid;
	} else {
		if (S_ISREG(sb->st_mode) && sb->st_size > c->st->max_file_bytes) {
			git_tree_entry *te = NULL;
			if (!c->prev || git_tree_entry_bypath(&te, c->prev, rel) != 0) {
				store_skip_note(c->skips, rel, (long long)sb->st_size);
				return 0;
			}
			git_tree_entry_free(te);
		}
		r = c->pack ? scan_pack_hash(c, dirfd, name, sb, &oid, &seen)
			    : store_hash_at(c->st, dirfd, name, sb, en ? &en->oid : NULL, &oid,
					    &seen);
		if (r == -ENOENT)
			return 0; /* vanished or changed type under us */
		if (r == -EPIPE) { /* the object store refused the write */
			r = store_git_err(c->e, r, "cannot write it into the checkpoint store");
			return err_prefix(c->e, "%s", rel);
		}
		if (r == -EFBIG && c->pack) /* past the cap: counted for the estimate */
			c->bytes += (unsigned long long)sb->st_size;
		if (r < 0)
			return err_sys(c->e, r, "cannot read %s", rel);
		c->bytes += (unsigned long long)seen.st_size;
	}
	if (git_treebuilder_insert(NULL, bld, name, &oid, store_mode_of(&seen)) < 0)
		return 0; /* a name git cannot hold (e.g. ".git"): leave it out */
	if (sc_add(&c->new_tab, rel, &oid, &seen) < 0)
		return err_set(c->e, -ENOMEM, "out of memory");
	if (++c->files % 1000 == 0 && c->progress)
		c->progress(c->progress_arg, c->files, c->bytes);
	return 0;
}

/* Scan directory dirfd (owned) at rel ("" for the root) into *oid (the
 * empty tree when it holds nothing tracked); *nonempty tells whether it
 * holds anything tracked, empty directories included. */
static int scan_dir(struct scan_ctx *c, int fd, char *rel, size_t rlen, git_oid *oid,
		    int *nonempty)
{
	_cleanup_closedir_ DIR *d = fdopendir(fd);
	git_treebuilder *bld = NULL;
	struct dirent *de;
	int r = 0;

	*nonempty = 0;
	if (!d) {
		r = -errno;
		close(fd);
		return err_sys(c->e, r, "cannot read directory %s", rlen ? rel : ".");
	}
	if (c->limit < 0 && git_treebuilder_new(&bld, c->st->repo, NULL) < 0)
		return store_git_err(c->e, -EIO, "cannot build a tree");
	while (r == 0 && (de = readdir(d))) {
		const char *name = de->d_name;
		size_t nlen = strlen(name);
		struct stat sb;

		if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))
			continue;
		if (rlen + nlen + 2 >= PATH_MAX)
			continue;
		if (rlen)
			rel[rlen] = '/';
		memcpy(rel + rlen + (rlen ? 1 : 0), name, nlen + 1);
		if (fstatat(fd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
			goto next;
		if (S_ISDIR(sb.st_mode)) {
			int sub, cfd;
			git_oid soid;
			if (store_ignore_match_leaf(c->st->ignore, rel, 1))
				goto next;
			cfd = scan_open(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (cfd < 0)
				goto next;
			if (store_ignore_foreign_dir(cfd)) {
				close(cfd);
				goto next;
			}
			/* an empty directory is kept as git's empty tree, which
			 * the git CLI reads (and fsck --strict passes) */
			r = scan_dir(c, cfd, rel, rlen + nlen + (rlen ? 1 : 0), &soid, &sub);
			if (r == 0 && bld &&
			    git_treebuilder_insert(NULL, bld, name, &soid, GIT_FILEMODE_TREE) == 0)
				*nonempty = 1;
		} else if (S_ISREG(sb.st_mode) || S_ISLNK(sb.st_mode)) {
			if (store_ignore_match_leaf(c->st->ignore, rel, 0))
				goto next;
			if (c->limit >= 0) {
				if ((long long)++c->counted > c->limit)
					r = -EFBIG;
				if (!S_ISREG(sb.st_mode) || sb.st_size <= c->st->max_file_bytes)
					c->bytes += (unsigned long long)sb.st_size;
				goto next;
			}
			r = scan_file(c, fd, name, rel, &sb, bld);
			if (r == 0 && git_treebuilder_entrycount(bld) > 0)
				*nonempty = 1;
		}
next:
		rel[rlen] = '\0';
	}
	if (r == 0 && bld && STORE_RETRY(git_treebuilder_write(oid, bld)) < 0)
		r = store_git_err(c->e, -EIO, "cannot write a tree");
	git_treebuilder_free(bld);
	return r;
}

int store_baseline_check(struct store *st, int rootfd, struct herr *e)
{
	struct scan_ctx c = { .st = st, .limit = st->max_files, .e = e };
	char rel[PATH_MAX] = "";
	git_oid unused;
	int nonempty, fd, r;

	r = store_ignore_refresh(st, rootfd, e);
	if (r < 0)
		return r;
	fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return err_sys(e, -errno, "cannot scan the tree");
	r = scan_dir(&c, fd, rel, 0, &unused, &nonempty);
	st->baseline_bytes = (long long)c.bytes;
	if (r == -EFBIG) {
		/* said the same way by mount, status, rollback and checkpoint */
		snprintf(st->disabled, sizeof(st->disabled),
			 "the tree has more than %lld files after exclusions "
			 "(checkpoints.max_files), so it has no checkpoints; exclude big "
			 "folders in %s/.hermesignore or raise checkpoints.max_files, then "
			 "run 'hermesctl checkpoint'",
			 st->max_files, st->tree);
		store_write_marker(st, "hermes-disabled", st->disabled);
		return err_set(e, -EFBIG, "%s", st->disabled);
	}
	if (r == 0 && st->disabled[0]) {
		st->disabled[0] = '\0';
		store_write_marker(st, "hermes-disabled", NULL);
	}
	return r;
}

/* The first checkpoint passed 90% of max_total_size_mb after packing
 * c->bytes of the tree: checkpoints go off for the tree, with the estimate
 * of what it would take and the setting that would hold it. */
static int scan_too_big(struct scan_ctx *c, unsigned long long packed)
{
	struct store *st = c->st;
	double total = st->baseline_bytes > (long long)c->bytes ? (double)st->baseline_bytes
							       : (double)c->bytes;
	double est = (double)packed * total / (double)c->bytes / 1048576;
	long long need = (long long)(est / 0.9) + 1;

	snprintf(st->disabled, sizeof(st->disabled),
		 "the first checkpoint of this tree would take about %.1f MB "
		 "(%.1f MB of files), over 90%% of checkpoints.max_total_size_mb (%lld), "
		 "so it has no checkpoints; raise checkpoints.max_total_size_mb to %lld or "
		 "more, or exclude big folders in %s/.hermesignore, then run 'hermesctl "
		 "checkpoint'",
		 est, total / 1048576, st->max_total_bytes >> 20, need, st->tree);
	store_write_marker(st, "hermes-disabled", st->disabled);
	return err_set(c->e, -EFBIG, "%s", st->disabled);
}

int store_scan_tree(struct store *st, int rootfd, int baseline, store_progress_fn progress,
		    void *progress_arg, git_oid *tree_oid, struct store_skips *skips,
		    struct herr *e)
{
	struct store_skips no_skips = { 0 };
	struct scan_ctx c = { .st = st, .skips = skips ? skips : &no_skips, .progress = progress,
			      .progress_arg = progress_arg, .limit = -1, .e = e };
	char rel[PATH_MAX] = "";
	git_commit *head = NULL;
	struct timespec now;
	int nonempty, fd, r;

	r = store_ignore_refresh(st, rootfd, e);
	if (r < 0)
		return r;
	r = store_head(st, &head, &c.prev, e);
	if (r < 0)
		return r;
	clock_gettime(CLOCK_REALTIME, &now);
	c.new_tab.scan_start = ts_ns(&now);
	sc_load(st, &c.old);
	fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		r = err_sys(e, -errno, "cannot scan the tree");
		goto out;
	}
	if (baseline && store_pack_begin(st, 1, &c.pack) < 0)
		c.pack = NULL; /* loose objects then */
	/* the first checkpoint may take at most 90% of the disk cap: the rest
	 * holds the history, and what a collection writes before it deletes */
	if (c.pack)
		store_pack_limit(c.pack, (unsigned long long)(st->max_total_bytes / 10 * 9));
	r = scan_dir(&c, fd, rel, 0, tree_oid, &nonempty);
	if (c.pack && r == -EFBIG && c.bytes > 0) {
		r = scan_too_big(&c, store_pack_size(c.pack));
		goto out_pack;
	}
	if (c.pack) {
		if (r == 0)
			r = store_pack_finish(c.pack, e);
		else
out_pack:
			store_pack_abort(c.pack);
	}
	if (r == 0 && !nonempty) {
		git_treebuilder *bld = NULL;
		if (git_treebuilder_new(&bld, st->repo, NULL) < 0 ||
		    STORE_RETRY(git_treebuilder_write(tree_oid, bld)) < 0)
			r = store_git_err(e, -EIO, "cannot write the empty tree");
		git_treebuilder_free(bld);
	}
	/* room under the disk cap before anything is written: a collection
	 * after the flush would take these objects for garbage */
	if (r == 0 && head) {
		int trimmed;
		r = store_prune_make_room(st, (long long)store_sink_bytes(st) + 4096, &trimmed, e);
		if (r < 0)
			store_sink_discard(st);
		else
			st->room_made = 1;
	}
	/* the stat cache may name only blobs that are on disk */
	if (r == 0)
		r = store_sink_flush(st, e);
	if (r == 0) {
		sc_save(st, &c.new_tab);
		/* the first baseline is one fresh pack with nothing to reclaim:
		 * collecting right after it would only compete with the user */
		if (head)
			st->written_since_gc += (long long)c.bytes;
		if (progress)
			progress(progress_arg, c.files, c.bytes);
	}
out:
	sc_free(&c.old);
	sc_free(&c.new_tab);
	git_tree_free(c.prev);
	git_commit_free(head);
	return r;
}

int store_checkpoint_scan(struct store *st, int rootfd, const struct ckpt_meta *meta,
			  store_progress_fn progress, void *progress_arg,
			  char out_oid[STORE_OID_HEX], struct herr *e)
{
	struct store_skips skips = { 0 };
	git_commit *head = NULL;
	git_oid tree;
	int r;

	store_inflight(st, 1);
	r = store_head(st, &head, NULL, e);
	if (r < 0)
		goto out;
	if ((!head && !st->counted_ok) || st->disabled[0]) {
		r = store_baseline_check(st, rootfd, e);
		if (r < 0)
			goto out;
	}
	st->counted_ok = 0;
	r = store_scan_tree(st, rootfd, !head, progress, progress_arg, &tree, &skips, e);
	if (r == 0)
		r = store_commit_tree(st, &tree, meta, &skips, NULL, out_oid, e);
out:
	store_inflight(st, 0);
	git_commit_free(head);
	return r;
}
