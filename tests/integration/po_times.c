/* posix_ops battery "times": which of ctime and mtime each operation
 * changes on its target and on the directories involved, as seen by the
 * next stat(): the same relations the disk below shows (pjdfstest checks
 * these for every syscall). Each operation runs a few clock ticks after
 * its setup so that a change is visible at the coarse clock's resolution. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "posix_ops.h"

struct po_times_snap {
	const char *path;  /* where the object is before the operation */
	const char *after; /* and after it, when the operation moves it */
	struct stat st;
	int ok;
};

static void po_times_take(struct po_times_snap *s, int n)
{
	for (int i = 0; i < n; i++)
		s[i].ok = s[i].path && lstat(s[i].path, &s[i].st) == 0;
}

static void po_times_tick(void)
{
	struct timespec d = { 0, 25 * 1000 * 1000 };

	nanosleep(&d, NULL);
}

/* "path:cm" flags: c = ctime changed, m = mtime changed, - = unchanged */
static void po_times_report(const char *name, long ret,
			    struct po_times_snap *before, int n)
{
	char out[512] = "";
	size_t len = 0;

	for (int i = 0; i < n; i++) {
		const char *at = before[i].after ? before[i].after : before[i].path;
		struct stat now;
		int ok;

		if (!before[i].path)
			continue;
		ok = lstat(at, &now) == 0;
		if (!ok || !before[i].ok) {
			len += (size_t)snprintf(out + len, sizeof(out) - len,
						" %s:gone", at);
			continue;
		}
		len += (size_t)snprintf(
			out + len, sizeof(out) - len, " %s:%c%c", at,
			po_ts_cmp(now.st_ctim, before[i].st.st_ctim) ? 'c' : '-',
			po_ts_cmp(now.st_mtim, before[i].st.st_mtim) ? 'm' : '-');
		if (len >= sizeof(out))
			break;
	}
	po_line(name, ret, "%s", out + (out[0] == ' '));
}

/* Run op between two snapshots of up to three paths and report; the
 * first object moves from p1 to moved_to (NULL: it stays). */
#define PO_TIMES_MOVE(name, op, p1, moved_to, p2, p3)                     \
	do {                                                              \
		struct po_times_snap s_[3] = {                            \
			{ .path = p1, .after = moved_to },                \
			{ .path = p2 }, { .path = p3 } };                 \
		long r_;                                                  \
		po_times_take(s_, 3);                                     \
		po_times_tick();                                          \
		r_ = (op);                                                \
		po_times_report(name, r_, s_, 3);                         \
	} while (0)
#define PO_TIMES(name, op, p1, p2, p3) \
	PO_TIMES_MOVE(name, op, p1, NULL, p2, p3)

static long po_times_write(const char *path, const char *data, size_t n)
{
	int fd = open(path, O_WRONLY);
	long r;

	if (fd < 0)
		return -errno;
	r = po_sys(write(fd, data, n));
	close(fd);
	return r;
}

static long po_times_mmap_store(const char *path)
{
	int fd = open(path, O_RDWR);
	char *m;
	long r;

	if (fd < 0)
		return -errno;
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		r = -errno;
		close(fd);
		return r;
	}
	m[0] = 'M';
	r = po_sys(msync(m, 4096, MS_SYNC));
	munmap(m, 4096);
	close(fd);
	return r;
}

static long po_times_trunc_open(const char *path)
{
	int fd = open(path, O_WRONLY | O_TRUNC);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

void po_times_run(void)
{
	int fd;

	mkdir("d1", 0755);
	mkdir("d2", 0755);
	po_write_file("d1/f", "0123456789", 10, 0644);
	po_write_file("d1/empty", "", 0, 0644);

	PO_TIMES("times.chmod", po_sys(chmod("d1/f", 0600)), "d1/f", "d1", NULL);
	PO_TIMES("times.chown_noop",
		 po_sys(chown("d1/f", (uid_t)-1, (gid_t)-1)), "d1/f", "d1", NULL);
	PO_TIMES("times.chown_self",
		 po_sys(chown("d1/f", geteuid(), getegid())), "d1/f", "d1", NULL);
	PO_TIMES("times.write", po_times_write("d1/f", "ab", 2), "d1/f", "d1",
		 NULL);
	PO_TIMES("times.write_zero_bytes", po_times_write("d1/f", "", 0),
		 "d1/f", NULL, NULL);
	PO_TIMES("times.mmap_store_msync", po_times_mmap_store("d1/f"), "d1/f",
		 NULL, NULL);
	PO_TIMES("times.truncate_shrink", po_sys(truncate("d1/f", 5)), "d1/f",
		 "d1", NULL);
	PO_TIMES("times.truncate_same_size", po_sys(truncate("d1/f", 5)),
		 "d1/f", NULL, NULL);
	PO_TIMES("times.truncate_grow", po_sys(truncate("d1/f", 50)), "d1/f",
		 NULL, NULL);
	PO_TIMES("times.open_trunc_empty", po_times_trunc_open("d1/empty"),
		 "d1/empty", NULL, NULL);
	PO_TIMES("times.open_trunc_nonempty", po_times_trunc_open("d1/f"),
		 "d1/f", NULL, NULL);
	fd = open("d1/f", O_RDWR);
	PO_TIMES("times.fallocate", po_sys(fallocate(fd, 0, 0, 8192)), "d1/f",
		 NULL, NULL);
	PO_TIMES("times.ftruncate", po_sys(ftruncate(fd, 100)), "d1/f", NULL,
		 NULL);
	PO_TIMES("times.fchmod", po_sys(fchmod(fd, 0644)), "d1/f", NULL, NULL);
	PO_TIMES("times.fsetxattr", po_sys(fsetxattr(fd, "user.t", "1", 1, 0)),
		 "d1/f", NULL, NULL);
	close(fd);
	PO_TIMES("times.setxattr", po_sys(setxattr("d1/f", "user.u", "1", 1, 0)),
		 "d1/f", "d1", NULL);
	PO_TIMES("times.removexattr", po_sys(removexattr("d1/f", "user.u")),
		 "d1/f", NULL, NULL);
	PO_TIMES("times.removexattr_missing",
		 po_sys(removexattr("d1/f", "user.u")), "d1/f", NULL, NULL);
	PO_TIMES("times.utimensat",
		 po_sys(utimensat(AT_FDCWD, "d1/f", NULL, 0)), "d1/f", NULL, NULL);
	po_write_file("d1/src", "copy source", 11, 0644);
	po_write_file("d1/dst", "", 0, 0644);
	{
		int in = open("d1/src", O_RDONLY), out = open("d1/dst", O_WRONLY);

		PO_TIMES("times.copy_file_range",
			 po_sys(copy_file_range(in, NULL, out, NULL, 11, 0)),
			 "d1/dst", "d1/src", NULL);
		close(in);
		close(out);
	}
	PO_TIMES("times.read", po_open_ret("d1/src", O_RDONLY), "d1/src",
		 "d1", NULL);

	PO_TIMES("times.link", po_sys(link("d1/f", "d2/lf")), "d1/f", "d2",
		 "d1");
	PO_TIMES("times.unlink_one_of_two", po_sys(unlink("d2/lf")), "d1/f",
		 "d2", NULL);
	PO_TIMES("times.create", po_open_ret("d2/new", O_WRONLY | O_CREAT, 0644),
		 "d2", NULL, NULL);
	PO_TIMES("times.create_existing",
		 po_open_ret("d2/new", O_WRONLY | O_CREAT, 0644), "d2", "d2/new",
		 NULL);
	PO_TIMES_MOVE("times.rename_in_dir",
		      po_sys(rename("d2/new", "d2/new2")), "d2/new", "d2/new2",
		      "d2", NULL);
	PO_TIMES_MOVE("times.rename_across",
		      po_sys(rename("d2/new2", "d1/moved")), "d2/new2",
		      "d1/moved", "d1", "d2");
	po_write_file("d2/victim", "v", 1, 0644);
	PO_TIMES_MOVE("times.rename_over",
		      po_sys(rename("d1/moved", "d2/victim")), "d1/moved",
		      "d2/victim", "d1", "d2");
	PO_TIMES("times.rename_noop_same_name",
		 po_sys(rename("d2/victim", "d2/victim")), "d2/victim", "d2",
		 NULL);
	PO_TIMES("times.mkdir", po_sys(mkdir("d2/sub", 0755)), "d2", NULL, NULL);
	PO_TIMES_MOVE("times.rename_dir_across",
		      po_sys(rename("d2/sub", "d1/sub")), "d2/sub", "d1/sub",
		      "d1", "d2");
	PO_TIMES("times.rmdir", po_sys(rmdir("d1/sub")), "d1", NULL, NULL);
	PO_TIMES("times.symlink", po_sys(symlink("f", "d1/sl")), "d1", "d1/f",
		 NULL);
	PO_TIMES("times.lchown_symlink",
		 po_sys(lchown("d1/sl", geteuid(), getegid())), "d1/sl", "d1",
		 NULL);
	PO_TIMES("times.mkfifo", po_sys(mkfifo("d1/fifo", 0644)), "d1", NULL,
		 NULL);
	PO_TIMES("times.unlink_last", po_sys(unlink("d1/fifo")), "d1", NULL,
		 NULL);
	PO_TIMES("times.chmod_dir", po_sys(chmod("d2", 0711)), "d2", NULL, NULL);
	PO_TIMES_MOVE("times.rename_exchange",
		      po_sys(renameat2(AT_FDCWD, "d1/src", AT_FDCWD, "d2/victim",
				       RENAME_EXCHANGE)),
		      "d1/src", "d2/victim", "d1", "d2");
	PO_TIMES("times.failed_unlink", po_sys(unlink("d1/nope")), "d1", NULL,
		 NULL);
	PO_TIMES("times.failed_rmdir_nonempty", po_sys(rmdir("d1")), "d1", ".",
		 NULL);
}
