/* Running one job: resolve where it runs, build its environment and HOME,
 * pass the danger gate, mark the turn, then hand it to its backend. */
#include "runner.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "config.h"
#include "env.h"
#include "gate.h"
#include "guard.h"
#include "home.h"
#include "log.h"
#include "paths.h"
#include "shword.h"
#include "turn.h"

extern char **environ;

static const struct runner_backend *const job_backends[] = {
	&backend_local,
	NULL,
};

const struct runner_backend *backend_find(const char *name)
{
	for (size_t i = 0; job_backends[i]; i++)
		if (strcmp(job_backends[i]->name, name) == 0)
			return job_backends[i];
	return NULL;
}

int backend_run(const struct runner_backend *be, struct runner_exec *x,
		struct runner_result *res, struct herr *e)
{
	void *state = NULL;
	int r;

	if (x->limits.grace <= 0)
		x->limits.grace = RUNNER_GRACE_DEFAULT;
	if ((r = be->prepare(&state, e)) == 0)
		r = be->exec(state, x, res, e);
	be->teardown(state);
	return r < 0 ? err_prefix(e, "backend %s", be->name) : 0;
}

const char *const *runner_backend_names(void)
{
	static const char *names[sizeof(job_backends) / sizeof(job_backends[0])];

	for (size_t i = 0; job_backends[i]; i++)
		names[i] = job_backends[i]->name;
	return names;
}

void runner_job_init(struct runner_job *job)
{
	memset(job, 0, sizeof(*job));
	job->limits.timeout = RUNNER_TIMEOUT_DEFAULT;
	job->limits.grace = RUNNER_GRACE_DEFAULT;
	job->limits.stdout_max = RUNNER_STDOUT_MAX;
	job->limits.stderr_max = RUNNER_STDERR_MAX;
	job->stream_stdout_fd = job->stream_stderr_fd = -1;
}

void runner_result_free(struct runner_result *res)
{
	free(res->out.data);
	free(res->err.data);
	res->out.data = res->err.data = NULL;
}

static int job_backend_error(const char *name, struct herr *e)
{
	char list[256] = "";
	const char *const *names = runner_backend_names();

	for (size_t i = 0, o = 0; names[i] && o < sizeof(list); i++)
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", i ? ", " : "", names[i]);
	return err_set(e, -ENOENT, "unknown backend '%s' (available: %s)", name, list);
}

/* Where the config is (or would be), for messages. */
static void job_config_path(const struct runner_job *job, char *out, size_t size)
{
	char hh[PATH_MAX];

	if (job->cfg && config_path(job->cfg)[0])
		snprintf(out, size, "%s", config_path(job->cfg));
	else if (paths_hermes_home(hh, sizeof(hh)) == 0)
		snprintf(out, size, "%s/config.yaml", hh);
	else
		snprintf(out, size, "config.yaml");
}

/* A PATH without /usr/bin (or none at all) gets the standard dirs. */
static int job_default_path(struct envv *env)
{
	static const char std[] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	const char *path = envv_get(env, "PATH");
	char buf[8192];
	size_t n;

	if (!path || !path[0])
		return envv_set(env, "PATH", std);
	for (const char *p = path; *p; p += n + (p[n] == ':')) {
		n = strcspn(p, ":");
		if (n == 8 && strncmp(p, "/usr/bin", 8) == 0)
			return 0;
	}
	if ((size_t)snprintf(buf, sizeof(buf), "%s:%s", path, std) >= sizeof(buf))
		return 0;
	return envv_set(env, "PATH", buf);
}

/* The job's final environment and the guard that knows its homes. */
int runner_environment(const struct runner_job *job, struct envv *env, struct guard *g,
		       struct herr *e)
{
	struct env_policy pol = { job->passthrough, job->n_passthrough };
	char home[PATH_MAX], real[PATH_MAX];
	int r;

	if ((r = env_build_child(environ, &pol, env)) < 0)
		return err_set(e, r, "cannot build the job's environment");
	if ((r = job_default_path(env)) < 0)
		return err_set(e, r, "cannot build the job's environment");
	if ((r = home_apply(job->home_mode, job->crontab_shim, env, home, sizeof(home), e)) < 0)
		return r;
	home_real(real, sizeof(real));
	guard_init(g, home, real, job->cfg ? config_path(job->cfg) : NULL);
	return 0;
}

int runner_run(const struct runner_job *job, struct runner_result *res, struct herr *e)
{
	const struct runner_backend *be;
	char *joined = NULL;
	const char *text;
	char cwd[PATH_MAX];
	struct envv env = { 0 };
	struct guard g;
	int r;

	memset(res, 0, sizeof(*res));
	be = backend_find(job->backend ? job->backend : "local");
	if (!be)
		return job_backend_error(job->backend, e);
	if (!job->command == !job->argv)
		return err_set(e, -EINVAL, "a job needs either a command or an argv");
	if (job->argv && !job->argv[0])
		return err_set(e, -EINVAL, "empty command");
	if ((r = paths_resolve(job->cwd ? job->cwd : ".", cwd, sizeof(cwd), e)) < 0)
		return err_prefix(e, "working directory");
	{
		struct stat sb;
		if (stat(cwd, &sb) == 0 && !S_ISDIR(sb.st_mode))
			return err_set(e, -ENOTDIR, "working directory %s: not a directory", cwd);
	}
	text = job->command;
	if (!text && !(text = joined = shword_join(job->argv)))
		return err_set(e, -ENOMEM, "out of memory");

	if ((r = runner_environment(job, &env, &g, e)) < 0)
		goto out;

	char cfgpath[PATH_MAX + 16];
	job_config_path(job, cfgpath, sizeof(cfgpath));
	struct gate_policy pol = {
		.mode = job->approval,
		.can_ask = job->can_ask,
		.no_ask_why = job->no_ask_why,
		.allowlist = job->cfg ? config_list(job->cfg, "approvals.allowlist") : NULL,
		.deny = job->cfg ? config_list(job->cfg, "approvals.deny") : NULL,
		.config_path = cfgpath,
	};
	r = gate_decide(text, &pol, &g, cwd, res->block_reason, sizeof(res->block_reason));
	if (r == -EPERM) {
		res->blocked = 1;
		res->exit_code = -1;
		log_info("gate: %s: %s", res->block_reason, text);
		r = 0;
		goto out;
	}
	if (r < 0) {
		err_sys(e, r, "the danger gate failed");
		goto out;
	}

	if (!job->no_turn && (r = turn_mark(cwd, job->reason ? job->reason : text, e)) < 0)
		goto out;

	/* "--": a command that starts with '-' is a command, not an option */
	char *bash_argv[] = { "/bin/bash", "-c", "--", (char *)job->command, NULL };
	struct runner_exec x = {
		.argv = job->command ? bash_argv : job->argv,
		.envp = env.v,
		.cwd = cwd,
		.limits = job->limits,
		.stream_stdout_fd = job->stream_stdout_fd,
		.stream_stderr_fd = job->stream_stderr_fd,
		.spill_stdout_fd = -1,
	};
	if (x.limits.timeout <= 0)
		x.limits.timeout = RUNNER_TIMEOUT_DEFAULT;
	r = backend_run(be, &x, res, e);
out:
	envv_free(&env);
	free(joined);
	return r;
}
