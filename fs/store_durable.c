/* Power-loss consistency. A checkpoint writes one new pack and its index,
 * then moves the ref; none of it is synced on the way, because a turn's
 * first write waits for the checkpoint and one fsync costs 1-10 ms here.
 * A power cut can then leave the ref (replaced by rename, which ext4 puts
 * on the disk with its data) naming a commit whose pack is empty, short or
 * zeros (a new file's data may never have been written).
 *
 * So the writes are made durable off the hot path, and checked at open:
 * - every pack and index the store publishes is noted (and every loose
 *   object, with its directory: big trees, store_big.c); store_durable_sync()
 *   fsyncs them, the pack directory and the ref, then records in
 *   hermes-synced the newest checkpoint this process committed, which they
 *   make whole (written, synced, renamed, and the directory synced); never
 *   the head another process moved, whose files only that one syncs. The
 *   daemon runs it in a thread a moment after each checkpoint, a command
 *   at store_close().
 * - store_durable_check(), at every open: when the head is the synced one
 *   there is nothing to do. Otherwise the packs written since the synced
 *   record are verified (trailer checksums of pack and index; a loose
 *   object inflated and hashed), damaged ones are moved to
 *   objects/pack/lost/, and the newest checkpoint between
 *   the head and the synced one whose objects are all there becomes the
 *   head again; hermes-dropped says what was lost until the next checkpoint.
 * A healthy store (page cache whole, a killed process) is never changed:
 * only a checksum that fails or an object that is missing moves anything.
 */
#include "store_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "log.h"

/* how long after a checkpoint the daemon's sync runs: checkpoints in a
 * burst share one */
#define DURABLE_DELAY_MS 200
/* packs up to this much older than the synced record are checked too
 * (timestamps are coarse) */
#define DURABLE_SLACK_NS (2LL * 1000000000LL)
/* a chain of unsynced checkpoints longer than this is not walked */
#define DURABLE_MAX_WALK 10000

struct store_durable {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	char **paths; /* published since the last sync */
	size_t n, cap;
	/* the newest checkpoint this process committed since the last sync:
	 * what the record may vouch for (the head may be another process's,
	 * whose files only it syncs) */
	git_oid mine;
	int have_mine;
	pthread_t thread;
	int thread_on, quit, kicked;
};

static long long durable_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int durable_nosync(void)
{
	/* test hook (store_power_cut.sh): a power cut before any sync ran */
	const char *v = getenv("HERMES_STORE_NOSYNC");
	return v && v[0] == '1';
}

int store_durable_init(struct store *st)
{
	struct store_durable *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->cond, NULL);
	st->durable = d;
	return 0;
}

void store_durable_note(struct store *st, const char *path)
{
	struct store_durable *d = st->durable;
	char *dup;

	if (!d || !(dup = strdup(path)))
		return; /* the next sync then misses it: the check at open finds it */
	pthread_mutex_lock(&d->lock);
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 16;
		char **v = realloc(d->paths, cap * sizeof(*v));
		if (!v) {
			pthread_mutex_unlock(&d->lock);
			free(dup);
			return;
		}
		d->paths = v;
		d->cap = cap;
	}
	d->paths[d->n++] = dup;
	pthread_mutex_unlock(&d->lock);
}

static int durable_fsync_path(const char *path, int dir)
{
	int fd = open(path, (dir ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
	int r = 0;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno; /* a collection took it */
	if (fsync(fd) < 0)
		r = -errno;
	close(fd);
	return r;
}

/* The kernel's id of this boot: a store written in this boot has lost
 * nothing to a power cut (the page cache is whole), whatever was synced. */
static void durable_boot_id(char out[40])
{
	/* test hook (store_power_cut.sh): the boot after the power cut */
	const char *t = getenv("HERMES_STORE_BOOT_ID");

	if (t && t[0]) {
		snprintf(out, 40, "%s", t);
		return;
	}
	if (store_read_small("/proc/sys/kernel/random", "boot_id", out, 40) < 0)
		snprintf(out, 40, "unknown");
}

/* The synced record: "<oid> <ns> <boot>" (the head, when the list of files
 * it covers was taken, and the boot it was written in), "none <ns> <boot>"
 * before any checkpoint was synced. -ENOENT for a store older than it. */
static int durable_read(struct store *st, git_oid *oid, int *have_oid, long long *ns,
			char boot[40])
{
	char text[160], hex[GIT_OID_HEXSZ + 1];
	int r = store_read_small(st->dir, "hermes-synced", text, sizeof(text));

	if (r < 0)
		return r;
	*have_oid = 0;
	*ns = 0;
	boot[0] = '\0';
	if (sscanf(text, "%40s %lld %39s", hex, ns, boot) < 1)
		return -EINVAL;
	if (strcmp(hex, "none") == 0)
		return 0;
	if (git_oid_fromstr(oid, hex) < 0)
		return -EINVAL;
	*have_oid = 1;
	return 0;
}

static int durable_write(const char *dir, const git_oid *oid, long long ns)
{
	char path[PATH_MAX + 32], tmp[PATH_MAX + 48], text[160], hex[GIT_OID_HEXSZ + 1];
	char boot[40];
	int fd, r = 0;

	if (oid)
		git_oid_tostr(hex, sizeof(hex), oid);
	else
		snprintf(hex, sizeof(hex), "none");
	durable_boot_id(boot);
	snprintf(text, sizeof(text), "%s %lld %s\n", hex, ns, boot);
	snprintf(path, sizeof(path), "%s/hermes-synced", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	r = fsio_write_all(fd, text, strlen(text));
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	close(fd);
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0) {
		unlink(tmp);
		return r;
	}
	return durable_fsync_path(dir, 1);
}

int store_durable_new(const char *store_dir)
{
	return durable_write(store_dir, NULL, durable_now_ns());
}

/* The head as the files say it (not through the repository, which the
 * checkpointing thread may be using): refs/heads/main, else packed-refs
 * after a collection packed it. 1, 0 (no head) or -errno; *path is the
 * file that holds it. */
static int durable_head_file(struct store *st, git_oid *oid, char *path, size_t size)
{
	char text[4096], hex[GIT_OID_HEXSZ + 1];
	const char *l;

	snprintf(path, size, "%s/" STORE_REF, st->dir);
	if (store_read_small(st->dir, STORE_REF, text, sizeof(text)) == 0)
		return sscanf(text, "%40s", hex) == 1 && git_oid_fromstr(oid, hex) == 0 ? 1 : -EIO;
	snprintf(path, size, "%s/packed-refs", st->dir);
	if (store_read_small(st->dir, "packed-refs", text, sizeof(text)) < 0)
		return 0;
	for (l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l + GIT_OID_HEXSZ, " " STORE_REF, strlen(STORE_REF) + 1) == 0 &&
		    (l[GIT_OID_HEXSZ + 1 + strlen(STORE_REF)] == '\n' ||
		     l[GIT_OID_HEXSZ + 1 + strlen(STORE_REF)] == '\0')) {
			snprintf(hex, sizeof(hex), "%.40s", l);
			return git_oid_fromstr(oid, hex) == 0 ? 1 : -EIO;
		}
	return 0;
}

/* The head through the repository (at open, one thread). */
static int durable_head(struct store *st, git_oid *oid)
{
	git_reference *ref = NULL;
	int r = git_reference_lookup(&ref, st->repo, STORE_REF);

	if (r == GIT_ENOTFOUND)
		return 0;
	if (r < 0 || !git_reference_target(ref)) {
		git_reference_free(ref);
		return -EIO;
	}
	git_oid_cpy(oid, git_reference_target(ref));
	git_reference_free(ref);
	return 1;
}

int store_durable_sync(struct store *st)
{
	struct store_durable *d = st->durable;
	char path[PATH_MAX + 64], ref[PATH_MAX + 64], **v;
	size_t n;
	git_oid head, mine;
	long long ns;
	int have, have_mine, r = 0;

	if (!d || durable_nosync())
		return 0;
	have = durable_head_file(st, &head, ref, sizeof(ref));
	if (have < 0)
		return have;
	/* what we committed: every file it needs was noted before its ref
	 * moved, so the list taken now covers it */
	pthread_mutex_lock(&d->lock);
	ns = durable_now_ns();
	v = d->paths;
	n = d->n;
	mine = d->mine;
	have_mine = d->have_mine;
	d->paths = NULL;
	d->n = d->cap = 0;
	d->have_mine = 0;
	pthread_mutex_unlock(&d->lock);
	if (n == 0 && !have_mine) {
		free(v);
		return 0; /* nothing of ours: another's head is not ours to vouch for */
	}
	for (size_t i = 0; i < n && r == 0; i++)
		r = durable_fsync_path(v[i], 0);
	if (r < 0) {
		/* all of them again next time: no record covers them */
		for (size_t i = 0; i < n; i++)
			store_durable_note(st, v[i]);
		if (have_mine)
			store_durable_committed(st, &mine);
	}
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	snprintf(path, sizeof(path), "%s/objects/pack", st->dir);
	if (r == 0)
		r = durable_fsync_path(path, 1);
	if (r == 0 && have)
		r = durable_fsync_path(ref, 0);
	snprintf(path, sizeof(path), "%s/refs/heads", st->dir);
	if (r == 0)
		r = durable_fsync_path(path, 1);
	if (r == 0 && have_mine)
		r = durable_write(st->dir, &mine, ns);
	if (r < 0)
		log_warn("cannot sync the checkpoint store %s: %s", st->dir, strerror(-r));
	return r;
}

static void *durable_main(void *arg)
{
	struct store *st = arg;
	struct store_durable *d = st->durable;

	pthread_mutex_lock(&d->lock);
	while (!d->quit) {
		struct timespec until;

		if (!d->kicked) {
			pthread_cond_wait(&d->cond, &d->lock);
			continue;
		}
		/* a moment, so that a burst of checkpoints shares one sync */
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += DURABLE_DELAY_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		while (!d->quit && pthread_cond_timedwait(&d->cond, &d->lock, &until) == 0)
			;
		d->kicked = 0;
		pthread_mutex_unlock(&d->lock);
		store_durable_sync(st); /* files only: no repository call */
		pthread_mutex_lock(&d->lock);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

int store_sync_in_background(struct store *st)
{
	struct store_durable *d = st->durable;
	int r;

	if (!d || d->thread_on)
		return 0;
	r = pthread_create(&d->thread, NULL, durable_main, st);
	if (r != 0)
		return -r;
	d->thread_on = 1;
	return 0;
}

static void store_durable_kick(struct store *st)
{
	struct store_durable *d = st->durable;

	if (!d || !d->thread_on)
		return; /* a command syncs at store_close() */
	pthread_mutex_lock(&d->lock);
	d->kicked = 1;
	pthread_cond_signal(&d->cond);
	pthread_mutex_unlock(&d->lock);
}

void store_durable_close(struct store *st)
{
	struct store_durable *d = st->durable;

	if (!d)
		return;
	if (d->thread_on) {
		pthread_mutex_lock(&d->lock);
		d->quit = 1;
		pthread_cond_signal(&d->cond);
		pthread_mutex_unlock(&d->lock);
		pthread_join(d->thread, NULL);
	}
	if (st->repo && d->n > 0)
		store_durable_sync(st);
	for (size_t i = 0; i < d->n; i++)
		free(d->paths[i]);
	free(d->paths);
	pthread_mutex_destroy(&d->lock);
	pthread_cond_destroy(&d->cond);
	free(d);
	st->durable = NULL;
}

/* SHA-1 of len bytes at p equals the 20 bytes at want? */
static int durable_sha_ok(const unsigned char *p, size_t len, const unsigned char *want)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;

	return EVP_Digest(p, len, md, &mdlen, EVP_sha1(), NULL) && mdlen == 20 &&
	       memcmp(md, want, 20) == 0;
}

static int durable_map(const char *path, unsigned char **p, size_t *len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat sb;

	if (fd < 0 || fstat(fd, &sb) < 0)
		return -errno;
	*len = (size_t)sb.st_size;
	if (*len == 0) {
		*p = NULL;
		return 0;
	}
	*p = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
	return *p == MAP_FAILED ? -errno : 0;
}

/* 1: pack and index whole and each other's; 0: damaged; -errno: could not
 * tell (gone meanwhile). */
static int durable_pack_ok(const char *pack, const char *idx)
{
	unsigned char *pp = NULL, *ip = NULL;
	size_t pl = 0, il = 0;
	int r = durable_map(pack, &pp, &pl);

	if (r < 0)
		return r;
	/* a pack without its index is one being published (pack first), or
	 * one git never sees: not ours to move */
	r = durable_map(idx, &ip, &il);
	if (r == 0)
		r = pl >= 32 && memcmp(pp, "PACK", 4) == 0 && il >= 8 + 1024 + 40 &&
		    durable_sha_ok(pp, pl - 20, pp + pl - 20) &&
		    durable_sha_ok(ip, il - 20, ip + il - 20) &&
		    memcmp(ip + il - 40, pp + pl - 20, 20) == 0;
	if (pp && pl)
		munmap(pp, pl);
	if (ip && il)
		munmap(ip, il);
	return r;
}

/* Move pack-<x>.pack and its .idx (and .keep) to objects/pack/lost/. */
static void durable_lose(struct store *st, const char *base)
{
	static const char *const ext[] = { ".pack", ".idx", ".keep", ".rev", ".bitmap" };
	char dir[PATH_MAX + 32], from[PATH_MAX + 160], to[PATH_MAX + 160];

	snprintf(dir, sizeof(dir), "%s/objects/pack/lost", st->dir);
	mkdir(dir, 0755);
	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		snprintf(from, sizeof(from), "%s/objects/pack/%s%s", st->dir, base, ext[i]);
		snprintf(to, sizeof(to), "%s/%s%s", dir, base, ext[i]);
		rename(from, to);
	}
}

/* Verify the packs written since ns (less the slack); the damaged ones are
 * moved away. The number moved. */
static int durable_verify_packs(struct store *st, long long ns)
{
	char dir[PATH_MAX + 32], pack[PATH_MAX + 160], idx[PATH_MAX + 160];
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	int lost = 0;

	snprintf(dir, sizeof(dir), "%s/objects/pack", st->dir);
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		struct stat sb;
		char base[NAME_MAX + 1];

		if (l < 10 || strncmp(de->d_name, "pack-", 5) != 0 ||
		    strcmp(de->d_name + l - 5, ".pack") != 0)
			continue;
		snprintf(base, sizeof(base), "%.*s", (int)(l - 5), de->d_name);
		snprintf(pack, sizeof(pack), "%s/%s.pack", dir, base);
		snprintf(idx, sizeof(idx), "%s/%s.idx", dir, base);
		if (stat(pack, &sb) < 0 ||
		    (long long)sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec <
			    ns - DURABLE_SLACK_NS)
			continue;
		if (durable_pack_ok(pack, idx) == 0) {
			log_warn("checkpoint store %s: %s.pack is damaged (a crash before it "
				 "reached the disk); moved to objects/pack/lost",
				 st->dir, base);
			durable_lose(st, base);
			lost++;
		}
	}
	return lost;
}

/* Are all objects commit c brings (against its parent's tree, or none)
 * there? The diff reads every tree that differs. */
static int durable_commit_whole(struct store *st, git_commit *c, git_commit *parent)
{
	git_tree *t = NULL, *pt = NULL;
	git_diff *diff = NULL;
	git_odb *odb = NULL;
	int ok = git_commit_tree(&t, c) == 0 && (!parent || git_commit_tree(&pt, parent) == 0) &&
		 git_repository_odb(&odb, st->repo) == 0 &&
		 git_diff_tree_to_tree(&diff, st->repo, pt, t, NULL) == 0;

	for (size_t i = 0; ok && i < git_diff_num_deltas(diff); i++) {
		const git_diff_delta *dd = git_diff_get_delta(diff, i);
		if (dd->status != GIT_DELTA_DELETED && dd->new_file.mode != GIT_FILEMODE_COMMIT &&
		    !git_odb_exists(odb, &dd->new_file.id))
			ok = 0;
	}
	git_diff_free(diff);
	git_odb_free(odb);
	git_tree_free(t);
	git_tree_free(pt);
	return ok;
}

static void durable_note_dropped(struct store *st, const char *text)
{
	store_write_marker(st, "hermes-dropped", text);
	snprintf(st->dropped, sizeof(st->dropped), "%s", text);
	log_warn("checkpoint store %s: %s", st->dir, text);
}

int store_durable_check(struct store *st, struct herr *e)
{
	git_oid synced, head, keep;
	git_commit **chain = NULL;
	size_t n = 0, bad;
	long long ns;
	int have_synced, have_head, have_keep = 0, lost, r, broken = 0;
	char text[512], hex[GIT_OID_HEXSZ + 1], boot[40], now_boot[40];

	if (store_read_small(st->dir, "hermes-dropped", st->dropped, sizeof(st->dropped)) < 0)
		st->dropped[0] = '\0';
	r = durable_read(st, &synced, &have_synced, &ns, boot);
	if (r == -ENOENT)
		return 0; /* a store from before the record: nothing to compare */
	if (r < 0)
		return 0; /* unreadable record: the next sync rewrites it */
	/* Written in this boot: no power cut since, so nothing was lost,
	 * synced or not (and a daemon or a collection may be publishing a
	 * pack right now: not a moment to judge packs). */
	durable_boot_id(now_boot);
	if (strcmp(boot, now_boot) == 0)
		return 0;
	/* packs written since the record, whatever the head: a damaged one
	 * would trouble every reader of the store (git fsck included). After
	 * a sync there are none, so this is a directory read. */
	lost = durable_verify_packs(st, ns);
	/* and the loose objects (big trees, store_big.c) */
	lost += store_big_verify_loose(st, ns - DURABLE_SLACK_NS);
	if (lost) {
		git_odb *odb = NULL;
		if (git_repository_odb(&odb, st->repo) == 0)
			git_odb_refresh(odb);
		git_odb_free(odb);
	}
	have_head = durable_head(st, &head);
	if (have_head < 0) {
		have_head = 0;
		broken = 1; /* a damaged ref: back to the synced head */
	}
	if (have_head && have_synced && git_oid_equal(&head, &synced))
		goto healthy;
	if (!have_head && !have_synced && !broken)
		goto healthy;
	if (store_chain_load(st) < 0)
		st->shallow[0] = '\0';
	/* the unsynced chain, newest first, down to the synced head */
	if (have_head) {
		git_oid at = head;
		chain = calloc(DURABLE_MAX_WALK + 1, sizeof(*chain));
		if (!chain)
			return err_set(e, -ENOMEM, "out of memory");
		while (n < DURABLE_MAX_WALK && !(have_synced && git_oid_equal(&at, &synced))) {
			git_commit *c = NULL;
			if (git_commit_lookup(&c, st->repo, &at) < 0) {
				broken = 1;
				break;
			}
			chain[n++] = c;
			if (git_commit_parentcount(c) == 0 || store_chain_is_end(st, git_commit_id(c)))
				break;
			git_oid_cpy(&at, git_commit_parent_id(c, 0));
		}
		if (n == DURABLE_MAX_WALK) {
			for (size_t i = 0; i < n; i++)
				git_commit_free(chain[i]);
			free(chain);
			return 0; /* not ours to judge */
		}
	}
	/* from the oldest up: the first one missing objects, and everything
	 * newer, is lost (bad = n: none is) */
	bad = broken ? 0 : n;
	for (size_t i = n; !broken && i-- > 0;) {
		git_commit *parent = i + 1 < n ? chain[i + 1] : NULL, *floor = NULL;
		int ok;

		if (i + 1 == n && have_synced && git_commit_lookup(&floor, st->repo, &synced) == 0)
			parent = floor;
		ok = durable_commit_whole(st, chain[i], parent);
		git_commit_free(floor);
		if (!ok) {
			bad = i;
			break;
		}
	}
	if (!broken && bad == n) {
		r = 0; /* all there: a sync that had not run yet */
		for (size_t i = 0; i < n; i++)
			git_commit_free(chain[i]);
		free(chain);
		goto healthy;
	}
	lost = 1;
	/* keep the newest whole one: above the first bad, else the synced */
	if (!broken && bad + 1 < n) {
		git_oid_cpy(&keep, git_commit_id(chain[bad + 1]));
		have_keep = 1;
	} else if (have_synced) {
		keep = synced;
		have_keep = 1;
	}
	if (have_keep) {
		git_reference *ref = NULL;
		r = git_reference_create(&ref, st->repo, STORE_REF, &keep, 1,
					 "hermes: back to the last whole checkpoint after a crash");
		git_reference_free(ref);
		git_oid_tostr(hex, sizeof(hex), &keep);
	} else {
		git_reference *ref = NULL;
		r = git_reference_lookup(&ref, st->repo, STORE_REF);
		if (r == 0)
			r = git_reference_delete(ref);
		git_reference_free(ref);
		if (r == GIT_ENOTFOUND)
			r = 0;
	}
	if (r < 0) {
		r = store_git_err(e, -EIO, "cannot repair the checkpoint store after a crash");
		goto out;
	}
	if (broken)
		snprintf(text, sizeof(text),
			 "a crash (a power cut?) lost the newest checkpoints before they reached "
			 "the disk");
	else
		snprintf(text, sizeof(text),
			 "a crash (a power cut?) lost the %zu newest checkpoint%s before %s "
			 "reached the disk",
			 bad + 1, bad ? "s" : "", bad ? "they" : "it");
	if (have_keep)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 "; the newest one left is %.8s", hex);
	else
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 "; no checkpoint is left");
	durable_note_dropped(st, text);
	store_durable_sync(st);
	r = 0;
out:
	for (size_t i = 0; i < n; i++)
		git_commit_free(chain[i]);
	free(chain);
forget_cache:
	/* After a reboot, a stat cache written since the record may name
	 * objects the power cut lost (their pack gone without a trace): the
	 * next scan reads every file again. */
	{
		char path[PATH_MAX + 32];
		struct stat sb;

		snprintf(path, sizeof(path), "%s/hermes-statcache", st->dir);
		if (stat(path, &sb) == 0 &&
		    (lost || (long long)sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec > ns))
			unlink(path);
	}
	return r;
healthy:
	/* what survived the reboot was read back from the disk: it is on
	 * it, and the record says so in this boot's name */
	{
		git_oid h;
		int have = durable_head(st, &h);
		if (have >= 0)
			durable_write(st->dir, have ? &h : NULL, durable_now_ns());
	}
	goto forget_cache;
}

void store_durable_committed(struct store *st, const git_oid *oid)
{
	struct store_durable *d = st->durable;

	if (d) {
		pthread_mutex_lock(&d->lock);
		d->mine = *oid;
		d->have_mine = 1;
		pthread_mutex_unlock(&d->lock);
	}
	if (st->dropped[0]) {
		st->dropped[0] = '\0';
		store_write_marker(st, "hermes-dropped", NULL);
	}
	store_durable_kick(st);
}

const char *store_dropped_note(const struct store *st)
{
	return st->dropped[0] ? st->dropped : NULL;
}
