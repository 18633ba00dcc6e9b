/* hermesctl: the command-line front of hermesfs. Dispatches to one file per
 * subcommand; shared helpers for messages live here. */
#include "hermesctl.h"

#include <fcntl.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct subcmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct subcmd subcmds[] = {
	{ "mount", cmd_mount, "put a project directory behind hermesfs (in place)" },
	{ "umount", cmd_umount, "unmount a tree (also cleans up a dead mount)" },
	{ "status", cmd_status, "mounted trees, daemon pids and health" },
	{ "turn", cmd_turn, "start a new turn: the next change is checkpointed first" },
	{ "checkpoint", cmd_checkpoint, "take a checkpoint of a tree now" },
	{ "checkpoints", cmd_checkpoints, "disk use of all stores: status, prune, clear" },
	{ "rollback", cmd_rollback, "list, diff and restore checkpoints" },
	{ "run", cmd_run, "run a command for an agent with limits and isolation" },
	{ "code", cmd_code, "run an agent's Python script that calls the project's tools, as one turn" },
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: hermesctl [--version] [--help] COMMAND [ARGS]\n"
		"\n"
		"Commands:\n");
	for (size_t i = 0; i < sizeof(subcmds) / sizeof(subcmds[0]); i++)
		fprintf(out, "  %-12s %s\n", subcmds[i].name, subcmds[i].summary);
	fprintf(out,
		"\n"
		"'hermesctl COMMAND --help' explains each command.\n"
		"\n"
		"Environment:\n"
		"  HERMES_HOME   state directory (default ~/.hermes): config.yaml,\n"
		"                checkpoints/, run/ (live mounts), logs/\n"
		"\n"
		"Exit codes:\n"
		"  0    success\n"
		"  1    the operation failed (the message says why)\n"
		"  2    bad command line\n"
		"  3    no such tree, mount or checkpoint (mount: not a directory)\n"
		"  4    refused by policy: a dangerous command (run); a protected path\n"
		"       (mount: /, a home directory, a tree holding $HERMES_HOME, a tree\n"
		"       already mounted or holding a hermesfs mount)\n"
		"  5    status: a mount whose daemon died (run 'hermesctl mount' to recover)\n"
		"  124  run: the command timed out\n"
		"  run otherwise exits with the command's own exit code\n");
}

static char hctl_last[1024];

void hctl_error(const char *fmt, ...)
{
	va_list ap;

	/* formatted once: kept for --json answers (hctl_last_error) */
	va_start(ap, fmt);
	vsnprintf(hctl_last, sizeof(hctl_last), fmt, ap);
	va_end(ap);
	fprintf(stderr, "hermesctl: %s\n", hctl_last);
}

const char *hctl_last_error(void)
{
	return hctl_last;
}

void hctl_warn(const char *fmt, ...)
{
	va_list ap;
	fputs("hermesctl: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int hctl_is_help(const char *arg)
{
	return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

unsigned hctl_umask(void)
{
	mode_t m = umask(022);

	umask(m);
	return (unsigned)m & 0777;
}

const char *hctl_self_dir(void)
{
	static char dir[PATH_MAX];
	char exe[PATH_MAX];
	ssize_t n;

	if (dir[0])
		return dir;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return ".";
	exe[n] = '\0';
	snprintf(dir, sizeof(dir), "%s", dirname(exe));
	return dir;
}

int main(int argc, char **argv)
{
	/* a closed 0, 1 or 2 would be taken by the next open (a job's pipe,
	 * libuv's, a store file) and written to by mistake; libuv even
	 * asserts on it */
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF &&
		    open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY) < 0)
			return HCTL_FAIL;
	if (argc < 2) {
		usage(stderr);
		return HCTL_USAGE;
	}
	if (strcmp(argv[1], "help") == 0 && argc > 2) { /* help COMMAND */
		char *sub[] = { argv[2], (char *)"--help", NULL };
		for (size_t i = 0; i < sizeof(subcmds) / sizeof(subcmds[0]); i++)
			if (strcmp(argv[2], subcmds[i].name) == 0)
				return subcmds[i].fn(2, sub);
		hctl_error("unknown command '%s' (see 'hermesctl --help')", argv[2]);
		return HCTL_USAGE;
	}
	if (hctl_is_help(argv[1]) || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return HCTL_OK;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("hermesctl %s\n", HERMES_VERSION);
		return HCTL_OK;
	}
	for (size_t i = 0; i < sizeof(subcmds) / sizeof(subcmds[0]); i++)
		if (strcmp(argv[1], subcmds[i].name) == 0)
			return subcmds[i].fn(argc - 1, argv + 1);
	hctl_error("unknown command '%s' (see 'hermesctl --help')", argv[1]);
	return HCTL_USAGE;
}
