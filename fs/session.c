/* The FUSE session of a running daemon: the ops table, capability
 * negotiation, the mount, the registry record and control socket that
 * announce it, the multithreaded loop, and the orderly teardown. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ckptd.h"
#include "hfs.h"
#include "log.h"
#include "mounts.h"
#include "session.h"

#define SESSION_MAX_THREADS 16

static const char *const hfs_op_names[HFS_OP__COUNT] = {
	[HFS_OP_LOOKUP] = "lookup", [HFS_OP_FORGET] = "forget",
	[HFS_OP_GETATTR] = "getattr", [HFS_OP_SETATTR] = "setattr",
	[HFS_OP_READLINK] = "readlink", [HFS_OP_MKNOD] = "mknod",
	[HFS_OP_MKDIR] = "mkdir", [HFS_OP_UNLINK] = "unlink",
	[HFS_OP_RMDIR] = "rmdir", [HFS_OP_SYMLINK] = "symlink",
	[HFS_OP_RENAME] = "rename", [HFS_OP_LINK] = "link",
	[HFS_OP_OPEN] = "open", [HFS_OP_READ] = "read",
	[HFS_OP_WRITE] = "write", [HFS_OP_RELEASE] = "release",
	[HFS_OP_FSYNC] = "fsync", [HFS_OP_OPENDIR] = "opendir",
	[HFS_OP_READDIR] = "readdir", [HFS_OP_RELEASEDIR] = "releasedir",
	[HFS_OP_FSYNCDIR] = "fsyncdir", [HFS_OP_STATFS] = "statfs",
	[HFS_OP_SETXATTR] = "setxattr", [HFS_OP_GETXATTR] = "getxattr",
	[HFS_OP_LISTXATTR] = "listxattr", [HFS_OP_REMOVEXATTR] = "removexattr",
	[HFS_OP_CREATE] = "create", [HFS_OP_FLOCK] = "flock",
	[HFS_OP_FALLOCATE] = "fallocate", [HFS_OP_COPY_FILE_RANGE] = "copy_file_range",
	[HFS_OP_LSEEK] = "lseek", [HFS_OP_IOCTL] = "ioctl",
};

const char *hfs_op_name(enum hfs_op op)
{
	return op < HFS_OP__COUNT ? hfs_op_names[op] : "?";
}

/* No flush: a close then costs no round trip (the kernel stops asking after
 * the first ENOSYS); release closes the fd below. No getlk/setlk: the
 * kernel keeps POSIX locks itself, correct on a single host. */
static const struct fuse_lowlevel_ops hfs_ops = {
	.init = hfs_init,
	.destroy = hfs_destroy,
	.lookup = hfs_lookup,
	.forget = hfs_forget,
	.forget_multi = hfs_forget_multi,
	.getattr = hfs_getattr,
	.setattr = hfs_setattr,
	.readlink = hfs_readlink,
	.mknod = hfs_mknod,
	.mkdir = hfs_mkdir,
	.symlink = hfs_symlink,
	.link = hfs_link,
	.unlink = hfs_unlink,
	.rmdir = hfs_rmdir,
	.rename = hfs_rename,
	.statfs = hfs_statfs,
	.open = hfs_open,
	.create = hfs_create,
	.read = hfs_read,
	.write_buf = hfs_write_buf,
	.release = hfs_release,
	.fsync = hfs_fsync,
	.fallocate = hfs_fallocate,
	.copy_file_range = hfs_copy_file_range,
	.lseek = hfs_lseek,
	.ioctl = hfs_ioctl,
	.flock = hfs_flock,
	.opendir = hfs_opendir,
	.readdir = hfs_readdir,
	.readdirplus = hfs_readdirplus,
	.releasedir = hfs_releasedir,
	.fsyncdir = hfs_fsyncdir,
	.setxattr = hfs_setxattr,
	.getxattr = hfs_getxattr,
	.listxattr = hfs_listxattr,
	.removexattr = hfs_removexattr,
};

static void session_want(struct fuse_conn_info *conn, unsigned cap)
{
	if (conn->capable & cap)
		conn->want |= cap;
}

void hfs_init(void *userdata, struct fuse_conn_info *conn)
{
	struct hfs *fs = userdata;

	session_want(conn, FUSE_CAP_FLOCK_LOCKS);
	session_want(conn, FUSE_CAP_CACHE_SYMLINKS);
	session_want(conn, FUSE_CAP_PARALLEL_DIROPS);
	/* the kernel clears set-id bits on write and truncate itself and
	 * tells us by setattr; we write as root and would keep them */
	conn->want &= ~FUSE_CAP_HANDLE_KILLPRIV;
	conn->want &= ~FUSE_CAP_POSIX_LOCKS;
	/* POSIX ACLs as on the disk: the kernel then checks access with them
	 * (default_permissions alone ignores them) and caches them, and
	 * leaves the umask to the disk below, which skips it under a default
	 * ACL (sys_creds_umask) */
	if ((conn->capable & FUSE_CAP_POSIX_ACL) && (conn->capable & FUSE_CAP_DONT_MASK)) {
		conn->want |= FUSE_CAP_POSIX_ACL | FUSE_CAP_DONT_MASK;
		fs->acl = 1;
	}
	if (fs->writeback)
		session_want(conn, FUSE_CAP_WRITEBACK_CACHE);
	else
		conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
	/* Splice only for replies (SPLICE_WRITE: file data to /dev/fuse for
	 * reads). Receiving requests by splice (SPLICE_READ) needs a pipe as
	 * big as the 1 MiB + header request buffer, more than the default
	 * pipe-max-size, and measured 4x slower for 1 MiB writes here. */
	conn->want &= ~FUSE_CAP_SPLICE_READ;
	if (fs->nosplice) {
		conn->want &= ~(FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE);
	} else {
		session_want(conn, FUSE_CAP_SPLICE_WRITE);
		session_want(conn, FUSE_CAP_SPLICE_MOVE);
	}
	/* Directories opened without a request: opendir says ENOSYS once and
	 * the kernel stops sending opendir and releasedir, and keeps what it
	 * read of a directory cached until the directory changes. A walk of
	 * a warm tree (find, git status) then costs no round trip per
	 * directory; readdir opens the directory below itself. */
	fs->no_opendir = !fs->dir_handles && (conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT);
	conn->max_write = HFS_MAX_WRITE;
	conn->max_background = 64;
	conn->congestion_threshold = 48;
	conn->time_gran = 1;
	log_info("fuse protocol %u.%u, max_write %u, max_readahead %u, caps 0x%x",
		 conn->proto_major, conn->proto_minor, conn->max_write,
		 conn->max_readahead, conn->want);
	if (fs->ready_fd >= 0) {
		if (write(fs->ready_fd, "ok\n", 3) < 0)
			log_warn("cannot tell the parent that the mount is live: %s",
				 strerror(errno));
		close(fs->ready_fd);
		fs->ready_fd = -1;
	}
}

void hfs_destroy(void *userdata)
{
	(void)userdata;
	log_debug("session destroyed");
}

/* libfuse (and fusermount3) explain failures on stderr: while a setup call
 * runs, catch that text so the error becomes one line a person reads. */
struct session_capture {
	int saved;
	int mem;
};

static void session_capture_begin(struct session_capture *c)
{
	c->saved = dup(STDERR_FILENO);
	c->mem = memfd_create("hermesfs-stderr", MFD_CLOEXEC);
	if (c->saved >= 0 && c->mem >= 0)
		dup2(c->mem, STDERR_FILENO);
}

/* Restore stderr; append what was caught to e's message as ": text". */
static void session_capture_end(struct session_capture *c, struct herr *e)
{
	char buf[512];
	ssize_t n = 0;

	if (c->saved >= 0) {
		dup2(c->saved, STDERR_FILENO);
		close(c->saved);
	}
	if (c->mem < 0)
		return;
	if (e)
		n = pread(c->mem, buf, sizeof(buf) - 1, 0);
	close(c->mem);
	if (n <= 0)
		return;
	buf[n] = '\0';
	for (char *p = buf; *p; p++)
		if (*p == '\n')
			*p = *(p + 1) ? ' ' : '\0';
	size_t len = strlen(e->msg);
	snprintf(e->msg + len, sizeof(e->msg) - len, ": %s", buf);
}

static int session_register(struct hfs *fs)
{
	struct mount_info m;

	memset(&m, 0, sizeof(m));
	snprintf(m.id, sizeof(m.id), "%s", fs->id);
	snprintf(m.source, sizeof(m.source), "%s", fs->source);
	snprintf(m.mountpoint, sizeof(m.mountpoint), "%s", fs->mountpoint);
	snprintf(m.sock, sizeof(m.sock), "%s", fs->sock_path);
	snprintf(m.log, sizeof(m.log), "%s", fs->log_path);
	m.pid = getpid();
	m.started = fs->started;
	return mounts_write(&m);
}

/* The watchdog: a process of its own that holds no /dev/fuse fd and
 * aborts the FUSE connection if the daemon's main thread dies while the
 * mount is still there (kill -9). Without it, a thread of ours blocked in
 * a request to our own mount (a rollback writes through it) keeps the
 * daemon, and so /dev/fuse, from ever closing: the process hangs in D
 * state, and so does every process that touches the tree, until someone
 * runs hermesctl. It is exec'd afresh (no copy of our threads' state) as
 * "hermesfs --watchdog MINOR PID MOUNTPOINT", and told the main thread's
 * death by PR_SET_PDEATHSIG, which survives the exec. Root only: the abort
 * file under /sys/fs/fuse/connections is root's. */
static pid_t session_watchdog_start(struct hfs *fs)
{
	char minor_s[16], parent_s[16], type[64];
	sigset_t all, old;
	unsigned minor;
	pid_t pid, parent = getpid();

	if (geteuid() != 0 || mounts_kernel_dev(fs->mountpoint, type, sizeof(type), &minor) <= 0)
		return -1;
	snprintf(minor_s, sizeof(minor_s), "%u", minor);
	snprintf(parent_s, sizeof(parent_s), "%d", (int)parent);
	/* the child starts with every signal blocked: it waits for them */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		prctl(PR_SET_PDEATHSIG, SIGUSR1);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		syscall(SYS_close_range, 3U, ~0U, 0U); /* /dev/fuse above all */
		if (chdir("/") < 0 || setsid() < 0) {
			/* neither matters for what it watches */
		}
		execl("/proc/self/exe", "hermesfs", "--watchdog", minor_s, parent_s, fs->mountpoint,
		      (char *)NULL);
		_exit(127);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid < 0)
		log_warn("cannot start the watchdog process: %s", strerror(errno));
	else
		log_debug("watchdog pid %d for FUSE connection %u", (int)pid, minor);
	return pid;
}

/* A clean exit: the watchdog goes first, while the mount is ours still,
 * so it can never act on a connection number reused by another mount. */
static void session_watchdog_stop(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

int session_watchdog_main(const char *minor_s, const char *parent_s, const char *mountpoint)
{
	char type[64];
	unsigned minor = (unsigned)strtoul(minor_s, NULL, 10), now;
	pid_t parent = (pid_t)strtol(parent_s, NULL, 10);
	sigset_t wait;
	int sig = SIGUSR1;

	/* only the parent's death moves it: a SIGTERM to the whole group
	 * (systemctl stop) must leave it watching the daemon's shutdown; the
	 * daemon ends it with SIGKILL. Every other signal stays blocked, as
	 * it was at the fork. */
	sigemptyset(&wait);
	sigaddset(&wait, SIGUSR1);
	if (getppid() == parent && sigwait(&wait, &sig) != 0)
		return 1;
	/* the daemon's main thread is gone: its mount, if still there, has
	 * no one left to answer it */
	if (mounts_kernel_dev(mountpoint, type, sizeof(type), &now) <= 0 || now != minor ||
	    strcmp(type, "fuse.hermesfs") != 0)
		return 0;
	return mounts_fuse_abort(minor) < 0 ? 1 : 0;
}

int session_run(struct hfs *fs, struct fuse_args *args, int threads, int clone_fd,
		void (*detach)(void *), void *detach_arg, struct herr *e)
{
	struct fuse_loop_config *cfg;
	struct session_capture cap;
	pid_t watchdog = -1;
	int r;

	session_capture_begin(&cap);
	fs->se = fuse_session_new(args, &hfs_ops, sizeof(hfs_ops), fs);
	if (!fs->se) {
		err_set(e, -EINVAL, "cannot start a FUSE session");
		session_capture_end(&cap, e);
		return -EINVAL;
	}
	session_capture_end(&cap, NULL);
	if (fuse_set_signal_handlers(fs->se) < 0) {
		r = err_set(e, -EIO, "cannot install signal handlers");
		goto destroy;
	}
	session_capture_begin(&cap);
	if (fuse_session_mount(fs->se, fs->mountpoint) < 0) {
		r = err_set(e, -EIO, "cannot mount on %s", fs->mountpoint);
		session_capture_end(&cap, e);
		goto signals;
	}
	session_capture_end(&cap, NULL);
	/* before any thread of ours exists: the fork copies one thread */
	watchdog = session_watchdog_start(fs);
	pt_setup(fs);
	if ((r = ckptd_start(fs, e)) < 0)
		goto unmount;
	if ((r = ctl_start(fs, e)) < 0)
		goto ckpt;
	if ((r = session_register(fs)) < 0) {
		err_sys(e, r, "cannot write the mount record");
		goto ctl;
	}
	/* creation modes come from the caller, already masked by the kernel */
	umask(0);
	log_info("mounted %s on %s (pid %d)", fs->source, fs->mountpoint, (int)getpid());
	if (detach)
		detach(detach_arg);

	cfg = fuse_loop_cfg_create();
	if (!cfg) {
		r = err_set(e, -ENOMEM, "out of memory");
		goto unregister;
	}
	if (threads <= 0)
		threads = SESSION_MAX_THREADS;
	fuse_loop_cfg_set_max_threads(cfg, (unsigned)threads);
	/* idle workers stay: bursts of metadata ops would otherwise create
	 * and destroy threads (each with a 1 MiB request buffer) all the time */
	fuse_loop_cfg_set_idle_threads(cfg, (unsigned)threads);
	fuse_loop_cfg_set_clone_fd(cfg, clone_fd ? 1 : 0);
	r = fuse_session_loop_mt(fs->se, cfg);
	fuse_loop_cfg_destroy(cfg);
	if (r != 0)
		log_warn("the FUSE loop ended with %d", r);
	r = 0;
	log_info("unmounting %s", fs->mountpoint);
unregister:
	/* Unmounted first (the watchdog before that, while the connection is
	 * ours): a control client restoring through the mount, blocked on a
	 * request no worker will serve now, gets ENOTCONN instead of holding
	 * ctl_stop for its timeout. The checkpoint at unmount reads the disk
	 * below. The record goes last: once it is gone, the daemon is done. */
	session_watchdog_stop(watchdog);
	fuse_session_unmount(fs->se);
	ctl_stop(fs);
	ckptd_stop(fs);
	mounts_remove(fs->id);
	goto signals;
ctl:
	ctl_stop(fs);
ckpt:
	ckptd_stop(fs);
unmount:
	session_watchdog_stop(watchdog);
	fuse_session_unmount(fs->se);
signals:
	fuse_remove_signal_handlers(fs->se);
destroy:
	fuse_session_destroy(fs->se);
	fs->se = NULL;
	return r;
}
