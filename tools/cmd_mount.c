/* hermesctl mount: start a hermesfs daemon for a tree, recover a dead one,
 * and warn about processes that still see the disk below an in-place mount. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "hermesctl.h"
#include "jsonl.h"
#include "mounts.h"
#include "paths.h"

static void mount_usage(FILE *out)
{
	fprintf(out,
		"usage: hermesctl mount [-d] [-o OPTS] [--json] DIR [MOUNTPOINT]\n"
		"\n"
		"Put DIR behind hermesfs. With one path the mount is in place: DIR keeps its\n"
		"path and every change made through it can be checkpointed. With MOUNTPOINT,\n"
		"DIR is shown there instead. Returns once the mount is live.\n"
		"\n"
		"A mount whose daemon died (status 'dead') is cleaned up and mounted again.\n"
		"Processes whose working directory or open files are under DIR keep seeing\n"
		"the disk below an in-place mount: they are listed as a warning, and so are\n"
		"Unix sockets bound under DIR, which the mount cannot reach.\n"
		"\n"
		"Options:\n"
		"  -d, --debug     debug detail in the daemon log\n"
		"  -o OPTS         FUSE mount options passed to hermesfs (comma separated)\n"
		"  --json          print the mount record as JSON\n"
		"  -h, --help      this help\n");
}

/* hermesfs beside hermesctl (installed), in the build tree, or on PATH. */
static int find_daemon(char *out, size_t size)
{
	const char *env = getenv("HERMESFS_BIN");
	const char *self = hctl_self_dir();
	char cand[PATH_MAX];

	if (env && *env) {
		snprintf(out, size, "%s", env);
		return 0;
	}
	snprintf(cand, sizeof(cand), "%s/hermesfs", self);
	if (access(cand, X_OK) == 0)
		goto found;
	snprintf(cand, sizeof(cand), "%s/../fs/hermesfs", self);
	if (access(cand, X_OK) == 0)
		goto found;
	snprintf(out, size, "hermesfs"); /* execvp searches PATH */
	return 0;
found:
	snprintf(out, size, "%s", cand);
	return 0;
}

/* Does the /proc link name a place under dir that is on the disk below
 * (not on the mount, whose device is mnt_dev)? */
static int bypasses(const char *link, const char *dir, dev_t mnt_dev)
{
	char target[PATH_MAX];
	struct stat st;
	ssize_t n = readlink(link, target, sizeof(target) - 1);

	if (n <= 0)
		return 0;
	target[n] = '\0';
	if (strncmp(target, "/", 1) != 0)
		return 0; /* pipe:[..], socket:[..], anon_inode:... */
	if (n > 10 && strcmp(target + n - 10, " (deleted)") == 0)
		target[n - 10] = '\0';
	if (!paths_is_under(target, dir))
		return 0;
	/* the same path may already be the mount (a process that entered it) */
	return stat(link, &st) < 0 || st.st_dev != mnt_dev;
}

/* A file of the tree mapped by the process (a program or library it runs)
 * from the disk below: the maps line's device is not the mount's. */
static int maps_bypass(pid_t pid, const char *dir, dev_t mnt_dev)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	int hit = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	while (f && !hit && getline(&line, &cap, f) > 0) {
		unsigned maj, min;
		int off = 0;
		if (sscanf(line, "%*s %*s %*s %x:%x %*u %n", &maj, &min, &off) != 2 || off == 0 ||
		    line[off] != '/')
			continue;
		line[strcspn(line, "\n")] = '\0';
		hit = paths_is_under(line + off, dir) && makedev(maj, min) != mnt_dev;
	}
	free(line);
	return hit;
}

/* Processes (other than us) whose cwd, root, program, mapped files or open
 * files are under dir on the disk below: they do not see the mount. */
static void warn_bypassing(const char *dir, pid_t daemon)
{
	_cleanup_closedir_ DIR *proc = opendir("/proc");
	struct dirent *de;
	struct stat mst;
	int shown = 0;
	pid_t self = getpid(), parent = getppid();

	if (!proc || stat(dir, &mst) < 0)
		return;
	while ((de = readdir(proc))) {
		char path[PATH_MAX], comm[64] = "?";
		const char *what = NULL;
		pid_t pid = (pid_t)atoi(de->d_name);

		if (pid <= 0 || pid == self || pid == daemon)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/cwd", pid);
		if (bypasses(path, dir, mst.st_dev))
			what = "working directory";
		snprintf(path, sizeof(path), "/proc/%d/root", pid);
		if (!what && bypasses(path, dir, mst.st_dev))
			what = "root directory";
		snprintf(path, sizeof(path), "/proc/%d/exe", pid);
		if (!what && bypasses(path, dir, mst.st_dev))
			what = "program";
		if (!what) {
			_cleanup_closedir_ DIR *fds = NULL;
			struct dirent *fe;
			snprintf(path, sizeof(path), "/proc/%d/fd", pid);
			fds = opendir(path);
			while (!what && fds && (fe = readdir(fds))) {
				char fdp[PATH_MAX + 300];
				if (fe->d_name[0] == '.')
					continue;
				snprintf(fdp, sizeof(fdp), "%s/%s", path, fe->d_name);
				if (bypasses(fdp, dir, mst.st_dev))
					what = "open file";
			}
		}
		if (!what && maps_bypass(pid, dir, mst.st_dev))
			what = "mapped file";
		if (!what)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		_cleanup_fclose_ FILE *f = fopen(path, "re");
		if (f && fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		if (!shown++)
			hctl_warn("these processes still see the disk below %s, not the mount "
				  "(changes they make are not checkpointed):", dir);
		fprintf(stderr, "  pid %d (%s): %s%s\n", pid, comm, what,
			pid == parent ? " — your shell: run 'cd \"$PWD\"' to enter the mount" : "");
	}
}

/* Unix sockets bound under dir before the mount: a connect() through the
 * mount reaches the mount's own inode, which no socket listens on, and is
 * refused. Their servers must bind again (after the mount) to be reached. */
static void warn_sockets(const char *dir)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/net/unix", "re");
	char *line = NULL;
	size_t cap = 0;
	int shown = 0;

	while (f && getline(&line, &cap, f) > 0) {
		char *path = NULL;
		int off = 0;
		/* Num RefCount Protocol Flags Type St Inode Path */
		if (sscanf(line, "%*s %*s %*s %*s %*s %*s %*s %n", &off) < 0 || off == 0 ||
		    line[off] != '/')
			continue; /* unnamed or abstract */
		path = line + off;
		path[strcspn(path, "\n")] = '\0';
		if (!paths_is_under(path, dir))
			continue;
		if (!shown++)
			hctl_warn("these Unix sockets were bound under %s before the mount: "
				  "connections through it are refused until their servers "
				  "bind again:", dir);
		if (shown <= 20)
			fprintf(stderr, "  %s\n", path);
	}
	if (shown > 20)
		fprintf(stderr, "  ... and %d more\n", shown - 20);
	free(line);
}

/* Say whether checkpoints are on, and if the first scan is still running
 * (it holds writers back, never readers). */
static void report_checkpoints(const struct mount_info *m)
{
	cJSON *req = cJSON_CreateObject(), *resp = NULL;
	struct herr e = HERR_INIT;

	cJSON_AddStringToObject(req, "op", "status");
	if (ctl_call(m->sock, req, &resp, 2000, &e) == 0) {
		const cJSON *ck = cJSON_GetObjectItemCaseSensitive(resp, "checkpoints");
		const cJSON *on = cJSON_GetObjectItemCaseSensitive(ck, "enabled");
		const cJSON *why = cJSON_GetObjectItemCaseSensitive(ck, "reason");
		const cJSON *scan = cJSON_GetObjectItemCaseSensitive(ck, "scanning");
		if (!cJSON_IsTrue(on))
			hctl_warn("checkpoints are OFF for %s: %s", m->source,
				  cJSON_IsString(why) ? why->valuestring : "unknown reason");
		else if (cJSON_IsTrue(scan))
			printf("checkpoints on; the first scan of the tree is still running "
			       "(reads go on, writes wait for it; 'hermesctl status' shows progress)\n");
		else
			printf("checkpoints on: each turn's first change is checkpointed first "
			       "('hermesctl rollback' lists them)\n");
	}
	cJSON_Delete(req);
	cJSON_Delete(resp);
}

int cmd_mount(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "debug", no_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char src[PATH_MAX], mp[PATH_MAX], daemon[PATH_MAX], id[TREE_ID_LEN + 1];
	const char *fuse_opts = NULL;
	int debug = 0, json = 0, c;
	struct mount_info m;
	struct herr e = HERR_INIT;

	while ((c = getopt_long(argc, argv, "do:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd': debug = 1; break;
		case 'o': fuse_opts = optarg; break;
		case 'j': json = 1; break;
		case 'h': mount_usage(stdout); return HCTL_OK;
		default: mount_usage(stderr); return HCTL_USAGE;
		}
	}
	if (argc - optind < 1 || argc - optind > 2) {
		if (argc - optind < 1)
			hctl_error("mount needs a DIR");
		else
			hctl_error("mount takes DIR and at most a MOUNTPOINT, not %d paths",
				   argc - optind);
		mount_usage(stderr);
		return HCTL_USAGE;
	}
	/* A dead in-place mount makes realpath fail with ENOTCONN: recover first. */
	char lex[PATH_MAX];
	if (hctl_abspath(argv[optind], lex, sizeof(lex)) == 0 && mounts_find(lex, &m) == 0 &&
	    !m.alive && (strcmp(m.source, lex) == 0 || strcmp(m.mountpoint, lex) == 0)) {
		hctl_warn("%s: the daemon of this mount died (pid %d); cleaning up and mounting again",
			  lex, m.pid);
		if (hctl_cleanup_dead(&m) < 0) {
			hctl_error("cannot clean up the dead mount at %s: %s", m.mountpoint,
				   strerror(errno));
			return HCTL_FAIL;
		}
	}
	/* ... and one no record of ours explains (/etc/fstab, another
	 * HERMES_HOME) */
	char fstype[64];
	if (mounts_kernel_has(lex, fstype, sizeof(fstype)) > 0 &&
	    strcmp(fstype, "fuse.hermesfs") == 0 && mounts_fuse_dead(lex)) {
		struct mount_info dead = { .mounted = 1 };
		snprintf(dead.mountpoint, sizeof(dead.mountpoint), "%s", lex);
		paths_tree_id(lex, dead.id);
		hctl_warn("%s: the daemon of this mount died; cleaning up and mounting again", lex);
		if (hctl_cleanup_dead(&dead) < 0) {
			hctl_error("cannot clean up the dead mount at %s: %s", lex, strerror(errno));
			return HCTL_FAIL;
		}
	}
	if (paths_resolve(argv[optind], src, sizeof(src), &e) < 0) {
		hctl_error("cannot mount %s", e.msg);
		return HCTL_NOTFOUND;
	}
	if (argc - optind == 2) {
		if (paths_resolve(argv[optind + 1], mp, sizeof(mp), &e) < 0) {
			hctl_error("cannot mount on %s", e.msg);
			return HCTL_NOTFOUND;
		}
	} else {
		snprintf(mp, sizeof(mp), "%s", src);
	}
	find_daemon(daemon, sizeof(daemon));

	const char *args[16];
	int na = 0;
	args[na++] = daemon;
	args[na++] = src;
	if (strcmp(mp, src) != 0)
		args[na++] = mp;
	if (debug)
		args[na++] = "-d";
	if (fuse_opts) {
		args[na++] = "-o";
		args[na++] = fuse_opts;
	}
	args[na] = NULL;

	pid_t pid = fork();
	if (pid < 0) {
		hctl_error("cannot start hermesfs: %s", strerror(errno));
		return HCTL_FAIL;
	}
	if (pid == 0) {
		execvp(args[0], (char *const *)args);
		fprintf(stderr, "hermesctl: cannot run %s: %s\n", args[0], strerror(errno));
		_exit(127);
	}
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st))
		return HCTL_FAIL;
	switch (WEXITSTATUS(st)) { /* hermesfs uses our numbers; it said why */
	case 0: break;
	case HCTL_USAGE: return HCTL_USAGE;
	case HCTL_NOTFOUND: return HCTL_NOTFOUND;
	case HCTL_BLOCKED: return HCTL_BLOCKED;
	case 127: return HCTL_NOTFOUND; /* no hermesfs to run */
	default: return HCTL_FAIL;
	}

	paths_tree_id(src, id);
	if (mounts_find(mp, &m) < 0 || strcmp(m.id, id) != 0) {
		hctl_error("hermesfs reported success but %s has no registered mount", mp);
		return HCTL_FAIL;
	}
	if (json) {
		hctl_print_json(hctl_mount_json(&m));
	} else if (strcmp(m.source, m.mountpoint) == 0) {
		printf("mounted %s in place (hermesfs pid %d, log %s)\n", m.mountpoint, m.pid,
		       m.log);
	} else {
		printf("mounted %s at %s (hermesfs pid %d, log %s)\n", m.source, m.mountpoint,
		       m.pid, m.log);
	}
	if (strcmp(m.source, m.mountpoint) == 0) {
		warn_bypassing(m.source, m.pid);
		warn_sockets(m.source);
	}
	if (!json)
		report_checkpoints(&m);
	return HCTL_OK;
}
