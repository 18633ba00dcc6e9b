/* hermesctl umount: unmount a tree, wait for its daemon to finish, and clean
 * up after a daemon that died. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hermesctl.h"
#include "mounts.h"

static void umount_usage(FILE *out)
{
	fprintf(out,
		"usage: hermesctl umount [-l] [--timeout S] DIR\n"
		"\n"
		"Unmount the hermesfs mount of DIR (the tree or its mountpoint) and wait for\n"
		"its daemon to finish writing. A mount whose daemon died is detached and its\n"
		"record removed.\n"
		"\n"
		"Options:\n"
		"  -l, --lazy      detach even if files are open under DIR (they keep working;\n"
		"                  the daemon exits when the last one is closed)\n"
		"  --timeout S     how long to wait for the daemon to exit (default 30)\n"
		"  -h, --help      this help\n");
}

static int run_fusermount(const char *mp, int lazy)
{
	pid_t pid = fork();
	int st = 0;

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (lazy)
			execlp("fusermount3", "fusermount3", "-u", "-z", mp, (char *)NULL);
		else
			execlp("fusermount3", "fusermount3", "-u", mp, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EBUSY;
}

static int wait_gone(pid_t pid, int timeout_s)
{
	struct timespec d = { 0, 20 * 1000 * 1000 };
	for (int i = 0; i < timeout_s * 50; i++) {
		if (!mounts_pid_alive(pid))
			return 0;
		nanosleep(&d, NULL);
	}
	return -ETIMEDOUT;
}

int cmd_umount(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "lazy", no_argument, NULL, 'l' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char path[PATH_MAX];
	struct mount_info m;
	int lazy = 0, timeout = 30, c;

	while ((c = getopt_long(argc, argv, "lh", opts, NULL)) != -1) {
		switch (c) {
		case 'l': lazy = 1; break;
		case 't': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (!*optarg || *end || v <= 0 || v > 86400) {
				hctl_error("--timeout wants whole seconds from 1 to 86400, not '%s'",
					   optarg);
				return HCTL_USAGE;
			}
			timeout = (int)v;
			break;
		}
		case 'h': umount_usage(stdout); return HCTL_OK;
		default: umount_usage(stderr); return HCTL_USAGE;
		}
	}
	if (argc - optind != 1) {
		if (argc == optind)
			hctl_error("umount needs a DIR");
		else
			hctl_error("umount takes one DIR, not %d paths", argc - optind);
		umount_usage(stderr);
		return HCTL_USAGE;
	}
	int found = hctl_find_mount(argv[optind], 1, path, sizeof(path), &m);
	if (found < 0 && found != -ENOENT) {
		hctl_error("%s: bad path", argv[optind]);
		return HCTL_USAGE;
	}
	if (found < 0) {
		/* Not ours in this HERMES_HOME: maybe a hermesfs mount all the same. */
		char type[64];
		if (mounts_kernel_has(path, type, sizeof(type)) > 0 &&
		    strcmp(type, "fuse.hermesfs") == 0) {
			if (umount2(path, lazy ? MNT_DETACH : 0) < 0 &&
			    run_fusermount(path, lazy) < 0) {
				hctl_error("cannot unmount %s: %s", path, strerror(EBUSY));
				return HCTL_FAIL;
			}
			printf("unmounted %s\n", path);
			return HCTL_OK;
		}
		struct mount_info in;
		if (mounts_find(path, &in) == 0) {
			hctl_error("%s is not a mountpoint; it belongs to the hermesfs mount %s "
				   "(tree %s): 'hermesctl umount %s' unmounts that", path,
				   in.mountpoint, in.source, in.mountpoint);
			return HCTL_NOTFOUND;
		}
		hctl_error("%s is not mounted by hermesfs", path);
		return HCTL_NOTFOUND;
	}
	if (!m.alive) {
		if (hctl_cleanup_dead(&m) < 0) {
			hctl_error("cannot detach the dead mount at %s: %s", m.mountpoint,
				   strerror(errno));
			return HCTL_FAIL;
		}
		printf("cleaned up %s (its daemon, pid %d, had died)\n", m.mountpoint, m.pid);
		return HCTL_OK;
	}
	if (m.mounted && umount2(m.mountpoint, lazy ? MNT_DETACH : 0) < 0) {
		int err = errno;
		if (err == EPERM && run_fusermount(m.mountpoint, lazy) == 0)
			goto unmounted;
		if (err == EBUSY || err == EPERM)
			hctl_error("cannot unmount %s: it is busy (a process has its working "
				   "directory or files there); close them or use --lazy",
				   m.mountpoint);
		else
			hctl_error("cannot unmount %s: %s", m.mountpoint, strerror(err));
		return HCTL_FAIL;
	}
unmounted:
	if (lazy) {
		printf("detached %s (the daemon exits once its last file is closed)\n",
		       m.mountpoint);
		return HCTL_OK;
	}
	if (wait_gone(m.pid, timeout) < 0) {
		hctl_error("%s is unmounted but its daemon (pid %d) is still running after %d s",
			   m.mountpoint, m.pid, timeout);
		return HCTL_FAIL;
	}
	mounts_remove(m.id); /* the daemon removes it too; harmless twice */
	printf("unmounted %s\n", m.mountpoint);
	return HCTL_OK;
}
