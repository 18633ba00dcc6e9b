/* posix_ops battery "locks": flock, POSIX (fcntl) and OFD record locks,
 * each seen from a forked child that opens the file on its own. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "posix_ops.h"

static pid_t po_locks_parent;

static const char *po_locks_type(short t)
{
	switch (t) {
	case F_RDLCK: return "rdlck";
	case F_WRLCK: return "wrlck";
	case F_UNLCK: return "unlck";
	}
	return "?";
}

static void po_locks_child_flock(void *arg)
{
	int fd = open("lk", O_RDWR);

	(void)arg;
	PO_CHECK("flock.child_ex_nb", po_sys(flock(fd, LOCK_EX | LOCK_NB)), NULL);
	PO_CHECK("flock.child_sh_nb", po_sys(flock(fd, LOCK_SH | LOCK_NB)), NULL);
	close(fd);
}

static void po_locks_child_flock_sh(void *arg)
{
	int fd = open("lk", O_RDONLY);

	(void)arg;
	PO_CHECK("flock.child_sh_with_parent_sh",
		po_sys(flock(fd, LOCK_SH | LOCK_NB)), NULL);
	PO_CHECK("flock.child_ex_with_parent_sh",
		po_sys(flock(fd, LOCK_EX | LOCK_NB)), NULL);
	close(fd);
}

static void po_locks_child_flock_free(void *arg)
{
	int fd = open("lk", O_RDWR);

	(void)arg;
	PO_CHECK("flock.child_ex_after_unlock",
		po_sys(flock(fd, LOCK_EX | LOCK_NB)), NULL);
	close(fd);
}

static void po_locks_getlk(int fd, int cmd, const char *name, off_t start,
			   off_t len)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_start = start, .l_len = len };
	long r = po_sys(fcntl(fd, cmd, &fl));

	if (fl.l_type == F_UNLCK)
		PO_CHECK(name, r, "type=unlck");
	else
		PO_CHECK(name, r, "type=%s start=%lld len=%lld pid=%s",
			po_locks_type(fl.l_type), (long long)fl.l_start,
			(long long)fl.l_len,
			fl.l_pid == po_locks_parent ? "parent"
			: fl.l_pid == -1	    ? "-1"
			: fl.l_pid == 0		    ? "0"
						    : "other");
}

static long po_locks_set(int fd, int cmd, short type, off_t start, off_t len)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET,
			    .l_start = start, .l_len = len };

	return po_sys(fcntl(fd, cmd, &fl));
}

static void po_locks_child_posix(void *arg)
{
	int fd = open("lk", O_RDWR);

	(void)arg;
	po_locks_getlk(fd, F_GETLK, "fcntl.child_getlk", 0, 10);
	PO_CHECK("fcntl.child_setlk_conflict",
		po_locks_set(fd, F_SETLK, F_WRLCK, 50, 10), NULL);
	PO_CHECK("fcntl.child_setlk_rd_conflict",
		po_locks_set(fd, F_SETLK, F_RDLCK, 0, 1), NULL);
	PO_CHECK("fcntl.child_setlk_disjoint",
		po_locks_set(fd, F_SETLK, F_WRLCK, 200, 10), NULL);
	po_locks_getlk(fd, F_GETLK, "fcntl.child_getlk_past", 150, 0);
	po_locks_getlk(fd, F_OFD_GETLK, "fcntl.child_ofd_getlk", 0, 10);
	close(fd);
}

static void po_locks_child_after_close(void *arg)
{
	int fd = open("lk", O_RDWR);

	(void)arg;
	po_locks_getlk(fd, F_GETLK, "fcntl.child_getlk_after_parent_close", 0,
		       10);
	PO_CHECK("fcntl.child_setlk_after_parent_close",
		po_locks_set(fd, F_SETLK, F_WRLCK, 0, 100), NULL);
	close(fd);
}

static void po_locks_child_ofd(void *arg)
{
	int fd = open("lk", O_RDWR);

	(void)arg;
	po_locks_getlk(fd, F_OFD_GETLK, "ofd.child_getlk", 0, 10);
	PO_CHECK("ofd.child_setlk_conflict",
		po_locks_set(fd, F_OFD_SETLK, F_WRLCK, 0, 10), NULL);
	po_locks_getlk(fd, F_GETLK, "ofd.child_posix_getlk", 0, 10);
	close(fd);
}

void po_locks_run(void)
{
	int fd, fd2;

	po_locks_parent = getpid();
	po_write_file("lk", "0123456789abcdef", 16, 0644);
	fd = open("lk", O_RDWR);

	PO_CHECK("flock.ex", po_sys(flock(fd, LOCK_EX)), NULL);
	po_in_child(po_locks_child_flock, NULL);
	PO_CHECK("flock.sh_downgrade", po_sys(flock(fd, LOCK_SH)), NULL);
	po_in_child(po_locks_child_flock_sh, NULL);
	PO_CHECK("flock.un", po_sys(flock(fd, LOCK_UN)), NULL);
	po_in_child(po_locks_child_flock_free, NULL);
	PO_CHECK("flock.ex_again", po_sys(flock(fd, LOCK_EX | LOCK_NB)), NULL);
	/* flock and POSIX locks do not see each other on Linux */
	PO_CHECK("fcntl.setlk_under_flock",
		po_locks_set(fd, F_SETLK, F_WRLCK, 0, 100), NULL);
	PO_CHECK("flock.un2", po_sys(flock(fd, LOCK_UN)), NULL);
	po_in_child(po_locks_child_posix, NULL);
	PO_CHECK("fcntl.upgrade_own", po_locks_set(fd, F_SETLK, F_RDLCK, 0, 10),
		NULL);
	po_locks_getlk(fd, F_GETLK, "fcntl.getlk_own", 0, 10);
	/* closing any fd of the file drops the process's POSIX locks */
	fd2 = open("lk", O_RDONLY);
	close(fd2);
	po_in_child(po_locks_child_after_close, NULL);
	PO_CHECK("fcntl.setlkw_free",
		po_locks_set(fd, F_SETLKW, F_WRLCK, 0, 100), NULL);
	PO_CHECK("fcntl.unlock", po_locks_set(fd, F_SETLK, F_UNLCK, 0, 0), NULL);
	PO_CHECK("fcntl.bad_type", po_locks_set(fd, F_SETLK, 99, 0, 1), NULL);
	close(fd);

	fd = open("lk", O_RDONLY);
	PO_CHECK("fcntl.wrlck_on_rdonly_fd",
		po_locks_set(fd, F_SETLK, F_WRLCK, 0, 1), NULL);
	close(fd);

	fd = open("lk", O_RDWR);
	PO_CHECK("ofd.setlk", po_locks_set(fd, F_OFD_SETLK, F_WRLCK, 0, 10),
		NULL);
	po_in_child(po_locks_child_ofd, NULL);
	close(fd);
}
