/* Turn state machine and dirty tracking for the mounted tree: which paths
 * changed since the last checkpoint, by which processes, and when the next
 * checkpoint must be taken. */
#include "turn.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "pathset.h"

struct turns {
	turn_checkpoint_fn fn;
	void *arg;
	long idle_ms;

	/* mutations hold it shared, checkpoints exclusive (writer-preferring so
	 * a stream of writes cannot starve a checkpoint) */
	pthread_rwlock_t gate;

	/* set when the next mutation must checkpoint first; read without the
	 * lock as a fast path, re-checked under the exclusive gate */
	atomic_int pending;
	atomic_llong last_mutation_ms;
	/* bumped each time the dirty set is committed and cleared; starts at 1 */
	atomic_ullong epoch;
	/* writes the kernel split at a page boundary whose second half has not
	 * arrived yet, and when the latest such first half came */
	atomic_int split_open;
	atomic_llong split_since_ms;

	/* files written behind the gate (turns_live_setup) */
	const struct turns_live_ops *live_ops;
	void *live_arg;
	atomic_int live;
	pthread_t watcher;
	int watcher_started;
	int watcher_stop;         /* watch_lock */
	atomic_int watcher_asleep; /* waiting for a live file, with no timeout */
	pthread_mutex_t watch_lock;
	pthread_cond_t watch_cond;

	pthread_mutex_t lock; /* protects everything below */
	struct pathset *dirty;
	int full_scan;
	char reason[256];
	struct turn_who who[TURN_MAX_WHO];
	size_t nwho;
	unsigned long long who_dropped;
	unsigned long long turn_no, checkpoints, unchanged, failures;
	char last_error[512];
	long long last_checkpoint_ms;
	double last_checkpoint_dur_ms;
};

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static long long wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

struct turns *turns_new(turn_checkpoint_fn fn, void *arg, long idle_ms)
{
	struct turns *t = calloc(1, sizeof(*t));
	pthread_rwlockattr_t ra;

	if (!t)
		return NULL;
	t->dirty = pathset_new();
	if (!t->dirty) {
		free(t);
		return NULL;
	}
	t->fn = fn;
	t->arg = arg;
	t->idle_ms = idle_ms;
	pthread_rwlockattr_init(&ra);
	pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&t->gate, &ra);
	pthread_rwlockattr_destroy(&ra);
	pthread_mutex_init(&t->lock, NULL);
	pthread_mutex_init(&t->watch_lock, NULL);
	pthread_cond_init(&t->watch_cond, NULL);
	snprintf(t->reason, sizeof(t->reason), "turn");
	atomic_store(&t->epoch, 1);
	return t;
}

void turns_free(struct turns *t)
{
	if (!t)
		return;
	if (t->watcher_started) {
		pthread_mutex_lock(&t->watch_lock);
		t->watcher_stop = 1;
		pthread_cond_signal(&t->watch_cond);
		pthread_mutex_unlock(&t->watch_lock);
		pthread_join(t->watcher, NULL);
	}
	pthread_cond_destroy(&t->watch_cond);
	pthread_mutex_destroy(&t->watch_lock);
	pathset_free(t->dirty);
	pthread_rwlock_destroy(&t->gate);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

static void take_pending(struct turns *t, int only_live);

void turns_begin(struct turns *t, const char *reason)
{
	pthread_mutex_lock(&t->lock);
	snprintf(t->reason, sizeof(t->reason), "%s", reason && *reason ? reason : "turn");
	t->turn_no++;
	pthread_mutex_unlock(&t->lock);
	atomic_store(&t->pending, 1);
	/* a live file may change with no request of ours to wait on: the
	 * tree as it is now is the turn's checkpoint (the gate first, so an
	 * open that is making a file live is counted) */
	if (t->live_ops)
		take_pending(t, 1);
}

void turns_need_full_scan(struct turns *t)
{
	pthread_mutex_lock(&t->lock);
	t->full_scan = 1;
	pthread_mutex_unlock(&t->lock);
}

#define SPLIT_WAIT_MS 3

void turns_split(struct turns *t, int delta)
{
	if (delta > 0)
		atomic_store(&t->split_since_ms, now_ms());
	atomic_fetch_add(&t->split_open, delta);
}

/* Take the gate exclusively, but not between the two halves of a write()
 * the kernel split: a checkpoint there would show the write torn. A half
 * that never gets its second (a write that really ended on the boundary)
 * holds a checkpoint back SPLIT_WAIT_MS at most. */
static void gate_lock_whole(struct turns *t)
{
	for (int tries = 0;; tries++) {
		long long deadline = atomic_load(&t->split_since_ms) + SPLIT_WAIT_MS;
		while (atomic_load(&t->split_open) > 0 && now_ms() < deadline) {
			struct timespec d = { 0, 100 * 1000 };
			nanosleep(&d, NULL);
		}
		pthread_rwlock_wrlock(&t->gate);
		if (atomic_load(&t->split_open) <= 0 || tries >= 3 ||
		    now_ms() >= atomic_load(&t->split_since_ms) + SPLIT_WAIT_MS)
			return;
		pthread_rwlock_unlock(&t->gate); /* a split began meanwhile */
	}
}

static void note_who(struct turns *t, pid_t pid, uid_t uid);

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_strs(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Put back the writers a failed commit took (t->lock held): theirs first,
 * then those noted meanwhile, counts of the same process added up. */
static void who_merge(struct turns *t, const struct turn_who *old, size_t nold)
{
	struct turn_who now[TURN_MAX_WHO];
	size_t nnow = t->nwho;

	memcpy(now, t->who, nnow * sizeof(now[0]));
	memcpy(t->who, old, nold * sizeof(old[0]));
	t->nwho = nold;
	for (size_t i = 0; i < nnow; i++) {
		size_t k;
		for (k = 0; k < t->nwho; k++)
			if (t->who[k].pid == now[i].pid && t->who[k].uid == now[i].uid)
				break;
		if (k < t->nwho)
			t->who[k].changes += now[i].changes;
		else if (t->nwho < TURN_MAX_WHO)
			t->who[t->nwho++] = now[i];
		else
			t->who_dropped++;
	}
}

/* With the gate held exclusively: commit what changed since the last
 * checkpoint. Keeps the dirty set when the commit fails, so nothing that
 * changed is forgotten by the next attempt. */
static int checkpoint_locked(struct turns *t, const char *reason, struct herr *e)
{
	struct turn_checkpoint_req req = { 0 };
	struct turn_who who[TURN_MAX_WHO];
	struct pathset *taken, *fresh;
	const char **paths = NULL;
	long long t0 = now_ms();
	int r, full;

	/* what live files hold now, whatever we saw of them */
	char **live = NULL;
	size_t nlive = 0;
	if (t->live_ops && atomic_load(&t->live) > 0) {
		nlive = t->live_ops->mark_all(t->live_arg, t, &live);
		qsort(live, nlive, sizeof(*live), cmp_str);
	}
	pthread_mutex_lock(&t->lock);
	if (pathset_count(t->dirty) == 0 && !t->full_scan) {
		t->unchanged++;
		pthread_mutex_unlock(&t->lock);
		free_strs(live, nlive);
		return 1;
	}
	fresh = pathset_new();
	paths = fresh ? pathset_minimal(t->dirty, &req.npaths) : NULL;
	if (!paths) {
		pthread_mutex_unlock(&t->lock);
		pathset_free(fresh);
		free_strs(live, nlive);
		return err_set(e, -ENOMEM, "out of memory");
	}
	/* The worker threads are held off by the gate, but a live file's
	 * change is marked without it (passthrough.c): what is marked while
	 * the commit runs goes to a fresh set, for the next checkpoint. */
	taken = t->dirty;
	t->dirty = fresh;
	full = t->full_scan;
	t->full_scan = 0;
	memcpy(who, t->who, t->nwho * sizeof(who[0]));
	req.nwho = t->nwho;
	t->nwho = 0;
	t->who_dropped = 0;
	req.reason = reason;
	req.paths = paths;
	req.full_scan = full;
	req.who = who;
	req.live = (const char *const *)live;
	req.nlive = nlive;
	/* the lock is only for status readers and live marks, which must not
	 * wait for a long commit */
	pthread_mutex_unlock(&t->lock);

	r = t->fn(t->arg, &req, e);

	pthread_mutex_lock(&t->lock);
	t->last_checkpoint_dur_ms = (double)(now_ms() - t0);
	if (r < 0) {
		/* nothing that changed is forgotten by the next attempt */
		for (size_t i = 0; i < req.npaths; i++)
			if (pathset_add(t->dirty, paths[i]) < 0)
				full = 1;
		t->full_scan |= full;
		who_merge(t, who, req.nwho);
		t->failures++;
		snprintf(t->last_error, sizeof(t->last_error), "%s", e->msg);
	} else {
		atomic_fetch_add(&t->epoch, 1);
		t->last_checkpoint_ms = wall_ms();
		t->last_error[0] = '\0';
		if (r == 0)
			t->checkpoints++;
		else
			t->unchanged++;
	}
	pthread_mutex_unlock(&t->lock);
	free(paths);
	pathset_free(taken);
	free_strs(live, nlive);
	return r;
}

int turns_checkpoint_now(struct turns *t, const char *reason, struct herr *e)
{
	int r;

	gate_lock_whole(t);
	r = checkpoint_locked(t, reason, e);
	/* this was the turn's checkpoint: the next change need not wait */
	atomic_store(&t->pending, 0);
	atomic_store(&t->last_mutation_ms, now_ms());
	pthread_rwlock_unlock(&t->gate);
	return r;
}

/* How long a hold waits for live files to close */
#define HOLD_LIVE_WAIT_MS 1000

int turns_hold(struct turns *t)
{
	long long until;

	gate_lock_whole(t);
	/* Live files are written without the gate. With every open held
	 * off, the handles open now are the last: a shell's `>>` per line
	 * closes its own within a moment. One held open longer goes on. */
	until = now_ms() + HOLD_LIVE_WAIT_MS;
	while (atomic_load(&t->live) > 0 && now_ms() < until) {
		struct timespec d = { 0, 1000 * 1000 };
		nanosleep(&d, NULL);
	}
	return atomic_load(&t->live);
}

int turns_checkpoint_held(struct turns *t, const char *reason, struct herr *e)
{
	int r = checkpoint_locked(t, reason, e);

	atomic_store(&t->pending, 0);
	return r;
}

void turns_release(struct turns *t)
{
	atomic_store(&t->last_mutation_ms, now_ms());
	pthread_rwlock_unlock(&t->gate);
}

unsigned long long turns_epoch(struct turns *t)
{
	return atomic_load(&t->epoch);
}

static void note_who(struct turns *t, pid_t pid, uid_t uid)
{
	char path[64], comm[17] = "?";
	size_t i;

	for (i = 0; i < t->nwho; i++) {
		if (t->who[i].pid == pid && t->who[i].uid == uid) {
			t->who[i].changes++;
			return;
		}
	}
	if (t->nwho == TURN_MAX_WHO) {
		t->who_dropped++;
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, comm, sizeof(comm) - 1);
		close(fd);
		if (n > 0) {
			comm[n] = '\0';
			comm[strcspn(comm, "\n")] = '\0';
		}
	}
	t->who[i] = (struct turn_who){ .pid = pid, .uid = uid, .changes = 1 };
	memcpy(t->who[i].comm, comm, sizeof(comm));
	t->nwho++;
}

/* Take the pending checkpoint of a turn, under the whole gate (only_live:
 * only while live files are open, the rest wait for their first change). */
static void take_pending(struct turns *t, int only_live)
{
	gate_lock_whole(t);
	/* re-checked under the gate: another thread may have taken it */
	if (atomic_load(&t->pending) &&
	    (!only_live || atomic_load(&t->live) > 0)) {
		struct herr e = HERR_INIT;
		char reason[256];
		pthread_mutex_lock(&t->lock);
		memcpy(reason, t->reason, sizeof(reason));
		pthread_mutex_unlock(&t->lock);
		int r = checkpoint_locked(t, reason, &e);
		if (r < 0)
			log_err("checkpoint of a new turn failed (changes go through): %s", e.msg);
		atomic_store(&t->pending, 0);
	}
	pthread_rwlock_unlock(&t->gate);
}

/* The idle rule: with no change for idle_ms since last, and changes since
 * the last checkpoint, a new turn begins (pending); 1 if it did. */
static int idle_turn(struct turns *t, long long now, long long last)
{
	int changed;

	if (t->idle_ms <= 0 || last <= 0 || now - last <= t->idle_ms ||
	    atomic_load(&t->pending))
		return 0;
	pthread_mutex_lock(&t->lock);
	changed = pathset_count(t->dirty) > 0;
	if (changed) {
		snprintf(t->reason, sizeof(t->reason), "after %lld s idle", (now - last) / 1000);
		t->turn_no++;
	}
	pthread_mutex_unlock(&t->lock);
	if (changed)
		atomic_store(&t->pending, 1);
	return changed;
}

void turns_enter(struct turns *t, pid_t pid, uid_t uid)
{
	turns_enter_ex(t, pid, uid, 0);
}

void turns_enter_ex(struct turns *t, pid_t pid, uid_t uid, int continuation)
{
	long long now = now_ms();
	long long last = atomic_exchange(&t->last_mutation_ms, now);

	if (continuation)
		goto enter; /* the rest of a write() already begun: finish it first */
	idle_turn(t, now, last);
	if (atomic_load(&t->pending))
		take_pending(t, 0);
enter:
	pthread_rwlock_rdlock(&t->gate);
	pthread_mutex_lock(&t->lock);
	note_who(t, pid, uid);
	pthread_mutex_unlock(&t->lock);
}

void turns_mark(struct turns *t, const char *relpath)
{
	pthread_mutex_lock(&t->lock);
	if (pathset_add(t->dirty, relpath) < 0)
		t->full_scan = 1; /* out of memory: fall back to a full re-validation */
	pthread_mutex_unlock(&t->lock);
}

void turns_exit(struct turns *t)
{
	pthread_rwlock_unlock(&t->gate);
}

void turns_note(struct turns *t, pid_t pid, uid_t uid)
{
	atomic_store(&t->last_mutation_ms, now_ms());
	pthread_mutex_lock(&t->lock);
	note_who(t, pid, uid);
	pthread_mutex_unlock(&t->lock);
}

/* How often the watcher looks at live files: often enough for the idle
 * rule to start a turn within a quarter of its span. */
static long watch_interval_ms(struct turns *t)
{
	long ms = t->idle_ms > 0 ? t->idle_ms / 4 : 1000;
	return ms < 50 ? 50 : ms > 1000 ? 1000 : ms;
}

/* While live files are open: poll them, and when the idle span has passed
 * since the last change of any kind, checkpoint at once (the next change
 * may be one of theirs, which would not wait for it). */
static void *watcher_main(void *arg)
{
	struct turns *t = arg;

	for (;;) {
		struct timespec until;
		long ms = watch_interval_ms(t);

		pthread_mutex_lock(&t->watch_lock);
		atomic_store(&t->watcher_asleep, 1);
		while (!t->watcher_stop && atomic_load(&t->live) == 0)
			pthread_cond_wait(&t->watch_cond, &t->watch_lock);
		atomic_store(&t->watcher_asleep, 0);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += (ms % 1000) * 1000000L;
		until.tv_sec += ms / 1000 + until.tv_nsec / 1000000000L;
		until.tv_nsec %= 1000000000L;
		if (!t->watcher_stop)
			pthread_cond_timedwait(&t->watch_cond, &t->watch_lock, &until);
		int stop = t->watcher_stop;
		pthread_mutex_unlock(&t->watch_lock);
		if (stop)
			return NULL;
		if (atomic_load(&t->live) == 0)
			continue;
		if (t->live_ops->poll(t->live_arg, t) > 0)
			continue; /* turns_note moved last_mutation_ms */
		if (idle_turn(t, now_ms(), atomic_load(&t->last_mutation_ms)))
			take_pending(t, 1);
	}
}

void turns_live_setup(struct turns *t, const struct turns_live_ops *ops, void *arg)
{
	t->live_ops = ops;
	t->live_arg = arg;
	if (pthread_create(&t->watcher, NULL, watcher_main, t) == 0)
		t->watcher_started = 1;
	else
		log_err("cannot start the watcher of files written directly; "
			"idle turns may start late while such files are open");
}

/* Wakes the watcher only from its untimed sleep: one that is polling already
 * sees the new file at its next poll. (Waking it on every open cost two
 * thread switches per created file.) live and watcher_asleep are both
 * sequentially consistent, so either it sees the new count before it
 * sleeps or we see it asleep and signal under its lock. */
void turns_live_add(struct turns *t, int delta)
{
	atomic_fetch_add(&t->live, delta);
	if (delta > 0 && atomic_load(&t->watcher_asleep)) {
		pthread_mutex_lock(&t->watch_lock);
		pthread_cond_signal(&t->watch_cond);
		pthread_mutex_unlock(&t->watch_lock);
	}
}

static cJSON *who_json_locked(struct turns *t)
{
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; i < t->nwho; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "pid", t->who[i].pid);
		cJSON_AddNumberToObject(o, "uid", t->who[i].uid);
		cJSON_AddStringToObject(o, "comm", t->who[i].comm);
		cJSON_AddNumberToObject(o, "changes", t->who[i].changes);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

cJSON *turns_who_json(struct turns *t)
{
	pthread_mutex_lock(&t->lock);
	cJSON *arr = who_json_locked(t);
	pthread_mutex_unlock(&t->lock);
	return arr;
}

void turns_status(struct turns *t, cJSON *out)
{
	pthread_mutex_lock(&t->lock);
	cJSON_AddNumberToObject(out, "turn", (double)t->turn_no);
	cJSON_AddStringToObject(out, "turn_reason", t->reason);
	cJSON_AddBoolToObject(out, "checkpoint_pending", atomic_load(&t->pending));
	cJSON_AddNumberToObject(out, "dirty_paths", (double)pathset_count(t->dirty));
	/* files open for writing straight to the disk below (turn.h) */
	cJSON_AddNumberToObject(out, "live_files", (double)atomic_load(&t->live));
	cJSON_AddNumberToObject(out, "checkpoints_taken", (double)t->checkpoints);
	cJSON_AddNumberToObject(out, "checkpoints_unchanged", (double)t->unchanged);
	cJSON_AddNumberToObject(out, "checkpoint_failures", (double)t->failures);
	cJSON_AddNumberToObject(out, "last_checkpoint_ms", (double)t->last_checkpoint_dur_ms);
	if (t->last_error[0])
		cJSON_AddStringToObject(out, "last_error", t->last_error);
	cJSON_AddItemToObject(out, "who", who_json_locked(t));
	pthread_mutex_unlock(&t->lock);
}
