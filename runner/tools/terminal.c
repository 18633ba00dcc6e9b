/* terminal(command, timeout=None, workdir=None): the command as `hermesctl
 * run` runs it (the danger gate, the scrubbed environment, the HOME mode,
 * limits), in a process of its own, one call at a time: the gate asks
 * about one command at a time, and with nobody to ask it refuses, which
 * comes back to the script as the tool's answer. No turn is marked: the
 * script's turn holds. */
#include "tools.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"

extern char **environ;

static pthread_mutex_t terminal_lock = PTHREAD_MUTEX_INITIALIZER;

/* Run argv with stdout into a buffer (stderr: ours); its exit status. */
static int terminal_spawn(char *const *argv, char **out, size_t *len, int *status)
{
	posix_spawn_file_actions_t fa;
	int pipefd[2], r;
	pid_t pid;
	size_t n = 0, cap = 65536;
	char *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		free(buf);
		return -errno;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	r = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	if (r != 0) {
		close(pipefd[0]);
		free(buf);
		return -r;
	}
	for (;;) {
		ssize_t got;
		if (n + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		got = read(pipefd[0], buf + n, cap - n - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	close(pipefd[0]);
	while (waitpid(pid, status, 0) < 0) {
		if (errno != EINTR) {
			*status = 0; /* reaped by the job's subreaper sweep: the JSON says */
			break;
		}
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

static cJSON *terminal(const struct tool_ctx *ctx, const cJSON *args)
{
	const char *cmd = tool_str(args, "command", NULL), *wd = tool_str(args, "workdir", NULL);
	double t = tool_num(args, "timeout", 0);
	char dir[PATH_MAX], tbuf[32];
	char *argv[20];
	int k = 0, status = 0, r;
	_cleanup_free_ char *out = NULL;
	size_t len = 0;
	cJSON *res, *o;

	if (!cmd || !cmd[0])
		return tool_error("terminal: command is required");
	if (tool_path(ctx, wd ? wd : ".", dir, sizeof(dir)) < 0)
		return tool_error("terminal: workdir too long");
	/* never past the script's own time (hermesctl run's default: 180 s) */
	if (!(t > 0))
		t = 0;
	if (ctx->timeout > 0 && (t > 0 ? t : 180) > ctx->timeout)
		t = ctx->timeout;
	argv[k++] = (char *)ctx->hermesctl;
	argv[k++] = "run";
	argv[k++] = "--json";
	argv[k++] = "--no-turn";
	if (ctx->can_ask)
		argv[k++] = "--ask";
	argv[k++] = "-C";
	argv[k++] = dir;
	if (t > 0) {
		snprintf(tbuf, sizeof(tbuf), "%g", t);
		argv[k++] = "--timeout";
		argv[k++] = tbuf;
	}
	if (ctx->home_mode) {
		argv[k++] = "--home-mode";
		argv[k++] = (char *)ctx->home_mode;
	}
	if (ctx->approval) {
		argv[k++] = "--approval";
		argv[k++] = (char *)ctx->approval;
	}
	argv[k++] = "--";
	argv[k++] = (char *)cmd;
	argv[k] = NULL;
	pthread_mutex_lock(&terminal_lock);
	r = terminal_spawn(argv, &out, &len, &status);
	pthread_mutex_unlock(&terminal_lock);
	if (r < 0)
		return tool_error("terminal: cannot run %s: %s", ctx->hermesctl, strerror(-r));
	res = cJSON_ParseWithLength(out, len);
	if (!cJSON_IsObject(res)) {
		cJSON_Delete(res);
		return tool_error("terminal: hermesctl run answered no JSON (exit status %d)",
				  WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	}
	/* the reference's shape too: one "output" */
	{
		const char *so = tool_str(res, "stdout", ""), *se = tool_str(res, "stderr", "");
		size_t a = strlen(so), b = strlen(se);
		char *both = malloc(a + b + 2);
		if (both) {
			memcpy(both, so, a);
			if (b && a && so[a - 1] != '\n')
				both[a++] = '\n';
			memcpy(both + a, se, b);
			both[a + b] = '\0';
			cJSON_AddStringToObject(res, "output", both);
			free(both);
		}
	}
	if ((o = cJSON_GetObjectItemCaseSensitive(res, "blocked")) && cJSON_IsTrue(o) &&
	    !cJSON_GetObjectItemCaseSensitive(res, "error"))
		cJSON_AddStringToObject(res, "error", tool_str(res, "reason", "blocked"));
	return res;
}

const struct tool_def tool_terminal = {
	.name = "terminal",
	.slow = 1,
	.run = terminal,
	.py_params = "command, timeout=None, workdir=None",
	.py_doc = "Run a shell command as `hermesctl run` does (gate, clean environment, "
		  "limits); {'output', 'exit_code', 'stdout', 'stderr', ...}.",
};
