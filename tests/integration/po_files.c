/* posix_ops battery "files": open flags and their errors, creation modes
 * under umask, truncation both ways, O_APPEND from concurrent writers and
 * a file that is unlinked while open. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "posix_ops.h"

static void po_files_open_flags(void)
{
	char st[256];
	long r;
	int fd;

	r = po_sys(fd = open("f", O_WRONLY | O_CREAT | O_EXCL, 0644));
	PO_CHECK("open.creat_excl", r < 0 ? r : 0, "%s",
		po_lstat_str("f", st, sizeof(st)));
	if (fd >= 0) {
		PO_CHECK("write.hello", po_sys(write(fd, "hello world\n", 12)),
			NULL);
		close(fd);
	}
	r = po_sys(fd = open("f", O_WRONLY | O_CREAT | O_EXCL, 0644));
	PO_CHECK("open.excl_existing", r < 0 ? r : 0, NULL);
	if (fd >= 0)
		close(fd);
	PO_CHECK("open.missing", po_sys(fd = open("nope", O_RDONLY)), NULL);
	r = po_sys(fd = open("f", O_RDONLY | O_DIRECTORY));
	PO_CHECK("open.directory_on_file", r < 0 ? r : 0, NULL);
	if (fd >= 0)
		close(fd);
	r = po_sys(fd = open("f/x", O_RDONLY));
	PO_CHECK("open.below_file", r < 0 ? r : 0, NULL);
	mkdir("d", 0755);
	r = po_sys(fd = open("d", O_WRONLY));
	PO_CHECK("open.dir_for_write", r < 0 ? r : 0, NULL);
	r = po_sys(fd = open("d", O_RDONLY));
	if (fd >= 0) {
		char c;

		PO_CHECK("read.dir", po_sys(read(fd, &c, 1)), NULL);
		close(fd);
	}
	r = po_sys(fd = open("d", O_RDONLY | O_CREAT, 0644));
	PO_CHECK("open.creat_on_dir", r < 0 ? r : 0, NULL);
	if (fd >= 0)
		close(fd);
	symlink("f", "lnk");
	r = po_sys(fd = open("lnk", O_RDONLY | O_NOFOLLOW));
	PO_CHECK("open.nofollow_symlink", r < 0 ? r : 0, NULL);
	if (fd >= 0)
		close(fd);
	r = po_sys(fd = open("lnk", O_RDONLY | O_PATH | O_NOFOLLOW));
	PO_CHECK("open.path_nofollow_symlink", r < 0 ? r : 0, "%s",
		fd >= 0 ? po_fstat_str(fd, st, sizeof(st)) : "");
	if (fd >= 0)
		close(fd);
	r = po_sys(fd = open("f", O_RDONLY));
	if (fd >= 0) {
		PO_CHECK("write.on_rdonly_fd", po_sys(write(fd, "x", 1)), NULL);
		close(fd);
	}
	r = po_sys(fd = open("f", O_WRONLY));
	if (fd >= 0) {
		char c;

		PO_CHECK("read.on_wronly_fd", po_sys(read(fd, &c, 1)), NULL);
		close(fd);
	}
	PO_CHECK("fsync.closed_fd", po_sys(fsync(fd)), NULL);
	{
		char name[300];

		memset(name, 'n', 256);
		name[256] = '\0';
		r = po_sys(fd = open(name, O_WRONLY | O_CREAT, 0644));
		PO_CHECK("open.name_too_long", r < 0 ? r : 0, NULL);
		if (fd >= 0)
			close(fd);
		name[255] = '\0';
		r = po_sys(fd = open(name, O_WRONLY | O_CREAT, 0644));
		PO_CHECK("open.name_255", r < 0 ? r : 0, NULL);
		if (fd >= 0)
			close(fd);
		unlink(name);
	}
}

static void po_files_trunc(void)
{
	char st[256], h[64], buf[64];
	struct stat s0, s1;
	size_t got;
	int fd;
	long r;

	po_write_file("t", "hello", 5, 0644);
	po_age("t");
	stat("t", &s0);
	r = po_sys(fd = open("t", O_WRONLY | O_TRUNC));
	stat("t", &s1);
	PO_CHECK("open.trunc", r < 0 ? r : 0, "%s mtime=%s ctime=%s",
		po_lstat_str("t", st, sizeof(st)),
		po_ts_cmp(s1.st_mtim, s0.st_mtim) > 0 ? "advanced" : "same",
		po_ts_cmp(s1.st_ctim, s0.st_ctim) >= 0 ? "advanced" : "older");
	if (fd >= 0)
		close(fd);

	po_write_file("t", "hello", 5, 0644);
	r = po_sys(fd = open("t", O_RDONLY | O_TRUNC));
	PO_CHECK("open.rdonly_trunc", r < 0 ? r : 0, "%s",
		po_lstat_str("t", st, sizeof(st)));
	if (fd >= 0)
		close(fd);

	po_write_file("t", "abcdefghij", 10, 0644);
	po_age("t");
	stat("t", &s0);
	r = po_sys(truncate("t", 100000));
	stat("t", &s1);
	PO_CHECK("truncate.grow", r, "%s %s mtime=%s",
		po_lstat_str("t", st, sizeof(st)),
		po_hash_path("t", h, sizeof(h)),
		po_ts_cmp(s1.st_mtim, s0.st_mtim) > 0 ? "advanced" : "same");
	fd = open("t", O_RDWR);
	PO_CHECK("ftruncate.shrink", po_sys(ftruncate(fd, 3)), "%s",
		po_fstat_str(fd, st, sizeof(st)));
	memset(buf, 0, sizeof(buf));
	PO_CHECK("pread.after_shrink", po_sys(pread(fd, buf, sizeof(buf), 0)),
		"data=%s", buf);
	PO_CHECK("ftruncate.grow", po_sys(ftruncate(fd, 4099)), "%s %s",
		po_fstat_str(fd, st, sizeof(st)),
		po_hash_path("t", h, sizeof(h)));
	PO_CHECK("ftruncate.negative", po_sys(ftruncate(fd, -1)), NULL);
	close(fd);
	fd = open("t", O_RDONLY);
	PO_CHECK("ftruncate.rdonly_fd", po_sys(ftruncate(fd, 0)), NULL);
	close(fd);
	PO_CHECK("truncate.dir", po_sys(truncate("d", 0)), NULL);
	PO_CHECK("truncate.missing", po_sys(truncate("nope", 0)), NULL);
	PO_CHECK("truncate.zero", po_sys(truncate("t", 0)), "%s",
		po_lstat_str("t", st, sizeof(st)));
	po_read_file("t", buf, sizeof(buf), &got);
	po_note("read.after_zero", "got=%zu", got);
}

static void po_files_umask(void)
{
	static const struct {
		mode_t mask, mode;
		int dir;
	} cases[] = {
		{ 022, 0777, 1 }, { 077, 0777, 1 }, { 0, 01777, 1 },
		{ 027, 0666, 0 }, { 0, 0666, 0 }, { 0777, 0666, 0 },
		{ 022, 04755, 0 },
	};
	char name[32], st[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		long r;

		umask(cases[i].mask);
		snprintf(name, sizeof(name), "um%zu", i);
		if (cases[i].dir) {
			r = po_sys(mkdir(name, cases[i].mode));
		} else {
			int fd;

			r = po_sys(fd = open(name, O_WRONLY | O_CREAT,
					     cases[i].mode));
			if (fd >= 0) {
				close(fd);
				r = 0;
			}
		}
		PO_CHECK(cases[i].dir ? "mkdir.umask" : "creat.umask", r,
			"umask=%03o want=%04o %s", cases[i].mask, cases[i].mode,
			po_lstat_str(name, st, sizeof(st)));
	}
	umask(022);
	PO_CHECK("mkdir.existing", po_sys(mkdir("um0", 0755)), NULL);
	PO_CHECK("mkdir.missing_parent", po_sys(mkdir("nope/x", 0755)), NULL);
	PO_CHECK("mkdir.below_file", po_sys(mkdir("f/x", 0755)), NULL);
}

#define PO_WRITERS 4
#define PO_RECORDS 300
#define PO_RECLEN 64

static void po_files_appender(void *arg)
{
	int id = *(int *)arg;
	char rec[PO_RECLEN + 1];
	int fd = open("app", O_WRONLY | O_APPEND);

	if (fd < 0)
		_exit(1);
	for (int i = 0; i < PO_RECORDS; i++) {
		memset(rec, ' ', PO_RECLEN);
		rec[snprintf(rec, sizeof(rec), "writer %d record %04d", id,
			     i)] = ' ';
		rec[PO_RECLEN - 1] = '\n';
		if (write(fd, rec, PO_RECLEN) != PO_RECLEN)
			_exit(1);
	}
	close(fd);
}

static void po_files_append(void)
{
	static char seen[PO_WRITERS][PO_RECORDS];
	pid_t pids[PO_WRITERS];
	char rec[PO_RECLEN + 1], st[256];
	int fd, intact = 1, all = 1, bad_exit = 0;
	long records = 0;
	FILE *f;

	po_write_file("app", "", 0, 0644);
	fflush(stdout);
	for (int i = 0; i < PO_WRITERS; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			po_files_appender(&i);
			_exit(0);
		}
	}
	for (int i = 0; i < PO_WRITERS; i++) {
		int status;

		if (waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			bad_exit = 1;
	}
	f = fopen("app", "r");
	while (f && fgets(rec, sizeof(rec), f)) {
		int w, n;

		records++;
		if (strlen(rec) != PO_RECLEN ||
		    sscanf(rec, "writer %d record %d", &w, &n) != 2 || w < 0 ||
		    w >= PO_WRITERS || n < 0 || n >= PO_RECORDS || seen[w][n])
			intact = 0;
		else
			seen[w][n] = 1;
	}
	if (f)
		fclose(f);
	for (int w = 0; w < PO_WRITERS; w++)
		for (int n = 0; n < PO_RECORDS; n++)
			all &= seen[w][n];
	po_note("append.concurrent",
		"%s records=%ld intact=%s all_present=%s writers_ok=%s",
		po_lstat_str("app", st, sizeof(st)), records,
		intact ? "yes" : "no", all ? "yes" : "no",
		bad_exit ? "no" : "yes");

	/* O_APPEND moves every write to the end, even after lseek */
	fd = open("app", O_WRONLY | O_APPEND);
	lseek(fd, 0, SEEK_SET);
	write(fd, "tail\n", 5);
	PO_CHECK("append.after_lseek", po_sys(lseek(fd, 0, SEEK_CUR)), "%s",
		po_fstat_str(fd, st, sizeof(st)));
	PO_CHECK("append.pwrite_ignores_offset", po_sys(pwrite(fd, "P", 1, 0)),
		"%s", po_fstat_str(fd, st, sizeof(st)));
	close(fd);
}

static void po_files_unlinked_open(void)
{
	char st[256], buf[64];
	int fd, fd2;

	po_write_file("u", "before", 6, 0644);
	fd = open("u", O_RDWR);
	PO_CHECK("unlink.open_file", po_sys(unlink("u")), "path=%s",
		po_lstat_str("u", st, sizeof(st)));
	po_note("fstat.after_unlink", "%s", po_fstat_str(fd, st, sizeof(st)));
	memset(buf, 0, sizeof(buf));
	PO_CHECK("pread.after_unlink", po_sys(pread(fd, buf, sizeof(buf), 0)),
		"data=%s", buf);
	PO_CHECK("pwrite.after_unlink", po_sys(pwrite(fd, " after", 6, 6)),
		"%s", po_fstat_str(fd, st, sizeof(st)));
	memset(buf, 0, sizeof(buf));
	PO_CHECK("pread.after_write", po_sys(pread(fd, buf, sizeof(buf), 0)),
		"data=%s", buf);
	PO_CHECK("ftruncate.after_unlink", po_sys(ftruncate(fd, 2)), "%s",
		po_fstat_str(fd, st, sizeof(st)));
	PO_CHECK("fchmod.after_unlink", po_sys(fchmod(fd, 0600)), "%s",
		po_fstat_str(fd, st, sizeof(st)));
	/* a new file under the old name is a different file */
	po_write_file("u", "new", 3, 0644);
	memset(buf, 0, sizeof(buf));
	PO_CHECK("pread.old_fd_after_recreate",
		po_sys(pread(fd, buf, sizeof(buf), 0)), "data=%s", buf);
	close(fd);

	/* unlinking one of two names leaves the other intact */
	po_write_file("u2", "shared", 6, 0644);
	link("u2", "u2b");
	fd = open("u2", O_RDWR);
	PO_CHECK("unlink.one_of_two_names", po_sys(unlink("u2")), "%s",
		po_fstat_str(fd, st, sizeof(st)));
	fd2 = open("u2b", O_RDONLY);
	pwrite(fd, "SH", 2, 0);
	memset(buf, 0, sizeof(buf));
	PO_CHECK("pread.other_name", po_sys(pread(fd2, buf, sizeof(buf), 0)),
		"data=%s", buf);
	close(fd2);
	close(fd);
}

/* Permissions are checked at open: an fd stays usable after chmod, and a
 * file created read-only is writable through the fd that created it (cp,
 * tar and git rely on both). */
static void po_files_fd_perms(void)
{
	char st[256], h[64];
	int fd;

	fd = open("ro", O_WRONLY | O_CREAT | O_EXCL, 0444);
	PO_CHECK("open.creat_mode_0444", fd < 0 ? -errno : 0, "%s",
		 po_lstat_str("ro", st, sizeof(st)));
	if (fd >= 0) {
		PO_CHECK("write.created_0444", po_sys(write(fd, "data", 4)), NULL);
		PO_CHECK("ftruncate.created_0444", po_sys(ftruncate(fd, 2)),
			 "%s", po_fstat_str(fd, st, sizeof(st)));
		PO_CHECK("fallocate.created_0444",
			 po_sys(fallocate(fd, 0, 0, 4096)), NULL);
		PO_CHECK("fsync.created_0444", po_sys(fsync(fd)), NULL);
		close(fd);
	}
	PO_CHECK("open.existing_0444_for_write",
		 po_open_ret("ro", O_WRONLY), NULL);
	po_write_file("fp", "before", 6, 0644);
	fd = open("fp", O_RDWR);
	PO_CHECK("fchmod.to_0000_while_open", po_sys(fchmod(fd, 0)), NULL);
	PO_CHECK("pwrite.after_chmod_0000", po_sys(pwrite(fd, "AFTER!", 6, 0)),
		 NULL);
	PO_CHECK("ftruncate.after_chmod_0000", po_sys(ftruncate(fd, 3)), "%s",
		 po_fstat_str(fd, st, sizeof(st)));
	PO_CHECK("fsetxattr.after_chmod_0000",
		 po_sys(fsetxattr(fd, "user.p", "1", 1, 0)), NULL);
	close(fd);
	chmod("fp", 0644);
	PO_CHECK("read.after_chmod_0000", 0, "%s",
		 po_hash_path("fp", h, sizeof(h)));
	fd = open("fp", O_PATH);
	PO_CHECK("fchmod.o_path_fd", po_sys(fchmod(fd, 0600)), NULL);
	PO_CHECK("read.o_path_fd", po_sys(read(fd, h, 1)), NULL);
	close(fd);
}

/* O_TMPFILE: an unnamed file in a directory, later given a name. */
static void po_files_tmpfile(void)
{
	char st[256], proc[64];
	int fd = open(".", O_TMPFILE | O_RDWR, 0640);

	PO_CHECK("open.o_tmpfile", fd < 0 ? -errno : 0, NULL);
	if (fd < 0) {
		/* keep the transcript's shape: the same lines either way */
		long err = -errno;

		PO_CHECK("write.o_tmpfile", err, NULL);
		PO_CHECK("linkat.o_tmpfile", err, NULL);
		return;
	}
	PO_CHECK("write.o_tmpfile", po_sys(write(fd, "tmp", 3)), "%s",
		 po_fstat_str(fd, st, sizeof(st)));
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	PO_CHECK("linkat.o_tmpfile",
		 po_sys(linkat(AT_FDCWD, proc, AT_FDCWD, "named-tmp",
			       AT_SYMLINK_FOLLOW)),
		 "%s", po_lstat_str("named-tmp", st, sizeof(st)));
	close(fd);
}

void po_files_run(void)
{
	po_files_open_flags();
	po_files_trunc();
	po_files_umask();
	po_files_append();
	po_files_unlinked_open();
	po_files_fd_perms();
	po_files_tmpfile();
}
