/* Running a hermesctl code script. In order: the tree and the script's
 * environment (the scrub and HOME of hermesctl run), a private directory
 * (0700) holding hermes_tools.py and the script, a token of 32 random
 * bytes, the RPC server on a socket in that directory, one turn mark, the
 * interpreter through the backend (timeout, output caps, the whole stdout
 * spilled aside), then the directory removed. */
#include "code.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "cleanup.h"
#include "env.h"
#include "guard.h"
#include "log.h"
#include "paths.h"
#include "rpc.h"
#include "tools/tools.h"
#include "turn.h"

const char *code_status_name(enum code_status s)
{
	switch (s) {
	case CODE_SUCCESS: return "success";
	case CODE_TIMEOUT: return "timeout";
	case CODE_INTERRUPTED: return "interrupted";
	default: return "error";
	}
}

void code_result_free(struct code_result *res)
{
	runner_result_free(&res->run);
}

static const char code_module_head[] =
	"\"\"\"The project's tools, served by hermesctl code: each call is one request to\n"
	"the runner over its socket (a connection per thread, so threads may call at\n"
	"once). Every tool answers a dict; a failure is {'error': ...}.\"\"\"\n"
	"import _thread\n"
	"import os as _os\n"
	"\n"
	"_SOCKET = _os.environ.get(\"HERMES_RPC_SOCKET\", \"\")\n"
	"_TOKEN = _os.environ.get(\"HERMES_RPC_TOKEN\", \"\")\n"
	"_local = _thread._local()\n"
	"\n"
	"\n"
	"def _call(tool, args):\n"
	"    import json\n"
	"    c = _local\n"
	"    if getattr(c, \"sock\", None) is None:\n"
	"        import socket\n"
	"        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
	"        s.connect(_SOCKET)\n"
	"        c.sock, c.rfile, c.seq = s, s.makefile(\"rb\"), 0\n"
	"    c.seq += 1\n"
	"    req = {\"id\": c.seq, \"tool\": tool, \"args\": args, \"token\": _TOKEN}\n"
	"    c.sock.sendall(json.dumps(req).encode() + b\"\\n\")\n"
	"    line = c.rfile.readline()\n"
	"    if not line:\n"
	"        c.sock = None\n"
	"        raise RuntimeError(f\"hermes_tools: the runner closed the connection during {tool}()\")\n"
	"    r = json.loads(line)\n"
	"    if \"result\" in r:\n"
	"        return r[\"result\"]\n"
	"    return {\"error\": r.get(\"error\", \"no answer\")}\n"
	"\n"
	"\n"
	"def json_parse(text):\n"
	"    \"\"\"json.loads that takes a BOM and control characters in strings.\"\"\"\n"
	"    import json\n"
	"    if isinstance(text, (bytes, bytearray)):\n"
	"        text = text.decode(\"utf-8\", \"replace\")\n"
	"    return json.loads(text.lstrip(\"\\ufeff\"), strict=False)\n"
	"\n"
	"\n"
	"def shell_quote(s):\n"
	"    \"\"\"s quoted for a POSIX shell.\"\"\"\n"
	"    import shlex\n"
	"    return shlex.quote(str(s))\n"
	"\n"
	"\n"
	"def retry(fn, max_attempts=3, delay=2):\n"
	"    \"\"\"fn() until it returns, at most max_attempts times, sleeping\n"
	"    delay * 2**attempt seconds between tries.\"\"\"\n"
	"    import time\n"
	"    for attempt in range(max_attempts):\n"
	"        try:\n"
	"            return fn()\n"
	"        except Exception:\n"
	"            if attempt == max_attempts - 1:\n"
	"                raise\n"
	"            time.sleep(delay * 2 ** attempt)\n";

/* One stub: def name(params): """doc"""; return _call("name", {...}). */
static int code_stub(FILE *f, const struct tool_def *t)
{
	char params[512];
	int first = 1;

	fprintf(f, "\n\ndef %s(%s):\n    \"\"\"%s\"\"\"\n    return _call(\"%s\", {", t->name,
		t->py_params, t->py_doc, t->name);
	snprintf(params, sizeof(params), "%s", t->py_params);
	for (char *save = NULL, *p = strtok_r(params, ",", &save); p;
	     p = strtok_r(NULL, ",", &save)) {
		while (*p == ' ')
			p++;
		p[strcspn(p, "=")] = '\0';
		fprintf(f, "%s\"%s\": %s", first ? "" : ", ", p, p);
		first = 0;
	}
	fprintf(f, "})\n");
	return ferror(f) ? -EIO : 0;
}

static char *code_module_text(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	fputs(code_module_head, f);
	fputs("\n\n__all__ = [\"json_parse\", \"shell_quote\", \"retry\"", f);
	for (size_t i = 0; tool_all[i]; i++)
		fprintf(f, ", \"%s\"", tool_all[i]->name);
	fputs("]\n", f);
	for (size_t i = 0; tool_all[i]; i++)
		code_stub(f, tool_all[i]);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

static int code_write_file(const char *dir, const char *name, const char *data, size_t len)
{
	char path[PATH_MAX + 64];
	int fd, r = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	for (size_t at = 0; at < len && r == 0;) {
		ssize_t w = write(fd, data + at, len - at);
		if (w < 0 && errno != EINTR)
			r = -errno;
		else if (w > 0)
			at += (size_t)w;
	}
	if (close(fd) < 0 && r == 0)
		r = -errno;
	return r;
}

static int code_rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static int code_executable(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, X_OK) == 0;
}

/* name found on the child's PATH into out. */
static int code_which(const struct envv *env, const char *name, char *out, size_t size)
{
	const char *path = envv_get(env, "PATH");

	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");
		snprintf(out, size, "%.*s/%s", (int)n, p, name);
		if (n && code_executable(out))
			return 0;
		p += n + (p[n] == ':');
	}
	return -ENOENT;
}

/* project: $VIRTUAL_ENV, $CONDA_PREFIX, a .venv/ or venv/ of the tree,
 * else python3 on PATH; strict: the system python3. */
static int code_python(const struct code_job *job, const struct envv *env, const char *cwd,
		       char *out, size_t size)
{
	const char *cand[] = { envv_get(env, "VIRTUAL_ENV"), envv_get(env, "CONDA_PREFIX") };

	if (job->strict) {
		snprintf(out, size, "/usr/bin/python3");
		return code_executable(out) ? 0 : code_which(env, "python3", out, size);
	}
	for (size_t i = 0; i < 2; i++) {
		if (!cand[i] || !cand[i][0])
			continue;
		snprintf(out, size, "%s/bin/python", cand[i]);
		if (code_executable(out))
			return 0;
	}
	snprintf(out, size, "%s/.venv/bin/python", cwd);
	if (code_executable(out))
		return 0;
	snprintf(out, size, "%s/venv/bin/python", cwd);
	if (code_executable(out))
		return 0;
	return code_which(env, "python3", out, size);
}

/* The turn's reason: given, or the script's first line that says something. */
static void code_reason(const struct code_job *job, char *out, size_t size)
{
	const char *s = job->script, *end = job->script + job->script_len;

	if (job->base.reason && job->base.reason[0]) {
		snprintf(out, size, "%s", job->base.reason);
		return;
	}
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
		const char *t = s;
		while (t < s + n && (*t == ' ' || *t == '\t' || *t == '#'))
			t++;
		if (t < s + n && strncmp(t, "!", 1) != 0) {
			size_t k = (size_t)(s + n - t);
			snprintf(out, size, "code: %.*s", (int)(k > 120 ? 120 : k), t);
			return;
		}
		s += n + 1;
	}
	snprintf(out, size, "hermesctl code");
}

static int code_tmpdir(char *out, size_t size)
{
	const char *base = getenv("XDG_RUNTIME_DIR");
	struct stat sb;

	if (!base || stat(base, &sb) < 0 || !S_ISDIR(sb.st_mode) || access(base, W_OK) < 0 ||
	    strlen(base) > 60)
		base = "/tmp";
	snprintf(out, size, "%s/hermes-code-XXXXXX", base);
	return mkdtemp(out) ? 0 : -errno;
}

/* Where the whole stdout goes: $HERMES_HOME/cache/exec/stdout-XXXXXX.txt */
static int code_spill_open(char *path, size_t size)
{
	char hh[PATH_MAX];
	int fd;

	if (paths_hermes_home(hh, sizeof(hh)) < 0)
		return -ENOENT;
	snprintf(path, size, "%s/cache", hh);
	mkdir(hh, 0700);
	mkdir(path, 0700);
	snprintf(path, size, "%s/cache/exec", hh);
	mkdir(path, 0700);
	snprintf(path, size, "%s/cache/exec/stdout-XXXXXX.txt", hh);
	fd = mkostemps(path, 4, O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int code_run(const struct code_job *job, struct code_result *res, struct herr *e)
{
	const struct runner_backend *be;
	char cwd[PATH_MAX], dir[PATH_MAX], sock[PATH_MAX + 16], script[PATH_MAX + 16];
	char token[65], reason[256], home[PATH_MAX];
	unsigned char rnd[32];
	struct envv env = { 0 };
	struct tool_ctx *ctx = NULL;
	struct rpc_server *srv = NULL;
	char *module = NULL;
	int r, have_dir = 0, spill_fd = -1;

	memset(res, 0, sizeof(*res));
	be = backend_find(job->base.backend ? job->base.backend : "local");
	if (!be)
		return err_set(e, -ENOENT, "unknown backend '%s'", job->base.backend);
	if ((r = paths_resolve(job->base.cwd ? job->base.cwd : ".", cwd, sizeof(cwd), e)) < 0)
		return err_prefix(e, "working directory");
	if (!(ctx = calloc(1, sizeof(*ctx))))
		return err_set(e, -ENOMEM, "out of memory");
	if ((r = runner_environment(&job->base, &env, &ctx->guard, e)) < 0)
		goto out;
	if ((r = code_python(job, &env, cwd, res->python, sizeof(res->python))) < 0) {
		r = err_set(e, -ENOENT, "no Python interpreter found (python3 on PATH)");
		goto out;
	}
	if ((r = code_tmpdir(dir, sizeof(dir))) < 0) {
		err_sys(e, r, "cannot make a private directory");
		goto out;
	}
	have_dir = 1;
	if (!(module = code_module_text())) {
		r = err_set(e, -ENOMEM, "out of memory");
		goto out;
	}
	if ((r = code_write_file(dir, "hermes_tools.py", module, strlen(module))) < 0 ||
	    (r = code_write_file(dir, "script.py", job->script, job->script_len)) < 0) {
		err_sys(e, r, "cannot write into %s", dir);
		goto out;
	}
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		r = err_sys(e, -errno, "cannot draw the run's token");
		goto out;
	}
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(token + 2 * i, 3, "%02x", rnd[i]);
	snprintf(sock, sizeof(sock), "%s/rpc.sock", dir);
	snprintf(script, sizeof(script), "%s/script.py", dir);

	/* the tools act where the script runs, as the job's HOME */
	snprintf(ctx->root, sizeof(ctx->root), "%s", job->strict ? dir : cwd);
	snprintf(home, sizeof(home), "%s", envv_get(&env, "HOME") ? envv_get(&env, "HOME") : "/");
	snprintf(ctx->home, sizeof(ctx->home), "%s", home);
	ctx->hermesctl = job->hermesctl;
	ctx->home_mode = job->home_mode_name;
	ctx->approval = job->approval_name;
	ctx->can_ask = job->base.can_ask;
	ctx->timeout = job->base.limits.timeout > 0 ? job->base.limits.timeout : CODE_TIMEOUT_DEFAULT;

	if ((r = envv_set(&env, "HERMES_RPC_SOCKET", sock)) < 0 ||
	    (r = envv_set(&env, "HERMES_RPC_TOKEN", token)) < 0 ||
	    (r = envv_set(&env, "PYTHONDONTWRITEBYTECODE", "1")) < 0 ||
	    (r = envv_set(&env, "PYTHONIOENCODING", "utf-8")) < 0 ||
	    (r = envv_set(&env, "PYTHONUTF8", "1")) < 0) {
		r = err_set(e, -ENOMEM, "out of memory");
		goto out;
	}
	if ((r = rpc_start(sock, token, ctx,
			   job->max_tool_calls > 0 ? job->max_tool_calls : CODE_MAX_CALLS_DEFAULT,
			   &srv, e)) < 0)
		goto out;
	code_reason(job, reason, sizeof(reason));
	if (!job->base.no_turn && (r = turn_mark(cwd, reason, e)) < 0)
		goto out;
	spill_fd = code_spill_open(res->spill_path, sizeof(res->spill_path));
	if (spill_fd < 0)
		res->spill_path[0] = '\0';

	char *argv[] = { res->python, script, NULL };
	struct runner_exec x = {
		.argv = argv,
		.envp = env.v,
		.cwd = job->strict ? dir : cwd,
		.limits = job->base.limits,
		.stream_stdout_fd = job->base.stream_stdout_fd,
		.stream_stderr_fd = job->base.stream_stderr_fd,
		.spill_stdout_fd = spill_fd,
		.spill_max = CODE_SPILL_MAX,
	};
	if (x.limits.timeout <= 0)
		x.limits.timeout = CODE_TIMEOUT_DEFAULT;
	if ((r = backend_run(be, &x, &res->run, e)) < 0)
		goto out;
	res->tool_calls = rpc_stop(srv);
	srv = NULL;
	if (res->run.timed_out) {
		res->status = CODE_TIMEOUT;
		snprintf(res->error, sizeof(res->error),
			 "Script timed out after %gs and was killed.", x.limits.timeout);
	} else if (res->run.interrupted) {
		res->status = CODE_INTERRUPTED;
		snprintf(res->error, sizeof(res->error),
			 "execution interrupted (signal %d); the script's processes were killed",
			 res->run.interrupted);
	} else if (res->run.exit_code != 0) {
		res->status = CODE_ERROR;
		if (res->run.err.len)
			snprintf(res->error, sizeof(res->error), "%s", res->run.err.data);
		else
			snprintf(res->error, sizeof(res->error), "Script exited with code %d",
				 res->run.exit_code);
	}
	if (res->spill_path[0] && !res->run.out.truncated) {
		unlink(res->spill_path);
		res->spill_path[0] = '\0';
	}
	r = 0;
out:
	if (srv) {
		rpc_stop(srv);
	}
	if (spill_fd >= 0)
		close(spill_fd);
	if (r < 0 && res->spill_path[0]) {
		unlink(res->spill_path);
		res->spill_path[0] = '\0';
	}
	if (have_dir && nftw(dir, code_rm_one, 16, FTW_DEPTH | FTW_PHYS) < 0)
		log_warn("code: cannot remove %s: %s", dir, strerror(errno));
	free(module);
	envv_free(&env);
	free(ctx);
	return r;
}
