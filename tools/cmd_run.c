/* hermesctl run: runs one command for an agent through the runner library
 * (gate, clean environment, HOME mode, turn mark, limits) and reports it
 * as streamed output and an exit code, or as one JSON object. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "env.h"
#include "gate.h"
#include "hermesctl.h"
#include "home.h"
#include "log.h"
#include "runner.h"
#include "tools/tools.h"

#ifndef HERMES_LIBEXECDIR
#define HERMES_LIBEXECDIR "/usr/local/libexec/hermes"
#endif

struct run_opts {
	const char *cwd, *backend, *reason, *home_mode, *approval;
	double timeout;
	int json, debug, no_turn, ask;
	int cmd_index;
};

/* --json was given to us (set by run_parse; cmd_run answers errors in
 * JSON then). */
static int run_json_mode;

static void run_usage(FILE *out)
{
	fprintf(out,
		"usage: hermesctl run [OPTIONS] -- COMMAND...\n"
		"\n"
		"Run a command for an agent: one word runs under 'bash -c', several words run\n"
		"as an argv. Before it runs: the danger gate, a scrubbed environment, the HOME\n"
		"mode, and a turn mark when the directory is inside a mounted tree.\n"
		"\n"
		"Options:\n"
		"  -C DIR             run in DIR (default: the current directory)\n"
		"  --timeout S        kill the whole process tree after S seconds (default 180,\n"
		"                     config terminal.timeout)\n"
		"  --backend NAME     where to run (default local, config terminal.backend)\n"
		"  --json             print one JSON object: exit_code, signal, stdout, stderr,\n"
		"                     duration, truncated, timed_out, blocked, reason; when\n"
		"                     the job could not start: exit_code null and error\n"
		"  --reason TEXT      why this turn happens (default: the command)\n"
		"  --home-mode MODE   auto, real or profile (env TERMINAL_HOME_MODE, config\n"
		"                     terminal.home_mode)\n"
		"  --approval MODE    manual, deny or off (env HERMES_APPROVALS_MODE, config\n"
		"                     approvals.mode)\n"
		"  --no-turn          mark no turn: the command is part of one marked already\n"
		"                     (hermesctl code's terminal() calls)\n"
		"  --ask              ask on the terminal about a risky command even with --json\n"
		"  -d, --debug        debug messages on stderr\n"
		"\n"
		"Output: stdout keeps 50,000 bytes (40%% head, 60%% tail), stderr 10,000 bytes\n"
		"(head), with a notice saying how many bytes were omitted.\n"
		"\n"
		"The danger gate guards against accidents; it is not a security boundary. Its\n"
		"floor (rm -rf of / or a home, mkfs, raw block-device writes, fork bombs,\n"
		"shutdown, kill -1) is always refused. Other risky commands need approval on\n"
		"the terminal; with nobody to ask (no terminal, --json, CI set) they are\n"
		"refused: allow them with approvals.allowlist in config.yaml or --approval off.\n"
		"\n"
		"Exit status: the command's own; 124 when it timed out; 4 when blocked;\n"
		"1 or 2 when hermesctl itself failed or was misused.\n");
}

static int run_parse(int argc, char **argv, struct run_opts *o)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *next = i + 1 < argc ? argv[i + 1] : NULL;
		const char **dest = NULL;

		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-')
			break;
		if (hctl_is_help(a)) {
			run_usage(stdout);
			return 1;
		} else if (strcmp(a, "--json") == 0) {
			o->json = 1;
			run_json_mode = 1;
			continue;
		} else if (strcmp(a, "-d") == 0 || strcmp(a, "--debug") == 0) {
			o->debug = 1;
			continue;
		} else if (strcmp(a, "--no-turn") == 0) {
			o->no_turn = 1;
			continue;
		} else if (strcmp(a, "--ask") == 0) {
			o->ask = 1;
			continue;
		} else if (strcmp(a, "-C") == 0) {
			dest = &o->cwd;
		} else if (strcmp(a, "--backend") == 0) {
			dest = &o->backend;
		} else if (strcmp(a, "--reason") == 0) {
			dest = &o->reason;
		} else if (strcmp(a, "--home-mode") == 0) {
			dest = &o->home_mode;
		} else if (strcmp(a, "--approval") == 0) {
			dest = &o->approval;
		} else if (strcmp(a, "--timeout") == 0) {
			char *end;
			if (!next)
				goto missing;
			o->timeout = strtod(next, &end);
			/* at most a year: past that the milliseconds overflow */
			if (*end || end == next || !(o->timeout > 0) || !(o->timeout <= 31536000)) {
				hctl_error("run: --timeout wants a positive number of seconds, "
					   "at most 31536000 (a year), not '%s'", next);
				return -1;
			}
			i++;
			continue;
		} else {
			hctl_error("run: unknown option '%s' (see 'hermesctl run --help')", a);
			return -1;
		}
		if (!next)
			goto missing;
		*dest = next;
		i++;
	}
	if (i >= argc) {
		hctl_error("run: no command given (usage: hermesctl run [OPTIONS] -- COMMAND)");
		return -1;
	}
	o->cmd_index = i;
	return 0;
missing:
	hctl_error("run: %s needs a value", argv[i]);
	return -1;
}

/* Can a person answer a prompt? why receives the reason when not. */
int hctl_can_ask(int json, int ask, const char **why)
{
	static const char *const ci_vars[] = { "CI", "CONTINUOUS_INTEGRATION", "GITHUB_ACTIONS",
					       "GITLAB_CI", "BUILDKITE", "JENKINS_URL", "TF_BUILD" };
	int fd;

	if (json && !ask) {
		*why = "--json output: no one reads a prompt";
		return 0;
	}
	for (size_t i = 0; i < sizeof(ci_vars) / sizeof(ci_vars[0]); i++) {
		const char *v = getenv(ci_vars[i]);
		if (v && v[0] && strcmp(v, "0") != 0 && strcasecmp(v, "false") != 0) {
			*why = "running under CI";
			return 0;
		}
	}
	fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		*why = "no terminal";
		return 0;
	}
	close(fd);
	return 1;
}

/* The crontab stand-in: beside hermesctl (build tree) or in libexec. */
const char *hctl_crontab_shim(void)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/hermes-crontab", hctl_self_dir());
	if (access(path, X_OK) == 0)
		return path;
	snprintf(path, sizeof(path), "%s/hermes-crontab", HERMES_LIBEXECDIR);
	return path;
}

/* Valid UTF-8 copy of s (bad bytes and NULs become U+FFFD) for JSON. */
/* Set once the result went out as JSON (cmd_run adds one on errors). */
static int run_json_printed;

static char *run_utf8(const char *s, size_t len)
{
	return tool_utf8(s, len);
}

static int run_print_json(const struct runner_result *res)
{
	cJSON *o = cJSON_CreateObject();
	char *out = run_utf8(res->out.data ? res->out.data : "", res->out.len);
	char *err = run_utf8(res->err.data ? res->err.data : "", res->err.len);
	char *text = NULL;

	if (o && out && err) {
		cJSON_AddNumberToObject(o, "exit_code", res->exit_code);
		cJSON_AddNumberToObject(o, "signal", res->signal);
		cJSON_AddStringToObject(o, "stdout", out);
		cJSON_AddStringToObject(o, "stderr", err);
		cJSON_AddNumberToObject(o, "duration", res->duration);
		cJSON_AddBoolToObject(o, "truncated", res->out.truncated || res->err.truncated);
		cJSON_AddNumberToObject(o, "stdout_bytes", (double)res->out.total);
		cJSON_AddNumberToObject(o, "stdout_omitted", (double)res->out.omitted);
		cJSON_AddNumberToObject(o, "stderr_bytes", (double)res->err.total);
		cJSON_AddNumberToObject(o, "stderr_omitted", (double)res->err.omitted);
		cJSON_AddBoolToObject(o, "timed_out", res->timed_out);
		cJSON_AddBoolToObject(o, "interrupted", res->interrupted != 0);
		cJSON_AddBoolToObject(o, "blocked", res->blocked);
		if (res->blocked)
			cJSON_AddStringToObject(o, "reason", res->block_reason);
		text = cJSON_PrintUnformatted(o);
	}
	if (text) {
		printf("%s\n", text);
		run_json_printed = 1;
	}
	cJSON_free(text);
	cJSON_Delete(o);
	free(out);
	free(err);
	return text ? 0 : -ENOMEM;
}

/* Resolve each policy from flag, then environment, then config. */
int hctl_job_modes(const char *cmd, const char **hm, const char **am, const struct config *cfg,
		   struct runner_job *job)
{
	if (!*hm)
		*hm = getenv("TERMINAL_HOME_MODE");
	if (!*hm || !(*hm)[0])
		*hm = config_str(cfg, "terminal.home_mode", "auto");
	if (home_mode_parse(*hm, &job->home_mode) < 0) {
		hctl_error("%s: unknown home mode '%s' (use auto, real or profile; aliases: "
			   "isolated, profile_home, profile-home, host, user, real_home, "
			   "real-home)", cmd, *hm);
		return -1;
	}
	if (!*am)
		*am = getenv("HERMES_APPROVALS_MODE");
	if (!*am || !(*am)[0])
		*am = config_str(cfg, "approvals.mode", "manual");
	if (gate_mode_parse(*am, &job->approval) < 0) {
		hctl_error("%s: unknown approval mode '%s' (use manual, deny or off)", cmd, *am);
		return -1;
	}
	return 0;
}

size_t hctl_scrub_self(const char *cmd, char **argv, const struct config *cfg, const char **pass,
		       size_t max)
{
	const cJSON *it, *plist = config_list(cfg, "terminal.env_passthrough");
	size_t n = 0;
	int r;

	cJSON_ArrayForEach(it, plist)
		if (cJSON_IsString(it) && n < max)
			pass[n++] = it->valuestring;
	/* Secrets must not stay in our own initial environment block, which
	 * the job could read back through /proc/<ppid>/environ: start again
	 * without them. argv - 1 is main's argv, "hermesctl" itself. */
	struct env_policy pol = { pass, n };
	r = env_scrub_in_place(&pol);
	if (r == -ENOSYS)
		r = env_reexec_scrubbed(argv - 1, &pol);
	if (r < 0) {
		hctl_error("%s: cannot restart without secrets in the environment: %s", cmd,
			   strerror(-r));
		return (size_t)-1;
	}
	return n;
}

static int run_policies(const struct run_opts *o, const struct config *cfg,
			struct runner_job *job)
{
	const char *hm = o->home_mode, *am = o->approval;

	if (hctl_job_modes("run", &hm, &am, cfg, job) < 0)
		return -1;
	job->limits.timeout = o->timeout > 0 ? o->timeout :
			      (double)config_int(cfg, "terminal.timeout", RUNNER_TIMEOUT_DEFAULT);
	long long so = config_int(cfg, "terminal.max_output_bytes", RUNNER_STDOUT_MAX);
	long long se = config_int(cfg, "terminal.max_stderr_bytes", RUNNER_STDERR_MAX);
	if (job->limits.timeout > 31536000) {
		hctl_error("run: terminal.timeout is at most 31536000 s (a year) in %s",
			   config_path(cfg));
		return -1;
	}
	if (so < 1 || se < 1 || job->limits.timeout <= 0) {
		hctl_error("run: terminal.timeout, terminal.max_output_bytes and "
			   "terminal.max_stderr_bytes must be positive in %s", config_path(cfg));
		return -1;
	}
	job->limits.stdout_max = (size_t)so;
	job->limits.stderr_max = (size_t)se;
	job->backend = o->backend ? o->backend : config_str(cfg, "terminal.backend", "local");
	return 0;
}

static int run_main(int argc, char **argv);

/* With --json a program reads standard output: an error before the job
 * ran (a bad -C, a config error, a dead mount's turn) is JSON there too,
 * {"error": ..., "exit_code": ...}, besides the line on stderr. */
int cmd_run(int argc, char **argv)
{
	int code;

	run_json_printed = run_json_mode = 0;
	code = run_main(argc, argv);
	/* run_json_mode: our own --json, as the parser saw it (a --json
	 * among the command's words is the command's) */
	if (run_json_mode && !run_json_printed && code != HCTL_OK) {
		cJSON *o = cJSON_CreateObject();
		char *text;
		cJSON_AddNullToObject(o, "exit_code");
		cJSON_AddNumberToObject(o, "hermesctl_exit", code);
		cJSON_AddStringToObject(o, "error", hctl_last_error());
		cJSON_AddBoolToObject(o, "blocked", code == HCTL_BLOCKED);
		cJSON_AddBoolToObject(o, "timed_out", 0);
		if ((text = cJSON_PrintUnformatted(o)))
			printf("%s\n", text);
		cJSON_free(text);
		cJSON_Delete(o);
	}
	return code;
}

static int run_main(int argc, char **argv)
{
	struct run_opts o = { 0 };
	struct config *cfg = NULL;
	struct herr e = HERR_INIT;
	struct runner_job job;
	struct runner_result res;
	const char *pass[64];
	size_t npass = 0;
	int r, code;

	if ((r = run_parse(argc, argv, &o)) != 0)
		return r > 0 ? HCTL_OK : HCTL_USAGE;
	log_open(NULL, o.debug ? LOG_DEBUG : LOG_WARN, 1);
	if (config_load(NULL, &cfg, &e) < 0) {
		hctl_error("run: %s", e.msg);
		return HCTL_FAIL;
	}
	npass = hctl_scrub_self("run", argv, cfg, pass, sizeof(pass) / sizeof(pass[0]));
	if (npass == (size_t)-1) {
		config_free(cfg);
		return HCTL_FAIL;
	}

	runner_job_init(&job);
	if (run_policies(&o, cfg, &job) < 0) {
		config_free(cfg);
		return HCTL_USAGE;
	}
	if (argc - o.cmd_index == 1)
		job.command = argv[o.cmd_index];
	else
		job.argv = argv + o.cmd_index;
	job.cwd = o.cwd;
	job.reason = o.reason;
	job.passthrough = pass;
	job.n_passthrough = npass;
	job.can_ask = hctl_can_ask(o.json, o.ask, &job.no_ask_why);
	job.no_turn = o.no_turn;
	job.crontab_shim = hctl_crontab_shim();
	job.cfg = cfg;
	if (!o.json) {
		job.stream_stdout_fd = STDOUT_FILENO;
		job.stream_stderr_fd = STDERR_FILENO;
	}
	fflush(stdout);
	/* A reader that goes away must not kill us before the job's tree. */
	signal(SIGPIPE, SIG_IGN);

	r = runner_run(&job, &res, &e);
	if (r < 0) {
		hctl_error("run: %s", e.msg);
		config_free(cfg);
		return r == -ENOENT && strstr(e.msg, "backend") ? HCTL_USAGE : HCTL_FAIL;
	}
	if (o.json && run_print_json(&res) < 0)
		hctl_error("run: out of memory");
	if (res.blocked) {
		if (!o.json)
			hctl_error("%s", res.block_reason);
		code = HCTL_BLOCKED;
	} else if (res.timed_out) {
		if (!o.json)
			hctl_error("run: timed out after %g s; the process tree was killed",
				   job.limits.timeout);
		code = HCTL_TIMEOUT;
	} else if (res.interrupted) {
		if (!o.json && res.interrupted != SIGPIPE)
			hctl_error("run: interrupted by signal %d; the process tree was killed",
				   res.interrupted);
		code = res.exit_code;
	} else {
		code = res.exit_code;
	}
	runner_result_free(&res);
	config_free(cfg);
	return code;
}
