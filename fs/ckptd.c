/* Checkpoint service of the daemon. Lock order: op_lock (one control
 * request that uses the store at a time) -> the turn gate -> store_lock.
 * FUSE workers take only the gate, and store_lock when they commit. */
#include "ckptd.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "hfs.h"
#include "log.h"
#include "store.h"
#include "turn.h"

#define DEFAULT_TURN_IDLE_MS 2000

struct hfs_ckpt {
	struct hfs *fs;
	struct config *cfg;
	int lower_fd; /* O_RDONLY directory fd of the tree below the mount */

	pthread_mutex_t op_lock;    /* one store-using control request at a time */
	pthread_mutex_t store_lock; /* protects store and last_oid */
	struct store *store;
	char last_oid[STORE_OID_HEX];

	struct turns *turns;                  /* NULL: checkpoints off */
	_Atomic(struct store_ignore *) ignore; /* replaced whole, old ones kept */
	struct store_ignore *retired[16];     /* store_lock */
	size_t nretired;                      /* store_lock */
	char off_reason[512];                 /* set once before the loop */
	/* over checkpoints.max_files: nothing is tracked (writes cost what
	 * they cost with checkpoints off) and no scan runs again until
	 * 'hermesctl checkpoint' finds the tree under the cap */
	atomic_int paused;
	pthread_mutex_t pause_lock; /* guards paused_reason */
	char paused_reason[512];

	int mount_marked;   /* store_mount_begin() done: end it at unmount */
	int previous_died;  /* the previous daemon of the tree never ended */

	pthread_t baseline;
	int baseline_started;
	atomic_int baseline_running;
	atomic_ullong scan_files, scan_bytes;
	long long scan_last_log;
};

struct turns *ckptd_turns(struct hfs_ckpt *c)
{
	return atomic_load(&c->paused) ? NULL : c->turns;
}

struct turns *ckptd_turns_any(struct hfs_ckpt *c)
{
	return c->turns;
}

static void ckptd_pause(struct hfs_ckpt *c, const char *why)
{
	pthread_mutex_lock(&c->pause_lock);
	snprintf(c->paused_reason, sizeof(c->paused_reason), "%s", why);
	pthread_mutex_unlock(&c->pause_lock);
	if (!atomic_exchange(&c->paused, 1))
		log_err("checkpoints are OFF for %s: %s (writes still go through)", c->fs->source,
			why);
}

static struct store_ignore *ckptd_load_ignore_cfg(struct hfs_ckpt *c, const struct config *cfg);

static struct store_ignore *ckptd_load_ignore(struct hfs_ckpt *c)
{
	return ckptd_load_ignore_cfg(c, c->cfg);
}

static struct store_ignore *ckptd_load_ignore_cfg(struct hfs_ckpt *c, const struct config *cfg)
{
	struct store_ignore *ig;
	char buf[65536];
	const cJSON *ex;
	int fd;

	if (store_ignore_new(&ig) < 0)
		return NULL;
	store_ignore_add_defaults(ig);
	ex = config_list(cfg, "checkpoints.exclude");
	for (const cJSON *it = ex ? ex->child : NULL; it; it = it->next)
		if (cJSON_IsString(it))
			store_ignore_add_rule(ig, it->valuestring);
	fd = openat(c->lower_fd, ".hermesignore", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n > 0)
			store_ignore_add_text(ig, buf, (size_t)n);
		close(fd);
	}
	return ig;
}

int ckptd_excluded(struct hfs_ckpt *c, const char *relpath, int is_dir)
{
	struct store_ignore *ig = atomic_load(&c->ignore);
	return ig && store_ignore_match(ig, relpath, is_dir);
}

static void ckptd_progress(void *arg, size_t files, unsigned long long bytes)
{
	struct hfs_ckpt *c = arg;
	struct timespec ts;

	atomic_store(&c->scan_files, files);
	atomic_store(&c->scan_bytes, bytes);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (ts.tv_sec - c->scan_last_log >= 5) {
		c->scan_last_log = ts.tv_sec;
		log_info("scanning the tree: %zu files, %llu MiB so far", files, bytes >> 20);
	}
}

/* The turn machine's commit: runs with every mutation held off. */
static int ckptd_commit(void *arg, const struct turn_checkpoint_req *req, struct herr *e)
{
	struct hfs_ckpt *c = arg;
	struct ckpt_proc procs[TURN_MAX_WHO];
	struct ckpt_meta meta = { .reason = req->reason, .procs = procs, .nprocs = req->nwho,
				  .live = req->live, .nlive = req->nlive };
	char oid[STORE_OID_HEX];
	struct timespec t0, t1;
	int r, reload = 0;

	for (size_t i = 0; i < req->nwho; i++) {
		procs[i].pid = req->who[i].pid;
		procs[i].uid = req->who[i].uid;
		snprintf(procs[i].comm, sizeof(procs[i].comm), "%s", req->who[i].comm);
	}
	for (size_t i = 0; i < req->npaths; i++)
		reload |= strcmp(req->paths[i], ".hermesignore") == 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_mutex_lock(&c->store_lock);
	if (req->full_scan)
		r = store_checkpoint_scan(c->store, c->lower_fd, &meta, ckptd_progress, c, oid, e);
	else
		r = store_checkpoint_paths(c->store, c->lower_fd, req->paths, req->npaths, &meta,
					   oid, e);
	if (r == 0)
		memcpy(c->last_oid, oid, sizeof(oid));
	if (reload && c->nretired < sizeof(c->retired) / sizeof(c->retired[0])) {
		struct store_ignore *ig = ckptd_load_ignore(c);
		if (ig)
			c->retired[c->nretired++] = atomic_exchange(&c->ignore, ig);
	}
	pthread_mutex_unlock(&c->store_lock);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	if (r == 0)
		log_info("checkpoint %.12s \"%s\": %zu paths%s in %.1f ms", oid, req->reason,
			 req->npaths, req->full_scan ? " (full scan)" : "", ms);
	else if (r == STORE_UNCHANGED)
		log_debug("no checkpoint for \"%s\": nothing changed", req->reason);
	else
		log_err("checkpoint \"%s\" failed: %s", req->reason, e->msg);
	/* over the file cap (the first scan found it so): stop trying */
	if (r == -EFBIG && store_disabled_reason(c->store))
		ckptd_pause(c, e->msg);
	return r;
}

static void *ckptd_baseline_main(void *arg)
{
	struct hfs_ckpt *c = arg;
	struct herr e = HERR_INIT;
	struct ckpt_info *v = NULL;
	size_t n = 0;
	const char *reason = "baseline";

	pthread_mutex_lock(&c->store_lock);
	/* the changes the dead daemon had not checkpointed yet are in it
	 * too: they were lost with its dirty set */
	if (store_list(c->store, &v, &n, &e) == 0 && n > 0)
		reason = c->previous_died ? "changes since the last checkpoint (the daemon died)"
					  : "changes made while unmounted";
	free(v);
	pthread_mutex_unlock(&c->store_lock);
	turns_need_full_scan(c->turns);
	int r = turns_checkpoint_now(c->turns, reason, &e);
	if (r < 0)
		log_err("the %s checkpoint failed: %s", reason, e.msg);
	else
		log_info("%s: %s (%llu files)", reason,
			 r == STORE_UNCHANGED ? "nothing changed" : "committed",
			 (unsigned long long)atomic_load(&c->scan_files));
	atomic_store(&c->baseline_running, 0);
	return NULL;
}

int ckptd_start(struct hfs *fs, struct herr *e)
{
	struct hfs_ckpt *c = calloc(1, sizeof(*c));
	char proc[64];
	int r;

	if (!c)
		return err_set(e, -ENOMEM, "out of memory");
	c->fs = fs;
	c->lower_fd = -1;
	pthread_mutex_init(&c->op_lock, NULL);
	pthread_mutex_init(&c->store_lock, NULL);
	pthread_mutex_init(&c->pause_lock, NULL);
	if ((r = config_load(NULL, &c->cfg, e)) < 0) {
		free(c);
		return r;
	}
	fs->ckpt = c;
	if (fs->readonly) {
		snprintf(c->off_reason, sizeof(c->off_reason),
			 "the mount is read-only (-o ro): nothing can change through it");
		log_info("checkpoints are off: %s", c->off_reason);
		return 0;
	}
	if (!config_bool(c->cfg, "checkpoints.enabled", 1)) {
		snprintf(c->off_reason, sizeof(c->off_reason),
			 "checkpoints.enabled is false in %s", config_path(c->cfg));
		log_info("checkpoints are off: %s", c->off_reason);
		return 0;
	}
	/* the directory below the mount, reopened from the O_PATH root */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fs->root.fd);
	c->lower_fd = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c->lower_fd < 0) {
		snprintf(c->off_reason, sizeof(c->off_reason),
			 "cannot open the tree below the mount: %s", strerror(errno));
		goto off;
	}
	struct herr se = HERR_INIT;
	if (store_open(fs->source, c->cfg, &c->store, &se) < 0) {
		snprintf(c->off_reason, sizeof(c->off_reason), "%s", se.msg);
		goto off;
	}
	if ((r = store_sync_in_background(c->store)) < 0)
		log_warn("no background sync of the checkpoints: %s (each is synced at unmount)",
			 strerror(-r));
	r = store_mount_begin(c->store);
	if (r < 0)
		log_warn("cannot mark the store %s as in use: %s", store_dir(c->store),
			 strerror(-r));
	c->mount_marked = r >= 0;
	c->previous_died = r > 0;
	if (c->previous_died)
		log_info("the previous daemon of %s died without unmounting", fs->source);
	atomic_store(&c->ignore, ckptd_load_ignore(c));
	c->turns = turns_new(ckptd_commit, c,
			     (long)config_int(c->cfg, "checkpoints.turn_idle_ms",
					      DEFAULT_TURN_IDLE_MS));
	if (!c->turns) {
		snprintf(c->off_reason, sizeof(c->off_reason), "out of memory");
		goto off;
	}
	pt_track_setup(fs);
	/* a tree with no checkpoint yet is counted against the file cap now
	 * (bounded by the cap), so that the mount says at once what holds */
	if (!store_disabled_reason(c->store)) {
		struct ckpt_info *v = NULL;
		size_t n = 0;

		if (store_list(c->store, &v, &n, &se) == 0 && n == 0 &&
		    store_recheck(c->store, c->lower_fd, NULL, &se) == -EFBIG)
			log_info("%s", se.msg);
		free(v);
	}
	if (store_disabled_reason(c->store)) {
		ckptd_pause(c, store_disabled_reason(c->store));
		return 0;
	}
	atomic_store(&c->baseline_running, 1);
	if (pthread_create(&c->baseline, NULL, ckptd_baseline_main, c) != 0) {
		atomic_store(&c->baseline_running, 0);
		log_err("cannot start the baseline scan; the first change will take it");
		turns_need_full_scan(c->turns);
		turns_begin(c->turns, "baseline");
	} else {
		c->baseline_started = 1;
	}
	log_info("checkpoints on: store %s", store_dir(c->store));
	return 0;
off:
	log_err("checkpoints are OFF for %s: %s (writes still go through)", fs->source,
		c->off_reason);
	return 0;
}

void ckptd_stop(struct hfs *fs)
{
	struct hfs_ckpt *c = fs->ckpt;

	if (!c)
		return;
	if (c->baseline_started)
		pthread_join(c->baseline, NULL);
	if (c->turns && !atomic_load(&c->paused)) {
		/* the tree as it is left: the next mount then finds nothing to
		 * re-validate unless something changed while unmounted */
		struct herr e = HERR_INIT;
		if (turns_checkpoint_now(c->turns, "unmount", &e) < 0)
			log_err("checkpoint at unmount failed: %s", e.msg);
	}
	if (c->mount_marked)
		store_mount_end(c->store);
	fs->ckpt = NULL;
	turns_free(c->turns);
	store_ignore_free(atomic_load(&c->ignore));
	for (size_t i = 0; i < c->nretired; i++)
		store_ignore_free(c->retired[i]);
	store_close(c->store);
	config_free(c->cfg);
	if (c->lower_fd >= 0)
		close(c->lower_fd);
	pthread_mutex_destroy(&c->op_lock);
	pthread_mutex_destroy(&c->store_lock);
	pthread_mutex_destroy(&c->pause_lock);
	free(c);
}

void ckptd_status(struct hfs *fs, cJSON *resp)
{
	struct hfs_ckpt *c = fs->ckpt;
	cJSON *o = cJSON_CreateObject();

	cJSON_AddItemToObject(resp, "checkpoints", o);
	if (!c || !c->turns) {
		cJSON_AddBoolToObject(o, "enabled", 0);
		cJSON_AddStringToObject(o, "reason", c ? c->off_reason : "not started");
		return;
	}
	if (atomic_load(&c->paused)) {
		cJSON_AddBoolToObject(o, "enabled", 0);
		pthread_mutex_lock(&c->pause_lock);
		cJSON_AddStringToObject(o, "reason", c->paused_reason);
		pthread_mutex_unlock(&c->pause_lock);
		cJSON_AddBoolToObject(o, "over_cap", 1);
		cJSON_AddStringToObject(o, "store", store_dir(c->store));
		return;
	}
	cJSON_AddBoolToObject(o, "enabled", 1);
	cJSON_AddStringToObject(o, "store", store_dir(c->store));
	cJSON_AddBoolToObject(o, "scanning", atomic_load(&c->baseline_running));
	cJSON_AddNumberToObject(o, "scanned_files", (double)atomic_load(&c->scan_files));
	turns_status(c->turns, o);
}

/* A string member, or def. A whole number is taken as its digits (a
 * checkpoint number sent as {"spec": 3}); the text lives in a per-thread
 * buffer until the next such call. */
static const char *req_str(const cJSON *req, const char *key, const char *def)
{
	static __thread char num[32];
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(req, key);

	if (cJSON_IsNumber(v) && v->valuedouble > -1e15 && v->valuedouble < 1e15 &&
	    v->valuedouble == (double)(long long)v->valuedouble) {
		snprintf(num, sizeof(num), "%lld", (long long)v->valuedouble);
		return num;
	}
	return cJSON_IsString(v) && v->valuestring[0] ? v->valuestring : def;
}

static int ckptd_need(struct hfs *fs, struct herr *e)
{
	struct hfs_ckpt *c = fs->ckpt;
	if (!c || !c->turns)
		return err_set(e, -ENOTSUP, "checkpoints are off for %s: %s", fs->source,
			       c ? c->off_reason : "not started");
	return 0;
}

int ckptd_ctl_turn(struct hfs *fs, const cJSON *req, cJSON *resp, struct herr *e)
{
	struct hfs_ckpt *c = fs->ckpt;

	(void)e;
	if (!c || !c->turns) {
		/* a turn on a tree without checkpoints is not an error for a runner */
		cJSON_AddBoolToObject(resp, "checkpoints", 0);
		return 0;
	}
	turns_begin(c->turns, req_str(req, "reason", "turn"));
	cJSON_AddBoolToObject(resp, "checkpoints", 1);
	return 0;
}

/* With store_lock held: last_oid = the newest checkpoint (retention may
 * have rewritten the chain since we committed). */
static void ckptd_head(struct hfs_ckpt *c, struct herr *e)
{
	struct ckpt_info *v = NULL;
	size_t n = 0;

	if (store_list(c->store, &v, &n, e) == 0 && n > 0)
		memcpy(c->last_oid, v[0].oid, sizeof(c->last_oid));
	free(v);
}

/* The user acted on a tree over the file cap (edited .hermesignore, raised
 * checkpoints.max_files) and asks for a checkpoint: count again with the
 * config as it is now; under the cap, tracking resumes and the checkpoint
 * that follows is the tree's first, a full scan. */
static int ckptd_resume(struct hfs_ckpt *c, struct herr *e)
{
	struct config *cfg = NULL;
	int r = config_load(NULL, &cfg, e);

	if (r < 0)
		return r;
	pthread_mutex_lock(&c->store_lock);
	r = store_recheck(c->store, c->lower_fd, cfg, e);
	if (r == 0 && c->nretired < sizeof(c->retired) / sizeof(c->retired[0])) {
		/* the excludes as config.yaml says them now */
		struct store_ignore *ig = ckptd_load_ignore_cfg(c, cfg);
		if (ig)
			c->retired[c->nretired++] = atomic_exchange(&c->ignore, ig);
	}
	pthread_mutex_unlock(&c->store_lock);
	config_free(cfg);
	if (r < 0) {
		if (r == -EFBIG)
			ckptd_pause(c, e->msg);
		return r;
	}
	turns_need_full_scan(c->turns);
	atomic_store(&c->paused, 0);
	log_info("checkpoints on again for %s: the tree is under checkpoints.max_files",
		 c->fs->source);
	return 0;
}

int ckptd_ctl_checkpoint(struct hfs *fs, const cJSON *req, cJSON *resp, struct herr *e)
{
	struct hfs_ckpt *c = fs->ckpt;
	int r;

	if ((r = ckptd_need(fs, e)) < 0)
		return r;
	pthread_mutex_lock(&c->op_lock);
	r = atomic_load(&c->paused) ? ckptd_resume(c, e) : 0;
	if (r == 0)
		r = turns_checkpoint_now(c->turns, req_str(req, "reason", "checkpoint"), e);
	pthread_mutex_lock(&c->store_lock);
	if (r >= 0) {
		ckptd_head(c, e);
		cJSON_AddBoolToObject(resp, "created", r == 0);
		cJSON_AddStringToObject(resp, "oid", c->last_oid);
	}
	pthread_mutex_unlock(&c->store_lock);
	pthread_mutex_unlock(&c->op_lock);
	return r < 0 ? r : 0;
}

int ckptd_ctl_list(struct hfs *fs, const cJSON *req, cJSON *resp, struct herr *e)
{
	struct hfs_ckpt *c = fs->ckpt;
	struct ckpt_info *v = NULL;
	size_t n = 0;
	int r;

	(void)req;
	if ((r = ckptd_need(fs, e)) < 0)
		return r;
	pthread_mutex_lock(&c->op_lock);
	pthread_mutex_lock(&c->store_lock);
	r = store_list(c->store, &v, &n, e);
	pthread_mutex_unlock(&c->store_lock);
	pthread_mutex_unlock(&c->op_lock);
	if (r < 0)
		return r;
	cJSON *arr = cJSON_AddArrayToObject(resp, "checkpoints");
	for (size_t i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "number", (double)(i + 1));
		cJSON_AddStringToObject(o, "oid", v[i].oid);
		cJSON_AddNumberToObject(o, "time", (double)v[i].time);
		cJSON_AddStringToObject(o, "reason", v[i].reason);
		cJSON_AddNumberToObject(o, "files", v[i].files);
		cJSON_AddNumberToObject(o, "insertions", v[i].insertions);
		cJSON_AddNumberToObject(o, "deletions", v[i].deletions);
		cJSON_AddStringToObject(o, "committed_by", v[i].who);
		cJSON_AddStringToObject(o, "skipped", v[i].skipped);
		cJSON_AddItemToArray(arr, o);
	}
	free(v);
	/* who changed the tree since the newest checkpoint, not committed yet */
	cJSON_AddItemToObject(resp, "live_who", turns_who_json(c->turns));
	cJSON_AddStringToObject(resp, "tree", fs->source);
	return 0;
}

/* The request's "paths" (strings) as an array the store takes; NULL and
 * *n = 0 when none. Anything else in the list is an error, never skipped:
 * a restore of fewer files than asked must not report success. */
static int req_paths(const cJSON *req, const char ***out, size_t *n, struct herr *e)
{
	const cJSON *paths = cJSON_GetObjectItemCaseSensitive(req, "paths");
	size_t cnt = cJSON_IsArray(paths) ? (size_t)cJSON_GetArraySize(paths) : 0, i = 0;
	const cJSON *it;

	*out = NULL;
	*n = 0;
	if (cnt == 0)
		return 0;
	*out = calloc(cnt, sizeof(**out));
	if (!*out)
		return err_set(e, -ENOMEM, "out of memory");
	cJSON_ArrayForEach(it, paths)
	{
		if (!cJSON_IsString(it)) {
			free(*out);
			*out = NULL;
			return err_set(e, -EINVAL, "\"paths\" must hold strings only");
		}
		(*out)[i++] = it->valuestring;
	}
	*n = i;
	return 0;
}

int ckptd_ctl_diff(struct hfs *fs, const cJSON *req, cJSON *resp, struct herr *e)
{
	struct hfs_ckpt *c = fs->ckpt;
	const char **pv = NULL;
	char oid[STORE_OID_HEX];
	char *text = NULL;
	size_t len = 0, np = 0;
	int r;

	if ((r = ckptd_need(fs, e)) < 0 || (r = req_paths(req, &pv, &np, e)) < 0)
		return r;
	struct store_diff_opts o = {
		.paths = np ? pv : NULL,
		.npaths = np,
		.color = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(req, "color")),
		.stat_only = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(req, "stat_only")),
	};
	FILE *out = open_memstream(&text, &len);
	if (!out) {
		free(pv);
		return err_set(e, -ENOMEM, "out of memory");
	}
	pthread_mutex_lock(&c->op_lock);
	pthread_mutex_lock(&c->store_lock);
	r = store_resolve(c->store, req_str(req, "spec", ""), oid, e);
	if (r >= 0)
		r = store_diff(c->store, c->lower_fd, oid, &o, out, e);
	pthread_mutex_unlock(&c->store_lock);
	pthread_mutex_unlock(&c->op_lock);
	fclose(out);
	if (r >= 0) {
		cJSON_AddStringToObject(resp, "oid", oid);
		cJSON_AddNumberToObject(resp, "files", r);
		cJSON_AddStringToObject(resp, "diff", text ? text : "");
	}
	free(text);
	free(pv);
	return r < 0 ? r : 0;
}

/* Act as the requesting user for the restore's writes through the mount, so
 * recreated files belong to who asked (fsuid is per thread in the kernel). */
struct ckptd_ids {
	int switched;
	uid_t uid;
	gid_t gid;
};

static void ckptd_ids_enter(struct hfs *fs, const cJSON *req, struct ckptd_ids *ids)
{
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(req, "_peer_uid");
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(req, "_peer_gid");

	ids->switched = 0;
	if (!fs->switch_creds || !cJSON_IsNumber(u) || !cJSON_IsNumber(g))
		return;
	ids->uid = (uid_t)syscall(SYS_setfsuid, (uid_t)u->valuedouble);
	ids->gid = (gid_t)syscall(SYS_setfsgid, (gid_t)g->valuedouble);
	ids->switched = 1;
}

static void ckptd_ids_leave(struct ckptd_ids *ids)
{
	if (!ids->switched)
		return;
	syscall(SYS_setfsgid, ids->gid);
	syscall(SYS_setfsuid, ids->uid);
}

/* What a restore tells the daemon of the files it changes (store.h). */
struct ckptd_restore_cb {
	struct hfs *fs;
	fuse_ino_t *stale; /* the kernel's numbers of files replaced: attributes and pages to drop */
	size_t nstale, cap;
};

static int ckptd_in_use(void *arg, dev_t dev, ino_t ino)
{
	struct ckptd_restore_cb *cb = arg;

	return inode_open_for_write(cb->fs, dev, ino);
}

static void ckptd_replaced(void *arg, dev_t dev, ino_t ino, nlink_t nlink)
{
	struct ckptd_restore_cb *cb = arg;
	fuse_ino_t n = inode_replaced(cb->fs, dev, ino, nlink <= 1);

	if (!n)
		return;
	if (cb->nstale == cb->cap) {
		size_t cap = cb->cap ? cb->cap * 2 : 64;
		fuse_ino_t *v = realloc(cb->stale, cap * sizeof(*v));
		if (!v)
			return; /* its attributes stay cached: a day at most */
		cb->stale = v;
		cb->cap = cap;
	}
	cb->stale[cb->nstale++] = n;
}

int ckptd_ctl_restore(struct hfs *fs, const cJSON *req, cJSON *resp, struct herr *e)
{
	struct hfs_ckpt *c = fs->ckpt;
	const char *spec = req_str(req, "spec", "");
	const cJSON *um = cJSON_GetObjectItemCaseSensitive(req, "umask");
	mode_t mask = cJSON_IsNumber(um) ? (mode_t)((unsigned)um->valuedouble & 0777) : 022;
	const char **pv = NULL;
	char oid[STORE_OID_HEX], safety[STORE_OID_HEX] = "", reason[128];
	size_t np = 0;
	struct store_restore_out res = { 0 };
	struct ckptd_restore_cb cb = { .fs = fs };
	struct ckptd_ids ids;
	int r, mfd;

	if ((r = ckptd_need(fs, e)) < 0 || (r = req_paths(req, &pv, &np, e)) < 0)
		return r;
	pthread_mutex_lock(&c->op_lock);
	pthread_mutex_lock(&c->store_lock);
	r = store_resolve(c->store, spec, oid, e);
	/* a request that cannot be done must not add a safety checkpoint */
	if (r == 0 && np) {
		mfd = open(fs->mountpoint, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		r = mfd < 0 ? err_sys(e, -errno, "cannot open the mount %s", fs->mountpoint)
			    : store_restore_check(c->store, mfd, oid, pv, np, e);
		if (mfd >= 0)
			close(mfd);
	}
	pthread_mutex_unlock(&c->store_lock);
	if (r < 0)
		goto out;
	snprintf(reason, sizeof(reason), "before rollback to %s (%.8s)", spec, oid);
	/* The safety checkpoint and the restore are one step: every other
	 * mutation waits from before the one until after the other, so no
	 * write falls between them (where no checkpoint would hold it). The
	 * restore therefore writes the tree below, not through the mount
	 * (a held-off writer may hold kernel locks the mount would need), and
	 * the kernel's caches of what it changed are dropped after. Pages
	 * written through a map or the writeback cache are the kernel's
	 * until it sends them: out with them first (their writes pass the
	 * gate), so the safety checkpoint holds them and none lands on the
	 * restored file afterwards. */
	mfd = open(fs->mountpoint, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd >= 0) {
		inode_sync_writers(fs, mfd);
		close(mfd);
	}
	turns_hold(c->turns);
	r = turns_checkpoint_held(c->turns, reason, e);
	if (r < 0) {
		turns_release(c->turns);
		err_prefix(e, "no safety checkpoint, so nothing was restored");
		goto out;
	}
	pthread_mutex_lock(&c->store_lock);
	ckptd_head(c, e);
	memcpy(safety, c->last_oid, sizeof(safety));
	ckptd_ids_enter(fs, req, &ids);
	struct store_restore_hooks hooks = { .want_paths = 1, .in_use = ckptd_in_use,
					     .replaced = ckptd_replaced, .arg = &cb };
	r = store_restore(c->store, c->lower_fd, oid, np ? pv : NULL, np, mask, &hooks, &res, e);
	ckptd_ids_leave(&ids);
	pthread_mutex_unlock(&c->store_lock);
	/* what it changed is the current turn's change, as if written
	 * through the mount */
	for (size_t i = 0; i < res.npaths; i++)
		turns_mark(c->turns, res.paths[i]);
	turns_release(c->turns);
	struct inode_inval memo = { 0 };
	for (size_t i = 0; i < cb.nstale; i++)
		fuse_lowlevel_notify_inval_inode(fs->se, cb.stale[i], 0, 0);
	for (size_t i = 0; i < res.npaths; i++)
		inode_invalidate_path(fs, res.paths[i], &memo);
	free(cb.stale);
	if (r >= 0) {
		cJSON *kept = cJSON_AddArrayToObject(resp, "kept");
		log_info("restored %s to %.12s (%zu paths changed, %zu kept; safety checkpoint %.12s)",
			 np ? "some files" : "the tree", oid, res.changed, res.nkept, safety);
		cJSON_AddStringToObject(resp, "oid", oid);
		cJSON_AddStringToObject(resp, "safety_oid", safety);
		cJSON_AddNumberToObject(resp, "changed", (double)res.changed);
		for (size_t i = 0; kept && i < res.nkept; i++)
			cJSON_AddItemToArray(kept, cJSON_CreateString(res.kept[i]));
	} else if (res.changed > 0) {
		/* part of the tree changed: say how to get it back */
		size_t len = strlen(e->msg);
		snprintf(e->msg + len, sizeof(e->msg) - len,
			 "; %zu path%s changed before that: the state before this rollback "
			 "is checkpoint %.8s ('hermesctl rollback %.8s' undoes it)",
			 res.changed, res.changed == 1 ? "" : "s", safety, safety);
	}
out:
	pthread_mutex_unlock(&c->op_lock);
	store_restore_out_free(&res);
	free(pv);
	return r < 0 ? r : 0;
}
