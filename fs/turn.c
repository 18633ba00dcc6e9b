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
	/* > 0 while a restore writes through the mount: no checkpoint then */
	atomic_int suspended;
	/* bumped each time the dirty set is committed and cleared; starts at 1 */
	atomic_ullong epoch;
	/* writes the kernel split at a page boundary whose second half has not
	 * arrived yet, and when the latest such first half came */
	atomic_int split_open;
	atomic_llong split_since_ms;

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
	snprintf(t->reason, sizeof(t->reason), "turn");
	atomic_store(&t->epoch, 1);
	return t;
}

void turns_free(struct turns *t)
{
	if (!t)
		return;
	pathset_free(t->dirty);
	pthread_rwlock_destroy(&t->gate);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

void turns_begin(struct turns *t, const char *reason)
{
	pthread_mutex_lock(&t->lock);
	snprintf(t->reason, sizeof(t->reason), "%s", reason && *reason ? reason : "turn");
	t->turn_no++;
	pthread_mutex_unlock(&t->lock);
	atomic_store(&t->pending, 1);
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

/* With the gate held exclusively: commit what changed since the last
 * checkpoint. Keeps the dirty set when the commit fails, so nothing that
 * changed is forgotten by the next attempt. */
static int checkpoint_locked(struct turns *t, const char *reason, struct herr *e)
{
	struct turn_checkpoint_req req = { 0 };
	const char **paths = NULL;
	long long t0 = now_ms();
	int r;

	pthread_mutex_lock(&t->lock);
	if (pathset_count(t->dirty) == 0 && !t->full_scan) {
		t->unchanged++;
		pthread_mutex_unlock(&t->lock);
		return 1;
	}
	paths = pathset_minimal(t->dirty, &req.npaths);
	if (!paths) {
		pthread_mutex_unlock(&t->lock);
		return err_set(e, -ENOMEM, "out of memory");
	}
	req.reason = reason;
	req.paths = paths;
	req.full_scan = t->full_scan;
	req.who = t->who;
	req.nwho = t->nwho;
	/* the worker threads are all held off by the gate: the lock is only
	 * for status readers, which must not wait for a long commit */
	pthread_mutex_unlock(&t->lock);

	r = t->fn(t->arg, &req, e);

	pthread_mutex_lock(&t->lock);
	free(paths);
	t->last_checkpoint_dur_ms = (double)(now_ms() - t0);
	if (r < 0) {
		t->failures++;
		snprintf(t->last_error, sizeof(t->last_error), "%s", e->msg);
	} else {
		pathset_clear(t->dirty);
		atomic_fetch_add(&t->epoch, 1);
		t->full_scan = 0;
		t->nwho = 0;
		t->who_dropped = 0;
		t->last_checkpoint_ms = wall_ms();
		t->last_error[0] = '\0';
		if (r == 0)
			t->checkpoints++;
		else
			t->unchanged++;
	}
	pthread_mutex_unlock(&t->lock);
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

void turns_suspend(struct turns *t)
{
	atomic_fetch_add(&t->suspended, 1);
}

void turns_resume(struct turns *t)
{
	atomic_store(&t->last_mutation_ms, now_ms());
	atomic_fetch_sub(&t->suspended, 1);
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

void turns_enter(struct turns *t, pid_t pid, uid_t uid)
{
	turns_enter_ex(t, pid, uid, 0);
}

void turns_enter_ex(struct turns *t, pid_t pid, uid_t uid, int continuation)
{
	long long now = now_ms();
	long long last = atomic_exchange(&t->last_mutation_ms, now);

	if (atomic_load(&t->suspended) > 0)
		goto enter; /* a restore is writing: its changes join this turn */
	if (continuation)
		goto enter; /* the rest of a write() already begun: finish it first */
	if (t->idle_ms > 0 && last > 0 && now - last > t->idle_ms &&
	    !atomic_load(&t->pending)) {
		pthread_mutex_lock(&t->lock);
		int changed = pathset_count(t->dirty) > 0;
		if (changed) {
			snprintf(t->reason, sizeof(t->reason), "after %lld s idle",
				 (now - last) / 1000);
			t->turn_no++;
		}
		pthread_mutex_unlock(&t->lock);
		if (changed)
			atomic_store(&t->pending, 1);
	}
	if (atomic_load(&t->pending)) {
		gate_lock_whole(t);
		/* re-checked under the gate: a restore may have begun meanwhile */
		if (atomic_load(&t->pending) && !atomic_load(&t->suspended)) {
			struct herr e = HERR_INIT;
			char reason[256];
			pthread_mutex_lock(&t->lock);
			memcpy(reason, t->reason, sizeof(reason));
			pthread_mutex_unlock(&t->lock);
			int r = checkpoint_locked(t, reason, &e);
			if (r < 0)
				log_err("checkpoint before a change failed (the change goes "
					"through): %s", e.msg);
			atomic_store(&t->pending, 0);
		}
		pthread_rwlock_unlock(&t->gate);
	}
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
	cJSON_AddNumberToObject(out, "checkpoints_taken", (double)t->checkpoints);
	cJSON_AddNumberToObject(out, "checkpoints_unchanged", (double)t->unchanged);
	cJSON_AddNumberToObject(out, "checkpoint_failures", (double)t->failures);
	cJSON_AddNumberToObject(out, "last_checkpoint_ms", (double)t->last_checkpoint_dur_ms);
	if (t->last_error[0])
		cJSON_AddStringToObject(out, "last_error", t->last_error);
	cJSON_AddItemToObject(out, "who", who_json_locked(t));
	pthread_mutex_unlock(&t->lock);
}
