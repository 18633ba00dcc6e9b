/* Unit tests for turns and the dirty set: one checkpoint per turn, none for a
 * turn without changes, never while a mutation is in flight, nothing lost. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pathset.h"
#include "tap.h"
#include "turn.h"

static atomic_int in_flight, violations;
static atomic_long seen_paths;
static int calls;
static char last_paths[4096];
static char last_reason[256];
static size_t last_nwho;

static int fake_checkpoint(void *arg, const struct turn_checkpoint_req *req, struct herr *e)
{
	(void)arg;
	(void)e;
	if (atomic_load(&in_flight) != 0)
		atomic_fetch_add(&violations, 1);
	calls++;
	last_paths[0] = '\0';
	for (size_t i = 0; i < req->npaths; i++) {
		if (strlen(last_paths) + strlen(req->paths[i]) + 2 < sizeof(last_paths)) {
			strcat(last_paths, req->paths[i]);
			strcat(last_paths, " ");
		}
	}
	atomic_fetch_add(&seen_paths, (long)req->npaths);
	snprintf(last_reason, sizeof(last_reason), "%s", req->reason);
	last_nwho = req->nwho;
	return 0;
}

static void mutate(struct turns *t, const char *path)
{
	turns_enter(t, getpid(), 0);
	atomic_fetch_add(&in_flight, 1);
	turns_mark(t, path);
	atomic_fetch_sub(&in_flight, 1);
	turns_exit(t);
}

struct worker {
	struct turns *t;
	int id;
	atomic_int *stop;
	long marked;
};

static void *worker_main(void *p)
{
	struct worker *w = p;
	char path[64];
	for (long i = 0; !atomic_load(w->stop); i++) {
		snprintf(path, sizeof(path), "w%d/f%ld", w->id, i);
		mutate(w->t, path);
		w->marked++;
	}
	return NULL;
}

int main(void)
{
	struct pathset *s = pathset_new();
	size_t n;

	pathset_add(s, "a/b/c");
	pathset_add(s, "a");
	pathset_add(s, "a.txt");
	pathset_add(s, "a/b");
	pathset_add(s, "b");
	ok(pathset_add(s, "b") == 1, "duplicate path not added twice");
	const char **v = pathset_minimal(s, &n);
	ok(n == 3, "paths below a listed one are dropped (%zu)", n);
	is_str(v[0], "a", "sorted with the directory first");
	is_str(v[1], "a.txt", "a.txt kept");
	is_str(v[2], "b", "b kept");
	free(v);
	pathset_free(s);

	struct turns *t = turns_new(fake_checkpoint, NULL, 0);
	mutate(t, "x");
	ok(calls == 0, "no checkpoint before any turn boundary");
	turns_begin(t, "vim :w");
	ok(calls == 0, "starting a turn does not checkpoint by itself");
	mutate(t, "y");
	ok(calls == 1, "the first mutation of a turn checkpoints");
	is_str(last_paths, "x ", "the checkpoint covers the previous turn's changes");
	is_str(last_reason, "vim :w", "reason recorded");
	ok(last_nwho == 1, "the process that changed things is recorded");
	mutate(t, "z");
	ok(calls == 1, "later mutations of the turn only mark");
	turns_begin(t, "t2");
	turns_begin(t, "t3");
	mutate(t, "w");
	ok(calls == 2, "one checkpoint per turn");
	is_str(last_paths, "y z ", "second checkpoint covers y and z");
	turns_begin(t, "t4");
	struct herr e = HERR_INIT;
	ok(turns_checkpoint_now(t, "manual", &e) == 0, "explicit checkpoint");
	turns_begin(t, "t5");
	mutate(t, "q");
	ok(calls == 3, "no checkpoint for a turn that changed nothing since the last");
	turns_free(t);

	/* 8 threads writing while turns flip every millisecond */
	calls = 0;
	atomic_store(&seen_paths, 0);
	t = turns_new(fake_checkpoint, NULL, 0);
	atomic_int stop = 0;
	struct worker w[8];
	pthread_t th[8];
	for (int i = 0; i < 8; i++) {
		w[i] = (struct worker){ .t = t, .id = i, .stop = &stop };
		pthread_create(&th[i], NULL, worker_main, &w[i]);
	}
	for (int i = 0; i < 300; i++) {
		char r[32];
		snprintf(r, sizeof(r), "turn %d", i);
		turns_begin(t, r);
		usleep(1000);
	}
	atomic_store(&stop, 1);
	long marked = 0;
	for (int i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		marked += w[i].marked;
	}
	turns_checkpoint_now(t, "final", &e);
	ok(atomic_load(&violations) == 0, "no checkpoint ran while a mutation was in flight");
	ok(atomic_load(&seen_paths) == marked,
	   "every marked path reached exactly one checkpoint (%ld of %ld)",
	   (long)atomic_load(&seen_paths), marked);
	ok(calls > 10, "turns flipped under load (%d checkpoints)", calls);
	turns_free(t);
	return done_testing();
}
