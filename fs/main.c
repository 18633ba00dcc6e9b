/* hermesfs entry point: the command line (also as an fstab helper), the
 * refusals, opening the tree before it is covered, and daemonizing so the
 * parent exits only once the mount is live (or prints why it is not). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cleanup.h"
#include "hfs.h"
#include "log.h"
#include "mounts.h"
#include "session.h"

#define FUSE_SUPER_MAGIC 0x65735546
#define MAIN_READY_TIMEOUT_MS 60000

struct main_opts {
	const char *paths[2];
	int npaths;
	int foreground;
	int debug;
	int help;
	int version;
	int writeback;
	int nosplice;
	int cached_writes;
	int dir_handles;
	int readonly;
	int nopassthrough;
	int nopassthrough_writes;
	int live_writes;
	int clone_fd;
	int max_threads;
	int fd_budget; /* -1: half the fd limit */
	int handle_fds; /* -1: HFS_HFD_CAP, within a quarter of the fds left */
	int has_fsname;
	int has_subtype;
};

enum { KEY_HELP, KEY_VERSION, KEY_FOREGROUND, KEY_DEBUG, KEY_DISCARD, KEY_MAX_THREADS,
       KEY_FD_BUDGET, KEY_HANDLE_FDS };

#define MAIN_OPT(t, f) { t, offsetof(struct main_opts, f), 1 }

static const struct fuse_opt main_opt_spec[] = {
	FUSE_OPT_KEY("-h", KEY_HELP),
	FUSE_OPT_KEY("--help", KEY_HELP),
	FUSE_OPT_KEY("-V", KEY_VERSION),
	FUSE_OPT_KEY("--version", KEY_VERSION),
	FUSE_OPT_KEY("-f", KEY_FOREGROUND),
	FUSE_OPT_KEY("-d", KEY_DEBUG),
	MAIN_OPT("writeback", writeback),
	MAIN_OPT("nosplice", nosplice),
	MAIN_OPT("cached_writes", cached_writes),
	MAIN_OPT("dir_handles", dir_handles),
	MAIN_OPT("nopassthrough", nopassthrough),
	MAIN_OPT("nopassthrough_writes", nopassthrough_writes),
	MAIN_OPT("live_writes", live_writes),
	MAIN_OPT("clone_fd", clone_fd),
	FUSE_OPT_KEY("max_threads=", KEY_MAX_THREADS),
	FUSE_OPT_KEY("fd_budget=", KEY_FD_BUDGET),
	FUSE_OPT_KEY("handle_fds=", KEY_HANDLE_FDS),
	/* fstab and mount(8) words that are not FUSE options */
	FUSE_OPT_KEY("auto", KEY_DISCARD),
	FUSE_OPT_KEY("noauto", KEY_DISCARD),
	FUSE_OPT_KEY("user", KEY_DISCARD),
	FUSE_OPT_KEY("nouser", KEY_DISCARD),
	FUSE_OPT_KEY("users", KEY_DISCARD),
	FUSE_OPT_KEY("owner", KEY_DISCARD),
	FUSE_OPT_KEY("group", KEY_DISCARD),
	FUSE_OPT_KEY("_netdev", KEY_DISCARD),
	FUSE_OPT_KEY("nofail", KEY_DISCARD),
	FUSE_OPT_KEY("defaults", KEY_DISCARD),
	FUSE_OPT_KEY("comment=", KEY_DISCARD),
	FUSE_OPT_END
};

static void main_usage(FILE *out)
{
	fprintf(out,
		"usage: hermesfs SOURCE [MOUNTPOINT] [-f] [-d] [-o OPT[,OPT...]]\n"
		"\n"
		"Mount the directory SOURCE through hermesfs, in place (one path) or on\n"
		"MOUNTPOINT. The daemon returns once the mount is live.\n"
		"\n"
		"  -f                 stay in the foreground\n"
		"  -d                 debug detail in the daemon log\n"
		"  -o writeback       kernel writeback cache (delays writes; off by default)\n"
		"  -o nosplice        copy instead of splicing data\n"
		"  -o cached_writes   write-only opens go through the page cache too\n"
		"  -o dir_handles     open the directory below on every opendir (by\n"
		"                     default the kernel opens directories without\n"
		"                     asking us and keeps what it read cached)\n"
		"  -o nopassthrough   serve reads and writes ourselves (by default, as\n"
		"                     root, the kernel reads and writes the file below\n"
		"                     directly; with checkpoints on, only files they\n"
		"                     exclude are written that way)\n"
		"  -o nopassthrough_writes  handles that write always go through us\n"
		"  -o live_writes     with checkpoints on, tracked files are written by\n"
		"                     the kernel too, watched as live files (faster\n"
		"                     small writes; a file held open for writing during\n"
		"                     a rollback may lose what it wrote in its first\n"
		"                     moment)\n"
		"  -o max_threads=N   worker threads (default 16)\n"
		"  -o clone_fd        one /dev/fuse fd per worker thread\n"
		"  -o fd_budget=N     inodes that keep an fd before file handles are used\n"
		"                     (default: half the open-file limit; root only)\n"
		"  -o handle_fds=N    past the budget, fds kept open for the files used\n"
		"                     last (default 1024; 0: reopen from the handle each time)\n"
		"  -o debug           libfuse's own request trace (very verbose)\n"
		"  -o OPT             any other FUSE mount option (allow_other, ro, ...)\n"
		"  -h, --help         this text\n"
		"  -V, --version      the version\n"
		"\n"
		"As root it mounts with allow_other,default_permissions. The log is\n"
		"$HERMES_HOME/logs/<id>.log; the record of a live mount and its control\n"
		"socket are in $HERMES_HOME/run/. In /etc/fstab use type fuse.hermesfs.\n"
		"\n"
		"Exit codes: 0 mounted (or help shown), 1 the mount failed (the message\n"
		"says why), 2 bad command line, 3 no such directory, 4 refused: / or a\n"
		"home directory, a tree holding $HERMES_HOME, a tree already mounted or\n"
		"holding a hermesfs mount, a mountpoint inside the tree.\n");
}

/* Exit codes (the same numbers as hermesctl's) */
enum {
	MAIN_EXIT_FAIL = 1,
	MAIN_EXIT_USAGE = 2,
	MAIN_EXIT_NOTFOUND = 3,
	MAIN_EXIT_REFUSED = 4,
};

/* A refusal of SOURCE or MOUNTPOINT, by the error's code. */
static int main_check_exit(const struct herr *e)
{
	switch (-e->code) {
	case ENOENT:
	case ENOTDIR:
		return MAIN_EXIT_NOTFOUND;
	case EPERM:
	case EBUSY:
	case EINVAL:
		return MAIN_EXIT_REFUSED;
	default:
		return MAIN_EXIT_FAIL;
	}
}

/* A hermesfs mount at or below dir (a mount over dir would hide it). */
static int main_holds_mount(const char *dir, char *found, size_t size)
{
	struct kernel_mount *v = NULL;
	size_t n = 0;
	int hit = 0;

	if (mounts_kernel_hermesfs(&v, &n) < 0)
		return 0;
	for (size_t i = 0; i < n && !hit; i++) {
		if (paths_is_under(v[i].mountpoint, dir)) {
			snprintf(found, size, "%s", v[i].mountpoint);
			hit = 1;
		}
	}
	free(v);
	return hit;
}

/* NAME=N with N a whole number in [min, max]: 0, or -1 after saying why. */
static int main_int_opt(const char *arg, long min, long max, int *out)
{
	const char *v = strchr(arg, '=') + 1;
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (!*v || *end || errno || n < min || n > max) {
		fprintf(stderr, "hermesfs: bad value in -o %s: want a whole number from %ld to %ld\n",
			arg, min, max);
		return -1;
	}
	*out = (int)n;
	return 0;
}

static int main_opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct main_opts *o = data;

	(void)outargs;
	switch (key) {
	case KEY_HELP:
		o->help = 1;
		return 0;
	case KEY_VERSION:
		o->version = 1;
		return 0;
	case KEY_FOREGROUND:
		o->foreground = 1;
		return 0;
	case KEY_DEBUG:
		o->debug = 1;
		return 0;
	case KEY_DISCARD:
		return 0;
	case KEY_MAX_THREADS:
		return main_int_opt(arg, 1, 1024, &o->max_threads);
	case KEY_FD_BUDGET:
		return main_int_opt(arg, 0, INT_MAX, &o->fd_budget);
	case KEY_HANDLE_FDS:
		return main_int_opt(arg, 0, INT_MAX, &o->handle_fds);
	case FUSE_OPT_KEY_NONOPT:
		if (o->npaths == 2) {
			fprintf(stderr, "hermesfs: too many paths: %s\n", arg);
			return -1;
		}
		o->paths[o->npaths++] = arg;
		return 0;
	case FUSE_OPT_KEY_OPT:
		if (arg[0] == '-') { /* a command-line flag we do not have */
			fprintf(stderr, "hermesfs: unknown option %s (see hermesfs --help)\n", arg);
			return -1;
		}
		if (strcmp(arg, "ro") == 0)
			o->readonly = 1;
		else if (strcmp(arg, "rw") == 0)
			o->readonly = 0;
		if (strncmp(arg, "x-", 2) == 0)
			return 0; /* x-systemd.* and friends are for mount(8) */
		if (strncmp(arg, "fsname=", 7) == 0)
			o->has_fsname = 1;
		if (strncmp(arg, "subtype=", 8) == 0)
			o->has_subtype = 1;
		return 1;
	default:
		return 1;
	}
}

/* SOURCE must be an existing directory we may protect, not yet mounted. */
static int main_check_source(struct hfs *fs, const char *arg, struct herr *e)
{
	char below[PATH_MAX];
	struct mount_info m;
	struct statfs sfs;
	struct stat st;
	const char *why;

	if (mounts_fuse_dead(arg))
		return err_set(e, -ENOTCONN,
			       "cannot mount %s: it is a FUSE mount whose daemon died ('hermesctl umount %s' removes it)",
			       arg, arg);
	if (stat(arg, &st) < 0)
		return err_sys(e, -errno, "cannot mount %s", arg);
	if (!S_ISDIR(st.st_mode))
		return err_set(e, -ENOTDIR, "cannot mount %s: not a directory", arg);
	if (paths_resolve(arg, fs->source, sizeof(fs->source), e) < 0)
		return err_prefix(e, "cannot mount");
	if ((why = paths_refuse_tree(fs->source)))
		return err_set(e, -EPERM, "%s", why);
	paths_tree_id(fs->source, fs->id);
	if (mounts_kernel_has(fs->source, NULL, 0) > 0)
		return err_set(e, -EBUSY, "%s is already mounted by hermesfs", fs->source);
	if (mounts_find(fs->source, &m) == 0 && strcmp(m.id, fs->id) == 0 && m.alive) {
		if (m.mounted)
			return err_set(e, -EBUSY, "%s is already mounted by hermesfs on %s",
				       fs->source, m.mountpoint);
		return err_set(e, -EBUSY,
			       "%s was just unmounted and its daemon (pid %d) is still finishing "
			       "(its last checkpoint): try again in a moment",
			       fs->source, (int)m.pid);
	}
	if (main_holds_mount(fs->source, below, sizeof(below)))
		return err_set(e, -EBUSY,
			       "%s holds the hermesfs mount %s: unmount that first (this mount would hide it)",
			       fs->source, below);
	if (statfs(fs->source, &sfs) == 0 && sfs.f_type == FUSE_SUPER_MAGIC)
		return err_set(e, -EBUSY, "%s is on a FUSE filesystem: mount the directory below it instead",
			       fs->source);
	return 0;
}

static int main_check_mountpoint(struct hfs *fs, const char *arg, struct herr *e)
{
	char below[PATH_MAX];
	struct stat st;

	if (!arg) {
		snprintf(fs->mountpoint, sizeof(fs->mountpoint), "%s", fs->source);
		return 0;
	}
	if (stat(arg, &st) < 0)
		return err_sys(e, -errno, "cannot mount on %s", arg);
	if (!S_ISDIR(st.st_mode))
		return err_set(e, -ENOTDIR, "cannot mount on %s: not a directory", arg);
	if (paths_resolve(arg, fs->mountpoint, sizeof(fs->mountpoint), e) < 0)
		return err_prefix(e, "cannot mount on");
	if (strcmp(fs->mountpoint, fs->source) == 0)
		return 0;
	/* the tree's refusals, said of a mountpoint: the mount would cover it */
	switch (paths_refusal_of(fs->mountpoint)) {
	case PATHS_REFUSE_ROOT:
		return err_set(e, -EPERM,
			       "refusing to mount on /: the mount would cover the whole filesystem");
	case PATHS_REFUSE_HOME:
		return err_set(e, -EPERM, "refusing to mount on %s: it is a home directory",
			       fs->mountpoint);
	case PATHS_REFUSE_HERMES_HOME:
		return err_set(e, -EPERM,
			       "refusing to mount on %s: it holds $HERMES_HOME, which the mount would cover (the daemon would write its log and store through its own mount)",
			       fs->mountpoint);
	case PATHS_REFUSE_NONE:
		break;
	}
	if (paths_is_under(fs->mountpoint, fs->source))
		return err_set(e, -EINVAL,
			       "cannot mount %s on %s: the mountpoint is inside the tree (the daemon would walk into its own mount)",
			       fs->source, fs->mountpoint);
	if (mounts_kernel_has(fs->mountpoint, NULL, 0) > 0)
		return err_set(e, -EBUSY, "%s is already a FUSE mountpoint", fs->mountpoint);
	if (main_holds_mount(fs->mountpoint, below, sizeof(below)))
		return err_set(e, -EBUSY,
			       "%s holds the hermesfs mount %s: unmount that first (this mount would hide it)",
			       fs->mountpoint, below);
	return 0;
}

/* One O_PATH fd per inode the kernel holds: as root go up to the kernel's
 * nr_open (the hard limit included), else up to the hard limit. */
static void main_raise_nofile(void)
{
	struct rlimit rl;
	unsigned long nr_open = 0;
	FILE *f = fopen("/proc/sys/fs/nr_open", "re");

	if (f) {
		if (fscanf(f, "%lu", &nr_open) != 1)
			nr_open = 0;
		fclose(f);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (nr_open > rl.rlim_max) {
		struct rlimit big = { .rlim_cur = nr_open, .rlim_max = nr_open };
		if (setrlimit(RLIMIT_NOFILE, &big) == 0)
			return;
	}
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* How many fds of handle-only inodes stay open for reuse (inode.c): the
 * default, but no more than a quarter of what the budget leaves for open
 * files. */
static void main_setup_handle_fds(struct hfs *fs, int asked)
{
	struct rlimit rl;
	long left;

	if (asked >= 0) {
		fs->hfd_cap = asked;
		return;
	}
	left = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? (long)rl.rlim_cur - fs->fd_budget : 1024;
	fs->hfd_cap = left > 0 ? left / 4 : 0;
	if (fs->hfd_cap > HFS_HFD_CAP)
		fs->hfd_cap = HFS_HFD_CAP;
}

/* Past half the fd limit, new files keep a file handle instead of an fd
 * (reopened by open_by_handle_at, which needs CAP_DAC_READ_SEARCH): trees
 * with more files than fds then still work. */
static void main_setup_handles(struct hfs *fs)
{
	struct file_handle *h = malloc(sizeof(*h) + MAX_HANDLE_SZ);
	struct rlimit rl;
	int mnt, fd;

	fs->mount_fd = -1;
	fs->fd_budget = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? (long)(rl.rlim_cur / 2) : 512;
	if (!h || geteuid() != 0)
		goto out;
	h->handle_bytes = MAX_HANDLE_SZ;
	fd = open(fs->source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		goto out;
	if (name_to_handle_at(fs->root.fd, "", h, &mnt, AT_EMPTY_PATH) < 0) {
		close(fd);
		goto out;
	}
	int probe = open_by_handle_at(fd, h, O_PATH | O_CLOEXEC);
	if (probe < 0) {
		close(fd);
		goto out;
	}
	close(probe);
	fs->mount_fd = fd;
	fs->use_handles = 1;
out:
	free(h);
}

static int main_log_path(struct hfs *fs)
{
	char dir[PATH_MAX];
	int r = paths_state_dir("logs", 1, dir, sizeof(dir));

	if (r < 0)
		return r;
	r = snprintf(fs->log_path, sizeof(fs->log_path), "%s/%s.log", dir, fs->id);
	return r < 0 || (size_t)r >= sizeof(fs->log_path) ? -ENAMETOOLONG : 0;
}

/* "fsname=" value with the separators fuse_opt would split on escaped */
static void main_add_fsname(struct fuse_args *args, const char *source)
{
	char buf[PATH_MAX * 2 + 32];
	size_t n = (size_t)snprintf(buf, sizeof(buf), "-ofsname=");

	for (const char *p = source; *p && n + 3 < sizeof(buf); p++) {
		if (*p == ',' || *p == '\\')
			buf[n++] = '\\';
		buf[n++] = *p;
	}
	buf[n] = '\0';
	fuse_opt_add_arg(args, buf);
}

/* Parent side of the startup pipe: exit 0 on "ok", else print the child's error. */
static int main_wait_child(int fd, const char *log_path)
{
	char buf[2048];
	size_t len = 0;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	for (;;) {
		int pr = poll(&p, 1, MAIN_READY_TIMEOUT_MS);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0) {
			fprintf(stderr, "hermesfs: the daemon did not report within %d s (see %s)\n",
				MAIN_READY_TIMEOUT_MS / 1000, log_path);
			return 1;
		}
		ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || (len += (size_t)n) >= sizeof(buf) - 1)
			break;
	}
	buf[len] = '\0';
	if (strncmp(buf, "ok\n", 3) == 0)
		return 0;
	if (len == 0) {
		fprintf(stderr, "hermesfs: the daemon exited during startup (see %s)\n", log_path);
		return 1;
	}
	fprintf(stderr, "hermesfs: %s%s", buf, buf[len - 1] == '\n' ? "" : "\n");
	return 1;
}

/* Called once the mount is live and announced: leave the terminal. */
static void main_detach(void *arg)
{
	struct hfs *fs = arg;
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	int logfd = open(fs->log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);

	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
	}
	/* libfuse and sanitizers write to stderr: keep that in the log */
	if (logfd >= 0 || null >= 0)
		dup2(logfd >= 0 ? logfd : null, STDERR_FILENO);
	if (null >= 0)
		close(null);
	if (logfd >= 0)
		close(logfd);
	if (chdir("/") < 0)
		log_warn("cannot chdir to /: %s", strerror(errno));
}

static void main_fail(struct hfs *fs, const char *msg)
{
	if (fs->ready_fd >= 0) {
		dprintf(fs->ready_fd, "%s\n", msg);
		close(fs->ready_fd);
		fs->ready_fd = -1;
	} else {
		fprintf(stderr, "hermesfs: %s\n", msg);
	}
	log_err("%s", msg);
}

static void main_free_args(struct fuse_args *a)
{
	fuse_opt_free_args(a);
}

/* Would libfuse take these options? Asked here, before the daemon forks,
 * so an unknown -o option is a usage error (exit 2) with libfuse's own
 * line on stderr, not a failed mount reported from the child. */
static int main_fuse_opts_ok(const struct fuse_args *fargs)
{
	static const struct fuse_lowlevel_ops none;
	struct fuse_args copy = FUSE_ARGS_INIT(0, NULL);
	struct fuse_session *se;

	for (int i = 0; i < fargs->argc; i++)
		if (fuse_opt_add_arg(&copy, fargs->argv[i]) < 0) {
			fuse_opt_free_args(&copy);
			return 1; /* out of memory: let the real attempt say so */
		}
	se = fuse_session_new(&copy, &none, sizeof(none), NULL);
	fuse_opt_free_args(&copy);
	if (!se)
		return 0;
	fuse_session_destroy(se);
	return 1;
}

int main(int argc, char **argv)
{
	_cleanup_(main_free_args) struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	_cleanup_(main_free_args) struct fuse_args fargs = FUSE_ARGS_INIT(0, NULL);
	struct main_opts o = { .fd_budget = -1, .handle_fds = -1 };
	static struct hfs fs;
	struct herr e = HERR_INIT;
	int root_fd, r;

	if (argc == 5 && strcmp(argv[1], "--watchdog") == 0) /* our own helper */
		return session_watchdog_main(argv[2], argv[3], argv[4]);
	if (fuse_opt_parse(&args, &o, main_opt_spec, main_opt_proc) < 0)
		return MAIN_EXIT_USAGE;
	if (o.help) {
		main_usage(stdout);
		return 0;
	}
	if (o.version) {
		printf("hermesfs %s (libfuse %d)\n", HERMES_VERSION, fuse_version());
		return 0;
	}
	if (o.npaths == 0) {
		main_usage(stderr);
		return MAIN_EXIT_USAGE;
	}
	/* our defaults first, so the caller's -o options override them; and
	 * whether libfuse takes them, before anything is made or checked */
	fuse_opt_add_arg(&fargs, argv[0]);
	fuse_opt_add_arg(&fargs, geteuid() == 0 ? "-oallow_other,default_permissions,dev,suid"
						: "-odefault_permissions");
	for (int i = 1; i < args.argc; i++)
		fuse_opt_add_arg(&fargs, args.argv[i]);
	if (!main_fuse_opts_ok(&fargs))
		return MAIN_EXIT_USAGE;
	fs.ready_fd = -1;
	fs.writeback = o.writeback;
	fs.nosplice = o.nosplice;
	fs.cached_writes = o.cached_writes;
	fs.dir_handles = o.dir_handles;
	fs.readonly = o.readonly;
	fs.pt_wanted = !o.nopassthrough && !o.writeback && geteuid() == 0;
	fs.pt_writes = !o.nopassthrough_writes;
	fs.pt_live_writes = o.live_writes && fs.pt_writes;
	fs.switch_creds = geteuid() == 0;
	fs.started = time(NULL);
	if (main_check_source(&fs, o.paths[0], &e) < 0 ||
	    main_check_mountpoint(&fs, o.npaths > 1 ? o.paths[1] : NULL, &e) < 0) {
		fprintf(stderr, "hermesfs: %s\n", e.msg);
		return main_check_exit(&e);
	}
	if ((r = main_log_path(&fs)) < 0 ||
	    (r = mounts_run_path(fs.id, "sock", fs.sock_path, sizeof(fs.sock_path))) < 0) {
		fprintf(stderr, "hermesfs: cannot prepare $HERMES_HOME: %s\n", strerror(-r));
		return 1;
	}

	/* before the mount covers it: everything later is relative to this fd */
	root_fd = open(fs.source, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0) {
		fprintf(stderr, "hermesfs: cannot open %s: %s\n", fs.source, strerror(errno));
		return 1;
	}
	if ((r = inode_table_init(&fs, root_fd)) < 0) {
		fprintf(stderr, "hermesfs: cannot set up the inode table: %s\n", strerror(-r));
		return 1;
	}
	main_raise_nofile();
	main_setup_handles(&fs);
	if (o.fd_budget >= 0)
		fs.fd_budget = o.fd_budget;
	main_setup_handle_fds(&fs, o.handle_fds);

	if (!o.has_subtype)
		fuse_opt_add_arg(&fargs, "-osubtype=hermesfs");
	if (!o.has_fsname)
		main_add_fsname(&fargs, fs.source);

	if (!o.foreground) {
		int pfd[2];
		if (pipe2(pfd, O_CLOEXEC) < 0) {
			perror("hermesfs: pipe");
			return 1;
		}
		pid_t pid = fork();
		if (pid < 0) {
			perror("hermesfs: fork");
			return 1;
		}
		if (pid > 0) {
			close(pfd[1]);
			return main_wait_child(pfd[0], fs.log_path);
		}
		close(pfd[0]);
		fs.ready_fd = pfd[1];
		setsid();
	}
	if ((r = log_open(fs.log_path, o.debug ? LOG_DEBUG : LOG_INFO, o.foreground)) < 0) {
		fprintf(stderr, "hermesfs: cannot open the log %s: %s\n", fs.log_path,
			strerror(-r));
		return 1;
	}
	log_info("hermesfs %s starting: %s on %s", HERMES_VERSION, fs.source, fs.mountpoint);
	log_info("inode fds: %s", fs.use_handles ? "file handles past the budget" : "one per inode");
	log_debug("fd budget %ld, kept handle fds %ld", fs.fd_budget, fs.hfd_cap);

	r = session_run(&fs, &fargs, o.max_threads, o.clone_fd,
			o.foreground ? NULL : main_detach, &fs, &e);
	if (r < 0)
		main_fail(&fs, e.msg);
	inode_table_free(&fs);
	log_info("stopped");
	log_close();
	return r < 0 ? 1 : 0;
}
