/* posix_ops battery "names": the namespace: hard links and their counts,
 * symlinks, rename with its flags and error cases, rmdir/unlink errors,
 * and readdir with telldir/seekdir and removal while iterating. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "posix_ops.h"

static const char *po_names_content(const char *path, char *buf, size_t size)
{
	char data[128];
	size_t got;
	int r = po_read_file(path, data, sizeof(data) - 1, &got);

	data[got] = '\0';
	if (r < 0)
		snprintf(buf, size, "content=%s", po_errname(-r));
	else
		snprintf(buf, size, "content=%s", data);
	return buf;
}

static void po_names_links(void)
{
	char a[256], b[256];

	po_write_file("h", "one", 3, 0644);
	PO_CHECK("link", po_sys(link("h", "h2")), "%s | %s",
		po_lstat_str("h", a, sizeof(a)), po_lstat_str("h2", b, sizeof(b)));
	po_write_file("h2", "two", 3, 0644);
	po_note("link.shared_data", "%s", po_names_content("h", a, sizeof(a)));
	PO_CHECK("link.third", po_sys(link("h2", "h3")), "%s",
		po_lstat_str("h", a, sizeof(a)));
	PO_CHECK("link.existing", po_sys(link("h", "h3")), NULL);
	PO_CHECK("link.missing", po_sys(link("nope", "h4")), NULL);
	mkdir("ld", 0755);
	PO_CHECK("link.dir", po_sys(link("ld", "ld2")), NULL);
	PO_CHECK("link.into_missing_dir", po_sys(link("h", "nope/h")), NULL);
	PO_CHECK("unlink.one_link", po_sys(unlink("h3")), "%s",
		po_lstat_str("h", a, sizeof(a)));
	PO_CHECK("link.into_subdir", po_sys(link("h", "ld/h")), "%s",
		po_lstat_str("ld/h", a, sizeof(a)));
	PO_CHECK("unlink.missing", po_sys(unlink("nope")), NULL);
	PO_CHECK("unlink.dir", po_sys(unlink("ld")), NULL);
	/* directory link counts follow subdirectories */
	mkdir("ld/s1", 0755);
	mkdir("ld/s2", 0755);
	po_note("dir.nlink_two_subdirs", "%s", po_lstat_str("ld", a, sizeof(a)));
	rmdir("ld/s2");
	po_note("dir.nlink_after_rmdir", "%s", po_lstat_str("ld", a, sizeof(a)));
}

static void po_names_symlinks(void)
{
	char a[256], buf[2048], longt[1100];
	ssize_t n;
	int fd;

	po_write_file("target", "target data", 11, 0644);
	PO_CHECK("symlink", po_sys(symlink("target", "sl")), "%s",
		po_lstat_str("sl", a, sizeof(a)));
	memset(buf, 0, sizeof(buf));
	n = po_sys(readlink("sl", buf, sizeof(buf)));
	PO_CHECK("readlink", n, "value=%s", n > 0 ? buf : "");
	memset(buf, 0, sizeof(buf));
	n = po_sys(readlink("sl", buf, 3));
	PO_CHECK("readlink.short_buffer", n, "value=%.3s", buf);
	{
		struct stat s;

		PO_CHECK("stat.follows", po_sys(stat("sl", &s)), "size=%lld",
			(long long)s.st_size);
	}
	PO_CHECK("readlink.regular_file", po_sys(readlink("target", buf, 10)),
		NULL);
	PO_CHECK("symlink.dangling", po_sys(symlink("no/such/target", "dg")),
		"%s", po_lstat_str("dg", a, sizeof(a)));
	{
		struct stat s;

		PO_CHECK("stat.dangling", po_sys(stat("dg", &s)), NULL);
	}
	PO_CHECK("symlink.existing", po_sys(symlink("x", "sl")), NULL);
	symlink("made-by-open", "dg2");
	fd = open("dg2", O_WRONLY | O_CREAT, 0600);
	PO_CHECK("open.creat_through_dangling", fd < 0 ? -errno : 0, "%s",
		po_lstat_str("made-by-open", a, sizeof(a)));
	if (fd >= 0)
		close(fd);
	fd = open("sl", O_WRONLY | O_CREAT | O_EXCL, 0600);
	PO_CHECK("open.excl_on_symlink", fd < 0 ? -errno : 0, NULL);
	if (fd >= 0)
		close(fd);
	symlink("loop2", "loop1");
	symlink("loop1", "loop2");
	fd = open("loop1", O_RDONLY);
	PO_CHECK("open.symlink_loop", fd < 0 ? -errno : 0, NULL);
	if (fd >= 0)
		close(fd);
	memset(longt, 'x', 1000);
	longt[1000] = '\0';
	PO_CHECK("symlink.long_target", po_sys(symlink(longt, "slong")), "%s",
		po_lstat_str("slong", a, sizeof(a)));
	n = po_sys(readlink("slong", buf, sizeof(buf)));
	PO_CHECK("readlink.long_target", n, NULL);
	PO_CHECK("symlink.absolute", po_sys(symlink("/nonexistent/abs", "sabs")),
		"%s", po_lstat_str("sabs", a, sizeof(a)));
	mkdir("sdir", 0755);
	po_write_file("sdir/inside", "in", 2, 0644);
	symlink("sdir", "sldir");
	po_note("symlink.through_dir", "%s",
		po_names_content("sldir/inside", a, sizeof(a)));
	PO_CHECK("unlink.symlink_keeps_target", po_sys(unlink("sl")), "%s",
		po_lstat_str("target", a, sizeof(a)));
	PO_CHECK("rmdir.symlink_to_dir", po_sys(rmdir("sldir")), NULL);
}

static void po_names_rename(void)
{
	char a[256], b[256];
	int fd;

	po_write_file("ra", "A", 1, 0644);
	po_write_file("rb", "B", 1, 0644);
	PO_CHECK("rename.simple", po_sys(rename("ra", "rc")), "%s old=%s",
		po_names_content("rc", a, sizeof(a)),
		po_lstat_str("ra", b, sizeof(b)));
	PO_CHECK("rename.over_file", po_sys(rename("rc", "rb")), "%s",
		po_names_content("rb", a, sizeof(a)));
	po_write_file("rn", "N", 1, 0644);
	PO_CHECK("rename.noreplace_existing",
		po_sys(renameat2(AT_FDCWD, "rn", AT_FDCWD, "rb",
				 RENAME_NOREPLACE)),
		"%s", po_names_content("rb", a, sizeof(a)));
	PO_CHECK("rename.noreplace_new",
		po_sys(renameat2(AT_FDCWD, "rn", AT_FDCWD, "rn2",
				 RENAME_NOREPLACE)),
		"%s", po_names_content("rn2", a, sizeof(a)));
	PO_CHECK("rename.exchange",
		po_sys(renameat2(AT_FDCWD, "rn2", AT_FDCWD, "rb",
				 RENAME_EXCHANGE)),
		"rn2 %s rb %s", po_names_content("rn2", a, sizeof(a)),
		po_names_content("rb", b, sizeof(b)));
	mkdir("xd", 0755);
	po_write_file("xd/in", "IN", 2, 0644);
	PO_CHECK("rename.exchange_file_dir",
		po_sys(renameat2(AT_FDCWD, "rb", AT_FDCWD, "xd",
				 RENAME_EXCHANGE)),
		"rb=%s xd=%s", po_lstat_str("rb", a, sizeof(a)),
		po_lstat_str("xd", b, sizeof(b)));
	po_note("rename.exchanged_dir_content", "%s",
		po_names_content("rb/in", a, sizeof(a)));
	PO_CHECK("rename.exchange_missing",
		po_sys(renameat2(AT_FDCWD, "rn2", AT_FDCWD, "nope",
				 RENAME_EXCHANGE)),
		NULL);
	PO_CHECK("rename.both_flags",
		po_sys(renameat2(AT_FDCWD, "rn2", AT_FDCWD, "xd",
				 RENAME_EXCHANGE | RENAME_NOREPLACE)),
		NULL);
	PO_CHECK("rename.missing", po_sys(rename("nope", "x")), NULL);

	mkdir("D1", 0755);
	mkdir("D2", 0755);
	mkdir("D3", 0755);
	po_write_file("D3/f", "f", 1, 0644);
	po_write_file("F", "F", 1, 0644);
	PO_CHECK("rename.file_over_dir", po_sys(rename("F", "D1")), NULL);
	PO_CHECK("rename.dir_over_file", po_sys(rename("D1", "F")), NULL);
	PO_CHECK("rename.dir_over_empty_dir", po_sys(rename("D1", "D2")),
		"D1=%s D2=%s", po_lstat_str("D1", a, sizeof(a)),
		po_lstat_str("D2", b, sizeof(b)));
	PO_CHECK("rename.dir_over_nonempty_dir", po_sys(rename("D2", "D3")),
		NULL);
	mkdir("D2/sub", 0755);
	PO_CHECK("rename.dir_into_own_subdir", po_sys(rename("D2", "D2/sub/x")),
		NULL);
	PO_CHECK("rename.dot", po_sys(rename(".", "x")), NULL);
	PO_CHECK("rename.into_missing_dir", po_sys(rename("F", "nope/F")), NULL);
	po_note("rename.parent_nlink_before", "%s",
		po_lstat_str(".", a, sizeof(a)));
	PO_CHECK("rename.dir_across", po_sys(rename("D3", "D2/sub/D3")),
		"moved=%s parent=%s",
		po_names_content("D2/sub/D3/f", a, sizeof(a)),
		po_lstat_str("D2/sub", b, sizeof(b)));
	po_note("rename.parent_nlink_after", "%s",
		po_lstat_str(".", a, sizeof(a)));
	{
		struct stat dd, np;

		stat("D2/sub/D3/..", &dd);
		stat("D2/sub", &np);
		po_note("rename.dotdot_is_new_parent", "%s",
			dd.st_ino == np.st_ino && dd.st_dev == np.st_dev ? "yes"
									 : "no");
	}
	PO_CHECK("rename.dir_back_and_read",
		po_sys(rename("D2/sub/D3", "D3b")), "%s",
		po_names_content("D3b/f", a, sizeof(a)));

	/* renaming onto another name of the same file does nothing */
	po_write_file("same", "S", 1, 0644);
	link("same", "same2");
	PO_CHECK("rename.same_inode", po_sys(rename("same", "same2")),
		"same=%s same2=%s", po_lstat_str("same", a, sizeof(a)),
		po_lstat_str("same2", b, sizeof(b)));
	/* an open file follows its rename */
	po_write_file("open1", "x", 1, 0644);
	fd = open("open1", O_RDWR);
	rename("open1", "open2");
	PO_CHECK("pwrite.after_rename", po_sys(pwrite(fd, "moved", 5, 0)), "%s",
		po_names_content("open2", a, sizeof(a)));
	close(fd);
	/* rename over an open file: the old fd keeps the old data */
	po_write_file("victim", "old", 3, 0644);
	po_write_file("newer", "new", 3, 0644);
	fd = open("victim", O_RDONLY);
	rename("newer", "victim");
	memset(a, 0, sizeof(a));
	PO_CHECK("pread.replaced_file", po_sys(pread(fd, a, 10, 0)),
		"data=%s now=%s", a, po_names_content("victim", b, sizeof(b)));
	close(fd);
}

/* Path and name length limits. */
static void po_names_limits(void)
{
	char path[5000], name[300], target[5000];
	size_t len = 0;

	memset(name, 'a', 256);
	name[256] = '\0';
	PO_CHECK("mkdir.name_256", po_sys(mkdir(name, 0755)), NULL);
	PO_CHECK("symlink.name_256", po_sys(symlink("x", name)), NULL);
	PO_CHECK("link.name_256", po_sys(link("h", name)), NULL);
	PO_CHECK("rename.to_name_256", po_sys(rename("h", name)), NULL);
	name[255] = '\0';
	PO_CHECK("mkdir.name_255", po_sys(mkdir(name, 0755)), NULL);
	PO_CHECK("rmdir.name_255", po_sys(rmdir(name)), NULL);
	while (len + 10 < sizeof(path) - 1) {
		memcpy(path + len, "component/", 10);
		len += 10;
	}
	path[len] = '\0';
	PO_CHECK("stat.path_over_path_max",
		 po_sys(access(path, F_OK)), "len=%zu", len);
	memset(target, 't', 4095);
	target[4095] = '\0';
	PO_CHECK("symlink.target_4095", po_sys(symlink(target, "lt4095")), NULL);
	target[4094] = '\0';
	PO_CHECK("symlink.target_4094", po_sys(symlink(target, "lt4094")),
		 "readlink=%ld", po_sys(readlink("lt4094", path, sizeof(path))));
	memset(target, 't', 4096);
	target[4096] = '\0';
	PO_CHECK("symlink.target_4096", po_sys(symlink(target, "lt4096")), NULL);
}

static void po_names_dirs(void)
{
	char a[256];

	mkdir("ne", 0755);
	po_write_file("ne/f", "x", 1, 0644);
	PO_CHECK("rmdir.nonempty", po_sys(rmdir("ne")), NULL);
	PO_CHECK("rmdir.file", po_sys(rmdir("ne/f")), NULL);
	PO_CHECK("rmdir.missing", po_sys(rmdir("nope")), NULL);
	PO_CHECK("rmdir.dot", po_sys(rmdir("ne/.")), NULL);
	PO_CHECK("unlink.below_file", po_sys(unlink("ne/f/x")), NULL);
	PO_CHECK("mkdir.nested", po_sys(mkdir("ne/a", 0755)), "%s",
		po_lstat_str("ne", a, sizeof(a)));
	unlink("ne/f");
	rmdir("ne/a");
	PO_CHECK("rmdir.emptied", po_sys(rmdir("ne")), "%s",
		po_lstat_str("ne", a, sizeof(a)));
	mkdir("gone", 0755);
	if (chdir("gone") == 0) {
		int fd;

		rmdir("../gone");
		fd = open("x", O_WRONLY | O_CREAT, 0644);
		PO_CHECK("open.creat_in_removed_cwd", fd < 0 ? -errno : 0, NULL);
		if (fd >= 0)
			close(fd);
		if (chdir("..") < 0)
			abort();
	}
}

#define PO_NENT 300

static void po_names_readdir(void)
{
	static char names[PO_NENT + 2][32];
	static long pos[PO_NENT + 2];
	char p[64], st[256];
	int n = 0, dtype_ok = 1, again = 0, match;
	uint64_t h = 0;
	struct dirent *de;
	DIR *d;

	mkdir("rd", 0755);
	for (int i = 0; i < PO_NENT; i++) {
		snprintf(p, sizeof(p), "rd/entry-%03d", i);
		if (i % 10 == 0)
			mkdir(p, 0755);
		else if (i % 10 == 1)
			symlink("x", p);
		else
			po_write_file(p, "", 0, 0644);
	}
	d = opendir("rd");
	if (!d) {
		PO_CHECK("opendir", -errno, NULL);
		return;
	}
	for (;;) {
		long here = telldir(d);
		struct stat s;

		de = readdir(d);
		if (!de)
			break;
		if (n < PO_NENT + 2) {
			pos[n] = here;
			snprintf(names[n], sizeof(names[n]), "%s", de->d_name);
		}
		n++;
		h ^= po_hash_bytes(de->d_name, strlen(de->d_name));
		snprintf(p, sizeof(p), "rd/%s", de->d_name);
		if (lstat(p, &s) == 0 && de->d_type != DT_UNKNOWN &&
		    (mode_t)DTTOIF(de->d_type) != (s.st_mode & S_IFMT))
			dtype_ok = 0;
	}
	po_note("readdir", "entries=%d names=%016llx dtypes=%s", n,
		(unsigned long long)h, dtype_ok ? "match" : "wrong");
	match = 1;
	for (int k = n - 1; k >= 0 && k < PO_NENT + 2; k -= 37) {
		seekdir(d, pos[k]);
		de = readdir(d);
		if (!de || strcmp(de->d_name, names[k]) != 0)
			match = 0;
	}
	po_note("seekdir.telldir", "%s", match ? "match" : "mismatch");
	rewinddir(d);
	while (readdir(d))
		again++;
	po_note("rewinddir", "entries=%d", again);
	closedir(d);

	/* rm -rf's pattern: remove entries while reading the directory */
	d = opendir("rd");
	again = 0;
	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "rd/%s", de->d_name);
		if (unlink(p) == 0 || rmdir(p) == 0)
			again++;
	}
	if (d)
		closedir(d);
	po_note("readdir.remove_while_reading", "removed=%d", again);
	PO_CHECK("rmdir.after_remove_all", po_sys(rmdir("rd")), "%s",
		po_lstat_str("rd", st, sizeof(st)));
	d = opendir("nope");
	PO_CHECK("opendir.missing", d ? 0 : -errno, NULL);
	if (d)
		closedir(d);
	d = opendir("target");
	PO_CHECK("opendir.file", d ? 0 : -errno, NULL);
	if (d)
		closedir(d);
}

void po_names_run(void)
{
	po_names_links();
	po_names_symlinks();
	po_names_rename();
	po_names_dirs();
	po_names_limits();
	po_names_readdir();
}
