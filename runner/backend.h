/* The backend interface: where and how a job's process runs. Adding a
 * backend is one file in backends/ plus one entry in job.c's table. */
#pragma once

#include "err.h"
#include "runner.h"

/* What exec runs: already gated, with its final environment. */
struct runner_exec {
	char *const *argv;
	char *const *envp;
	const char *cwd;
	struct runner_limits limits;
	int stream_stdout_fd, stream_stderr_fd; /* -1: capture only */
	int spill_stdout_fd;  /* every byte of stdout up to spill_max, or -1 */
	size_t spill_max;
};

struct runner_backend {
	const char *name;
	/* Make the place jobs run ready (container, connection); *state is the
	 * backend's own. 0 or a negative errno with e filled. */
	int (*prepare)(void **state, struct herr *e);
	/* Run x to its end within x->limits (tree killed on timeout) and fill
	 * exit code, signal, streams, duration; 0 or a negative errno. */
	int (*exec)(void *state, const struct runner_exec *x, struct runner_result *res,
		    struct herr *e);
	/* Put the host file host_path into the place as dest. */
	int (*copy_in)(void *state, const char *host_path, const char *dest, struct herr *e);
	/* Bring the file src of the place back to the host as host_path. */
	int (*copy_out)(void *state, const char *src, const char *host_path, struct herr *e);
	/* Release what prepare made; safe to call after a failed prepare. */
	void (*teardown)(void *state);
};

extern const struct runner_backend backend_local;

/* x on be: prepared, run, torn down (a grace of 0 becomes the default);
 * 0, or a negative errno with e prefixed by the backend's name. */
int backend_run(const struct runner_backend *be, struct runner_exec *x,
		struct runner_result *res, struct herr *e);

/* The backend called name, or NULL. */
const struct runner_backend *backend_find(const char *name);
