/* The runner library: one job (a command for an agent) run through a
 * backend with a danger gate, a scrubbed environment, an isolated HOME,
 * a timeout that kills the whole process tree and capped output.
 *
 * One job at a time per process: the local backend makes the process a
 * child subreaper and treats every orphan it inherits as part of the job. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "err.h"

struct config;

#define RUNNER_TIMEOUT_DEFAULT 180.0
#define RUNNER_GRACE_DEFAULT 1.0
#define RUNNER_STDOUT_MAX 50000
#define RUNNER_STDERR_MAX 10000

enum runner_home_mode {
	RUNNER_HOME_AUTO = 0, /* profile in a container, real on a host */
	RUNNER_HOME_REAL,
	RUNNER_HOME_PROFILE,
};

enum runner_approval {
	RUNNER_APPROVAL_MANUAL = 0, /* ask on /dev/tty when someone can answer */
	RUNNER_APPROVAL_DENY,       /* patterns that need approval are refused */
	RUNNER_APPROVAL_OFF,        /* patterns pass; the floor still refuses */
};

struct runner_limits {
	double timeout;       /* seconds; <= 0 means the default */
	double grace;         /* seconds between TERM and KILL */
	size_t stdout_max;    /* bytes kept: 40% head + 60% tail */
	size_t stderr_max;    /* bytes kept: head only */
};

struct runner_job {
	/* Exactly one of command (run under bash -c) and argv (run as is). */
	const char *command;
	char *const *argv;
	const char *cwd;           /* NULL: the current directory */
	struct runner_limits limits;
	/* Environment policy: names kept although they look like secrets. */
	const char *const *passthrough;
	size_t n_passthrough;
	enum runner_home_mode home_mode;
	enum runner_approval approval;
	int can_ask;               /* someone may answer on /dev/tty */
	const char *no_ask_why;    /* why nobody can answer, for the message */
	const char *reason;        /* turn reason; NULL: the command */
	int no_turn;               /* part of a turn marked already (hermesctl code) */
	const char *backend;       /* NULL: "local" */
	const char *crontab_shim;  /* the crontab stand-in program, or NULL */
	const struct config *cfg;  /* allowlist, deny list; may be NULL */
	/* When >= 0, captured bytes within the caps are also written here as
	 * they arrive (head), the notice and tail when the job ends. */
	int stream_stdout_fd, stream_stderr_fd;
};

struct runner_stream {
	char *data;      /* what is kept, with the truncation notice; NUL-ended */
	size_t len;
	size_t total;    /* bytes the command wrote */
	size_t omitted;  /* total minus what was kept */
	int truncated;
};

struct runner_result {
	int exit_code;       /* the command's, 128+signal, 124 on timeout,
			      * 128+signal when the runner was interrupted */
	int signal;          /* the signal that ended it, or 0 */
	double duration;     /* seconds from spawn to exit */
	int timed_out;
	int interrupted;     /* the signal that stopped the runner, or 0 */
	int blocked;
	char block_reason[1024];
	struct runner_stream out, err;
	pid_t pid;           /* the job's main process */
};

void runner_job_init(struct runner_job *job);
/* Run a job. Returns 0 when the job ran or was blocked (see res->blocked),
 * a negative errno with e filled when it could not be run at all. */
int runner_run(const struct runner_job *job, struct runner_result *res, struct herr *e);
void runner_result_free(struct runner_result *res);

/* The environment a job of job's policies gets (scrubbed, its HOME, a
 * PATH with the standard directories) and the write guard that knows its
 * homes. */
struct envv;
struct guard;
int runner_environment(const struct runner_job *job, struct envv *env, struct guard *g,
		       struct herr *e);

/* Backends compiled in, NULL-terminated, for messages. */
const char *const *runner_backend_names(void);
