/* hermesctl code: runs an agent's Python script whose hermes_tools calls
 * (read_file, write_file, patch, search_files, terminal) are served by
 * this process over RPC, as one turn, and reports its output and exit
 * code, or one JSON object. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "code.h"
#include "config.h"
#include "env.h"
#include "gate.h"
#include "hermesctl.h"
#include "home.h"
#include "log.h"
#include "tools/tools.h"

#define CODE_SCRIPT_MAX ((size_t)16 << 20)

struct code_opts {
	const char *cwd, *mode, *backend, *reason, *home_mode, *approval, *script;
	double timeout;
	long max_calls;
	int json, debug;
};

static int code_json_mode, code_json_printed;

static void code_usage(FILE *out)
{
	fprintf(out,
		"usage: hermesctl code [OPTIONS] SCRIPT|-\n"
		"\n"
		"Run a Python script (a file, or - for standard input) that calls the project's\n"
		"tools through the module hermes_tools, served by this process over a private\n"
		"socket: read_file, write_file, patch, search_files and terminal, plus the\n"
		"helpers json_parse, shell_quote and retry. In a mounted tree the whole script\n"
		"is one turn: one checkpoint before its first change, whatever writes it.\n"
		"\n"
		"  from hermes_tools import read_file, patch, terminal\n"
		"  print(read_file('README.md', limit=5)['content'])\n"
		"\n"
		"Options:\n"
		"  -C DIR               the tree (default: the current directory)\n"
		"  --mode MODE          project (default): run in the tree with its interpreter\n"
		"                       ($VIRTUAL_ENV, $CONDA_PREFIX, .venv/ or venv/ of the tree,\n"
		"                       else python3); strict: a private directory and the\n"
		"                       system python3\n"
		"  --timeout S          kill the script's whole process tree after S seconds\n"
		"                       (default 300, config code_execution.timeout)\n"
		"  --max-tool-calls N   tool calls allowed (default 50, config\n"
		"                       code_execution.max_tool_calls); past it a call answers\n"
		"                       an error and the script goes on\n"
		"  --backend NAME       where the script runs (default local)\n"
		"  --json               print one JSON object: status (success, error, timeout,\n"
		"                       interrupted), output, tool_calls_made, duration_seconds,\n"
		"                       exit_code, error, stdout_spill_path\n"
		"  --reason TEXT        the turn's reason (default: the script's first line)\n"
		"  --home-mode MODE     auto, real or profile (as hermesctl run)\n"
		"  --approval MODE      manual, deny or off, for terminal() (as hermesctl run)\n"
		"  -d, --debug          debug messages on stderr\n"
		"\n"
		"Output: stdout keeps 50,000 bytes (20,000 head, 30,000 tail), the whole of it\n"
		"(up to 5 MB) kept in $HERMES_HOME/cache/exec/ when cut; stderr 10,000 bytes.\n"
		"terminal() runs each command as 'hermesctl run' does (the danger gate, the\n"
		"scrubbed environment, limits); with nobody to ask, a risky command is refused\n"
		"and the refusal is the tool's answer. The tools' answers are documented in\n"
		"runner/README.md.\n"
		"\n"
		"Exit status: the script's own; 124 when it timed out; 1 or 2 when hermesctl\n"
		"itself failed or was misused.\n");
}

static int code_parse(int argc, char **argv, struct code_opts *o)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
		const char **dest = NULL;

		if (strcmp(a, "-") == 0 || a[0] != '-')
			break;
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (hctl_is_help(a)) {
			code_usage(stdout);
			return 1;
		} else if (strcmp(a, "--json") == 0) {
			o->json = code_json_mode = 1;
			continue;
		} else if (strcmp(a, "-d") == 0 || strcmp(a, "--debug") == 0) {
			o->debug = 1;
			continue;
		} else if (strcmp(a, "-C") == 0) {
			dest = &o->cwd;
		} else if (strcmp(a, "--mode") == 0) {
			dest = &o->mode;
		} else if (strcmp(a, "--backend") == 0) {
			dest = &o->backend;
		} else if (strcmp(a, "--reason") == 0) {
			dest = &o->reason;
		} else if (strcmp(a, "--home-mode") == 0) {
			dest = &o->home_mode;
		} else if (strcmp(a, "--approval") == 0) {
			dest = &o->approval;
		} else if (strcmp(a, "--timeout") == 0 || strcmp(a, "--max-tool-calls") == 0) {
			char *end;
			double v;
			if (!next)
				goto missing;
			v = strtod(next, &end);
			if (*end || end == next || !(v > 0) || !(v <= 31536000)) {
				hctl_error("code: %s wants a positive number%s, not '%s'", a,
					   a[2] == 't' ? " of seconds, at most 31536000" : "", next);
				return -1;
			}
			if (a[2] == 't')
				o->timeout = v;
			else
				o->max_calls = (long)v;
			i++;
			continue;
		} else {
			hctl_error("code: unknown option '%s' (see 'hermesctl code --help')", a);
			return -1;
		}
		if (!next)
			goto missing;
		*dest = next;
		i++;
	}
	if (i >= argc) {
		hctl_error("code: no script given (a file, or - for standard input; see "
			   "'hermesctl code --help')");
		return -1;
	}
	if (i + 1 < argc) {
		hctl_error("code: one script only, got '%s' after '%s'", argv[i + 1], argv[i]);
		return -1;
	}
	o->script = argv[i];
	return 0;
missing:
	hctl_error("code: %s needs a value", argv[i]);
	return -1;
}

static int code_read_script(const char *name, char **out, size_t *len)
{
	int fd = strcmp(name, "-") == 0 ? STDIN_FILENO : open(name, O_RDONLY | O_CLOEXEC);
	int r;

	if (fd < 0) {
		hctl_error("code: cannot read %s: %s", name, strerror(errno));
		return -1;
	}
	r = tool_read_fd(fd, CODE_SCRIPT_MAX, out, len);
	if (fd != STDIN_FILENO)
		close(fd);
	if (r == -EFBIG)
		hctl_error("code: %s is over %zu MB", name, CODE_SCRIPT_MAX >> 20);
	else if (r < 0)
		hctl_error("code: cannot read %s: %s", name, strerror(-r));
	return r < 0 ? -1 : 0;
}

static int code_print_json(const struct code_job *job, const struct code_result *res)
{
	cJSON *o = cJSON_CreateObject();
	const struct runner_stream *so = &res->run.out, *se = &res->run.err;
	size_t n = so->len + se->len + 32;
	char *both = malloc(n), *out, *err, *text = NULL, *errmsg;
	size_t at = 0;

	if (!o || !both) {
		free(both);
		cJSON_Delete(o);
		return -ENOMEM;
	}
	memcpy(both, so->data ? so->data : "", so->len);
	at = so->len;
	if (res->status == CODE_ERROR && se->len) {
		at += (size_t)snprintf(both + at, n - at, "\n--- stderr ---\n");
		memcpy(both + at, se->data, se->len);
		at += se->len;
	}
	out = tool_utf8(both, at);
	err = tool_utf8(se->data ? se->data : "", se->len);
	errmsg = tool_utf8(res->error, strlen(res->error));
	free(both);
	if (out && err && errmsg) {
		cJSON_AddStringToObject(o, "status", code_status_name(res->status));
		cJSON_AddStringToObject(o, "output", out);
		cJSON_AddNumberToObject(o, "tool_calls_made", res->tool_calls);
		cJSON_AddNumberToObject(o, "duration_seconds", res->run.duration);
		cJSON_AddNumberToObject(o, "exit_code", res->run.exit_code);
		if (res->error[0])
			cJSON_AddStringToObject(o, "error", errmsg);
		else
			cJSON_AddNullToObject(o, "error");
		cJSON_AddStringToObject(o, "stderr", err);
		cJSON_AddNumberToObject(o, "stdout_bytes", (double)so->total);
		cJSON_AddNumberToObject(o, "stdout_omitted", (double)so->omitted);
		cJSON_AddNumberToObject(o, "stderr_bytes", (double)se->total);
		cJSON_AddNumberToObject(o, "stderr_omitted", (double)se->omitted);
		if (res->spill_path[0])
			cJSON_AddStringToObject(o, "stdout_spill_path", res->spill_path);
		cJSON_AddStringToObject(o, "python", res->python);
		cJSON_AddStringToObject(o, "mode", job->strict ? "strict" : "project");
		text = cJSON_PrintUnformatted(o);
	}
	if (text) {
		printf("%s\n", text);
		code_json_printed = 1;
	}
	cJSON_free(text);
	cJSON_Delete(o);
	free(out);
	free(err);
	free(errmsg);
	return text ? 0 : -ENOMEM;
}

static int code_main(int argc, char **argv);

int cmd_code(int argc, char **argv)
{
	int code;

	code_json_mode = code_json_printed = 0;
	code = code_main(argc, argv);
	if (code_json_mode && !code_json_printed && code != HCTL_OK) {
		cJSON *o = cJSON_CreateObject();
		char *text;
		cJSON_AddStringToObject(o, "status", "error");
		cJSON_AddStringToObject(o, "output", "");
		cJSON_AddNumberToObject(o, "tool_calls_made", 0);
		cJSON_AddNullToObject(o, "exit_code");
		cJSON_AddNumberToObject(o, "hermesctl_exit", code);
		cJSON_AddStringToObject(o, "error", hctl_last_error());
		if ((text = cJSON_PrintUnformatted(o)))
			printf("%s\n", text);
		cJSON_free(text);
		cJSON_Delete(o);
	}
	return code;
}

static int code_main(int argc, char **argv)
{
	struct code_opts o = { 0 };
	struct config *cfg = NULL;
	struct herr e = HERR_INIT;
	struct code_job job = { 0 };
	struct code_result res;
	const char *pass[64], *hm, *am;
	char self[PATH_MAX + 16];
	size_t npass = 0;
	char *script = NULL;
	size_t slen = 0;
	int r, code = HCTL_FAIL;

	if ((r = code_parse(argc, argv, &o)) != 0)
		return r > 0 ? HCTL_OK : HCTL_USAGE;
	log_open(NULL, o.debug ? LOG_DEBUG : LOG_WARN, 1);
	if (o.mode && strcmp(o.mode, "project") && strcmp(o.mode, "strict")) {
		hctl_error("code: --mode is project or strict, not '%s'", o.mode);
		return HCTL_USAGE;
	}
	if (config_load(NULL, &cfg, &e) < 0) {
		hctl_error("code: %s", e.msg);
		return HCTL_FAIL;
	}
	/* as hermesctl run: no secret left in our own initial environment,
	 * which the script could read back through /proc/<ppid>/environ */
	npass = hctl_scrub_self("code", argv, cfg, pass, sizeof(pass) / sizeof(pass[0]));
	if (npass == (size_t)-1)
		goto out;
	if (code_read_script(o.script, &script, &slen) < 0)
		goto out;

	runner_job_init(&job.base);
	hm = o.home_mode;
	am = o.approval;
	if (hctl_job_modes("code", &hm, &am, cfg, &job.base) < 0) {
		code = HCTL_USAGE;
		goto out;
	}
	job.base.limits.timeout = o.timeout > 0 ? o.timeout :
				  (double)config_int(cfg, "code_execution.timeout",
						     (long long)CODE_TIMEOUT_DEFAULT);
	job.max_tool_calls = o.max_calls > 0 ? (int)o.max_calls :
			     (int)config_int(cfg, "code_execution.max_tool_calls",
					     CODE_MAX_CALLS_DEFAULT);
	if (job.base.limits.timeout <= 0 || job.base.limits.timeout > 31536000 ||
	    job.max_tool_calls <= 0) {
		hctl_error("code: code_execution.timeout (1-31536000 s) and "
			   "code_execution.max_tool_calls must be positive in %s", config_path(cfg));
		code = HCTL_USAGE;
		goto out;
	}
	job.base.cwd = o.cwd;
	job.base.reason = o.reason;
	job.base.backend = o.backend ? o.backend : "local";
	job.base.passthrough = pass;
	job.base.n_passthrough = npass;
	job.base.can_ask = hctl_can_ask(o.json, 0, &job.base.no_ask_why);
	job.base.crontab_shim = hctl_crontab_shim();
	job.base.cfg = cfg;
	job.script = script;
	job.script_len = slen;
	job.strict = o.mode && strcmp(o.mode, "strict") == 0;
	job.home_mode_name = hm;
	job.approval_name = am;
	snprintf(self, sizeof(self), "%s/hermesctl", hctl_self_dir());
	job.hermesctl = self;
	if (!o.json) {
		job.base.stream_stdout_fd = STDOUT_FILENO;
		job.base.stream_stderr_fd = STDERR_FILENO;
	}
	fflush(stdout);
	signal(SIGPIPE, SIG_IGN);
	r = code_run(&job, &res, &e);
	if (r < 0) {
		hctl_error("code: %s", e.msg);
		code = r == -ENOENT && strstr(e.msg, "backend") ? HCTL_USAGE : HCTL_FAIL;
		goto out;
	}
	if (o.json && code_print_json(&job, &res) < 0)
		hctl_error("code: out of memory");
	if (!o.json && res.spill_path[0])
		hctl_warn("code: the output was cut; all of it is in %s", res.spill_path);
	if (res.status == CODE_TIMEOUT) {
		if (!o.json)
			hctl_error("code: %s", res.error);
		code = HCTL_TIMEOUT;
	} else {
		code = res.run.exit_code;
	}
	code_result_free(&res);
out:
	free(script);
	config_free(cfg);
	return code;
}
