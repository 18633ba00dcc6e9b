/* Raw system-call layer: per-thread credential switching (the glibc
 * wrappers would change every thread of the daemon) and reopening O_PATH
 * fds through /proc/self/fd; the caller's umask for nodes we make. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hfs.h"
#include "log.h"

#define SYS_MAX_GROUPS 256

static int sys_setresuid(uid_t r, uid_t e, uid_t s)
{
	return syscall(SYS_setresuid, r, e, s) < 0 ? -errno : 0;
}

static int sys_setresgid(gid_t r, gid_t e, gid_t s)
{
	return syscall(SYS_setresgid, r, e, s) < 0 ? -errno : 0;
}

static int sys_setgroups(size_t n, const gid_t *list)
{
	return syscall(SYS_setgroups, n, list) < 0 ? -errno : 0;
}

/* Back to the daemon's own root identity; the saved uid stays 0 while we
 * act for a caller, which is what allows the way back. */
void sys_creds_leave(struct sys_creds *c)
{
	if (c->umask_set) {
		c->umask_set = 0;
		umask(0);
	}
	if (!c->switched)
		return;
	c->switched = 0;
	if (sys_setresuid(-1, 0, -1) < 0 || sys_setresgid(-1, 0, -1) < 0 ||
	    sys_setgroups(0, NULL) < 0) {
		/* A worker thread that cannot regain root would act with the
		 * wrong identity from now on: nothing sane is left to do. */
		log_err("cannot restore the daemon's credentials: %s", strerror(errno));
		_exit(70);
	}
}

int sys_creds_enter(struct hfs *fs, fuse_req_t req, struct sys_creds *c)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	gid_t groups[SYS_MAX_GROUPS];
	int n, r;

	c->switched = 0;
	c->umask_set = 0;
	c->raised = 0;
	if (!fs->switch_creds || (ctx->uid == 0 && ctx->gid == 0))
		return 0;
	n = fuse_req_getgroups(req, SYS_MAX_GROUPS, groups);
	if (n < 0)
		n = 0; /* caller gone or /proc hidden: act with its primary group only */
	if (n > SYS_MAX_GROUPS) {
		/* rare (NGROUPS_MAX is 65536): all of them, from the heap */
		gid_t *many = malloc((size_t)n * sizeof(*many));
		int got = many ? fuse_req_getgroups(req, n, many) : -ENOMEM;
		if (got < 0 || got > n) {
			free(many);
			return got < 0 ? got : -EAGAIN;
		}
		r = sys_setgroups((size_t)got, many);
		free(many);
	} else {
		r = sys_setgroups((size_t)n, groups);
	}
	if (r < 0)
		return r;
	c->switched = 1;
	if ((r = sys_setresgid(-1, ctx->gid, -1)) < 0 ||
	    (r = sys_setresuid(-1, ctx->uid, -1)) < 0) {
		sys_creds_leave(c);
		return r;
	}
	return 0;
}

/* The capabilities that bear on making a node: what a caller may hold
 * over files not its own. */
#define SYS_FS_CAPS                                                                   \
	((UINT64_C(1) << CAP_CHOWN) | (UINT64_C(1) << CAP_DAC_OVERRIDE) |             \
	 (UINT64_C(1) << CAP_DAC_READ_SEARCH) | (UINT64_C(1) << CAP_FOWNER) |         \
	 (UINT64_C(1) << CAP_FSETID) | (UINT64_C(1) << CAP_MKNOD))

/* The file capabilities of the caller, from /proc/<tid>/status: 0 if
 * unknown, none, or held in another user namespace than ours (there
 * CapEff shows bits that are worth nothing on our files: a user who ran
 * unshare -Ur is an ordinary user here). */
static uint64_t sys_caller_caps(fuse_req_t req)
{
	char path[64], line[128];
	unsigned long long v = 0;
	struct stat mine, theirs;
	int pid = (int)fuse_req_ctx(req)->pid, ns_ok;
	uid_t as = (uid_t)syscall(SYS_geteuid);
	FILE *f;

	/* another process's ns link wants ptrace access, which the caller's
	 * ids without our capabilities lack: look as root for a moment (the
	 * saved uid is 0), then be the caller again */
	snprintf(path, sizeof(path), "/proc/%d/ns/user", pid);
	if (sys_setresuid(-1, 0, -1) < 0)
		return 0;
	ns_ok = stat("/proc/self/ns/user", &mine) == 0 && stat(path, &theirs) == 0 &&
		mine.st_dev == theirs.st_dev && mine.st_ino == theirs.st_ino;
	if (sys_setresuid(-1, as, -1) < 0) {
		log_err("cannot act as uid %u again: %s", (unsigned)as, strerror(errno));
		_exit(70); /* as in sys_creds_leave: no sane way on */
	}
	if (!ns_ok)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (!(f = fopen(path, "re")))
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &v) == 1)
			break;
	fclose(f);
	return v & SYS_FS_CAPS;
}

int sys_creds_raise(fuse_req_t req, struct sys_creds *c)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	uint64_t want;

	if (!c->switched || c->raised || !(want = sys_caller_caps(req)))
		return 0;
	if (syscall(SYS_capget, &h, d) < 0)
		return 0;
	/* switching the effective uid away from 0 emptied the effective set;
	 * the permitted set stays while the saved uid is 0 */
	d[0].effective = (uint32_t)want & d[0].permitted;
	d[1].effective = (uint32_t)(want >> 32) & d[1].permitted;
	if (!d[0].effective && !d[1].effective)
		return 0;
	if (syscall(SYS_capset, &h, d) < 0)
		return 0;
	c->raised = 1; /* the way back to uid 0 restores the full set */
	return 1;
}

/* 1: this thread has its own umask (an fs_struct of its own), -1: it
 * could not get one */
static __thread int sys_own_umask;

/* With POSIX ACLs on, the kernel sends the mode unmasked and the caller's
 * umask beside it: the disk below must apply the umask unless the parent
 * has a default ACL, which it does by itself when the umask in force is
 * the caller's. umask is per process, so a worker thread first takes a
 * private fs_struct; the daemon's umask stays 0 everywhere else. */
void sys_creds_umask(struct hfs *fs, fuse_req_t req, struct sys_creds *c, mode_t *mode)
{
	mode_t u;

	if (!fs->acl)
		return;
	/* first thing, whatever this caller's umask: a worker started by a
	 * worker shares its fs_struct, and so whatever umask that one has
	 * set for the moment, until it takes one of its own */
	if (sys_own_umask == 0) {
		sys_own_umask = unshare(CLONE_FS) == 0 ? 1 : -1;
		if (sys_own_umask > 0)
			umask(0);
	}
	u = fuse_req_ctx(req)->umask & 0777;
	if (u == 0)
		return;
	if (sys_own_umask < 0) {
		*mode &= ~u; /* as the kernel would: a default ACL then loses */
		return;
	}
	umask(u);
	c->umask_set = 1;
}

void sys_proc_path(int fd, char out[64])
{
	snprintf(out, 64, "/proc/self/fd/%d", fd);
}

int sys_reopen(int fd, int flags)
{
	char path[64];
	int nfd;

	sys_proc_path(fd, path);
	nfd = open(path, (flags & ~O_NOFOLLOW) | O_CLOEXEC);
	return nfd < 0 ? -errno : nfd;
}

int sys_stat(int fd, struct stat *st)
{
	return fstatat(fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

/* fchmodat2(2), Linux 6.6: the only chmod that takes an O_PATH fd itself
 * (AT_EMPTY_PATH). The same number on every architecture. */
#define SYS_FCHMODAT2 452

int sys_chmod_fd(int fd, mode_t mode)
{
	static atomic_int no_fchmodat2;
	char proc[64];

	/* half the cost of resolving /proc/self/fd/N, measured. A kernel
	 * without it says ENOSYS; a seccomp filter that does not know it may
	 * say EPERM or EINVAL instead, so those retry by the path (which
	 * gives the real answer if it was the chmod's own). */
	if (!atomic_load_explicit(&no_fchmodat2, memory_order_relaxed)) {
		if (syscall(SYS_FCHMODAT2, fd, "", mode, AT_EMPTY_PATH) == 0)
			return 0;
		if (errno == ENOSYS)
			atomic_store_explicit(&no_fchmodat2, 1, memory_order_relaxed);
		else if (errno != EPERM && errno != EINVAL)
			return -errno;
	}
	sys_proc_path(fd, proc);
	return chmod(proc, mode) < 0 ? -errno : 0;
}

int sys_kill_suidgid(int fd, int is_path)
{
	struct stat st;
	mode_t kill;
	int r;

	if (sys_stat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	kill = st.st_mode & S_ISUID;
	if ((st.st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP))
		kill |= S_ISGID;
	if (!kill)
		return 0;
	if (is_path)
		r = sys_chmod_fd(fd, st.st_mode & 07777 & ~kill);
	else
		r = fchmod(fd, st.st_mode & 07777 & ~kill) < 0 ? -errno : 0;
	if (r < 0) {
		log_warn("cannot clear set-id bits: %s", strerror(-r));
		return 0;
	}
	return 1;
}
