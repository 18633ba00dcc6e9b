/* posix_ops battery "meta": metadata of files the caller owns: xattrs,
 * chmod/chown, setuid/setgid clearing, utimensat with UTIME_NOW/OMIT,
 * access() and statfs. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "posix_ops.h"

/* The user.* names of path, sorted, comma separated. */
static const char *po_meta_list(const char *path, char *out, size_t size)
{
	char buf[4096], *names[64];
	ssize_t n = llistxattr(path, buf, sizeof(buf));
	int k = 0;

	if (n < 0) {
		snprintf(out, size, "list=%s", po_errname(errno));
		return out;
	}
	for (char *p = buf; p < buf + n && k < 64; p += strlen(p) + 1)
		if (!strncmp(p, "user.", 5) || !strncmp(p, "trusted.", 8))
			names[k++] = p;
	for (int i = 1; i < k; i++)
		for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
			char *t = names[j];

			names[j] = names[j - 1];
			names[j - 1] = t;
		}
	snprintf(out, size, "list=");
	for (int i = 0; i < k; i++) {
		size_t len = strlen(out);

		snprintf(out + len, size - len, "%s%s", i ? "," : "", names[i]);
	}
	return out;
}

static void po_meta_xattr(void)
{
	char l[512], v[8192];
	long r;

	po_write_file("x", "x", 1, 0644);
	PO_CHECK("setxattr.user", po_sys(setxattr("x", "user.a", "1", 1, 0)),
		NULL);
	PO_CHECK("setxattr.user2", po_sys(setxattr("x", "user.b", "22", 2, 0)),
		"%s", po_meta_list("x", l, sizeof(l)));
	memset(v, 0, sizeof(v));
	r = po_sys(getxattr("x", "user.b", v, sizeof(v)));
	PO_CHECK("getxattr", r, "value=%s", r > 0 ? v : "");
	PO_CHECK("getxattr.size_query", po_sys(getxattr("x", "user.b", NULL, 0)),
		NULL);
	PO_CHECK("getxattr.small_buffer", po_sys(getxattr("x", "user.b", v, 1)),
		NULL);
	PO_CHECK("getxattr.missing", po_sys(getxattr("x", "user.zz", v, 10)),
		NULL);
	PO_CHECK("setxattr.create_existing",
		po_sys(setxattr("x", "user.a", "9", 1, XATTR_CREATE)), NULL);
	PO_CHECK("setxattr.replace_missing",
		po_sys(setxattr("x", "user.c", "9", 1, XATTR_REPLACE)), NULL);
	PO_CHECK("setxattr.replace_existing",
		po_sys(setxattr("x", "user.a", "333", 3, XATTR_REPLACE)), NULL);
	memset(v, 0, sizeof(v));
	r = po_sys(getxattr("x", "user.a", v, sizeof(v)));
	PO_CHECK("getxattr.replaced", r, "value=%s", r > 0 ? v : "");
	PO_CHECK("setxattr.empty_value", po_sys(setxattr("x", "user.e", "", 0, 0)),
		"size=%ld", po_sys(getxattr("x", "user.e", NULL, 0)));
	po_pattern(v, 4000, 5);
	PO_CHECK("setxattr.4000_bytes", po_sys(setxattr("x", "user.big", v, 4000, 0)),
		NULL);
	memset(v, 0, sizeof(v));
	r = po_sys(getxattr("x", "user.big", v, sizeof(v)));
	PO_CHECK("getxattr.4000_bytes", r, "data=%016llx",
		(unsigned long long)po_hash_bytes(v, r > 0 ? (size_t)r : 0));
	/* one 4 KiB block holds all of a file's xattrs on ext4: make room */
	PO_CHECK("removexattr.4000_bytes", po_sys(removexattr("x", "user.big")),
		 NULL);
	PO_CHECK("setxattr.bad_namespace",
		po_sys(setxattr("x", "bogus.a", "1", 1, 0)), NULL);
	{
		char name[300] = "user.";

		memset(name + 5, 'n', 260);
		name[265] = '\0';
		PO_CHECK("setxattr.name_too_long",
			po_sys(setxattr("x", name, "1", 1, 0)), NULL);
	}
	PO_CHECK("listxattr.size_query", po_sys(listxattr("x", NULL, 0)) > 0,
		NULL);
	PO_CHECK("listxattr.small_buffer", po_sys(listxattr("x", l, 2)), NULL);
	PO_CHECK("removexattr", po_sys(removexattr("x", "user.a")), "%s",
		po_meta_list("x", l, sizeof(l)));
	PO_CHECK("removexattr.missing", po_sys(removexattr("x", "user.a")),
		NULL);
	mkdir("xd", 0755);
	PO_CHECK("setxattr.dir", po_sys(setxattr("xd", "user.d", "dir", 3, 0)),
		"%s", po_meta_list("xd", l, sizeof(l)));
	symlink("x", "xl");
	PO_CHECK("lsetxattr.user_on_symlink",
		po_sys(lsetxattr("xl", "user.l", "1", 1, 0)), NULL);
	PO_CHECK("setxattr.through_symlink",
		po_sys(setxattr("xl", "user.t", "1", 1, 0)), "%s",
		po_meta_list("x", l, sizeof(l)));
	mkfifo("xp", 0644);
	PO_CHECK("setxattr.user_on_fifo",
		po_sys(lsetxattr("xp", "user.p", "1", 1, 0)), NULL);
	PO_CHECK("setxattr.trusted",
		po_sys(setxattr("x", "trusted.t", "1", 1, 0)), "%s",
		po_meta_list("x", l, sizeof(l)));
	{
		int fd = open("x", O_RDONLY);

		PO_CHECK("fsetxattr.rdonly_fd",
			po_sys(fsetxattr(fd, "user.f", "1", 1, 0)), NULL);
		memset(v, 0, sizeof(v));
		r = po_sys(fgetxattr(fd, "user.f", v, sizeof(v)));
		PO_CHECK("fgetxattr", r, "value=%s", r > 0 ? v : "");
		PO_CHECK("fremovexattr", po_sys(fremovexattr(fd, "user.f")), NULL);
		close(fd);
	}
	PO_CHECK("getxattr.missing_file", po_sys(getxattr("nope", "user.a", v, 10)),
		NULL);
}

static void po_meta_modes(void)
{
	char st[256];
	int fd;

	po_write_file("m", "#!/bin/sh\n", 10, 0644);
	PO_CHECK("chmod", po_sys(chmod("m", 0751)), "%s",
		po_lstat_str("m", st, sizeof(st)));
	PO_CHECK("chmod.all_bits", po_sys(chmod("m", 07777)), "%s",
		po_lstat_str("m", st, sizeof(st)));
	PO_CHECK("chmod.missing", po_sys(chmod("nope", 0644)), NULL);
	fd = open("m", O_RDONLY);
	PO_CHECK("fchmod.rdonly_fd", po_sys(fchmod(fd, 06755)), "%s",
		po_fstat_str(fd, st, sizeof(st)));
	close(fd);
	/* a write clears setuid (and setgid with group exec) unless the
	 * writer holds CAP_FSETID */
	fd = open("m", O_WRONLY);
	PO_CHECK("write.suid_file", po_sys(write(fd, "#", 1)), "%s",
		po_fstat_str(fd, st, sizeof(st)));
	close(fd);
	chmod("m", 06755);
	PO_CHECK("truncate.suid_file", po_sys(truncate("m", 5)), "%s",
		po_lstat_str("m", st, sizeof(st)));
	chmod("m", 06755);
	PO_CHECK("chown.same_owner_suid_file",
		po_sys(chown("m", geteuid(), getegid())), "%s",
		po_lstat_str("m", st, sizeof(st)));
	chmod("m", 02745);
	PO_CHECK("chown.sgid_no_group_exec",
		po_sys(chown("m", geteuid(), getegid())), "%s",
		po_lstat_str("m", st, sizeof(st)));
	PO_CHECK("chown.noop", po_sys(chown("m", (uid_t)-1, (gid_t)-1)), "%s",
		po_lstat_str("m", st, sizeof(st)));
	mkdir("md", 0755);
	PO_CHECK("chmod.dir_sticky", po_sys(chmod("md", 01777)), "%s",
		po_lstat_str("md", st, sizeof(st)));
	PO_CHECK("chmod.dir_setgid", po_sys(chmod("md", 02755)), "%s",
		po_lstat_str("md", st, sizeof(st)));
	po_write_file("md/inherit", "", 0, 0644);
	mkdir("md/sub", 0755);
	po_note("setgid_dir.file", "%s",
		po_lstat_str("md/inherit", st, sizeof(st)));
	po_note("setgid_dir.subdir", "%s", po_lstat_str("md/sub", st, sizeof(st)));
	symlink("m", "ml");
	PO_CHECK("lchown.symlink_self",
		po_sys(lchown("ml", geteuid(), getegid())), "%s",
		po_lstat_str("ml", st, sizeof(st)));
	PO_CHECK("fchmodat.nofollow_symlink",
		po_sys(fchmodat(AT_FDCWD, "ml", 0600, AT_SYMLINK_NOFOLLOW)), NULL);
	po_write_file("noperm", "secret", 6, 0000);
	fd = open("noperm", O_RDONLY);
	PO_CHECK("open.mode_0000", fd < 0 ? -errno : 0, NULL);
	if (fd >= 0)
		close(fd);
	PO_CHECK("access.r_0000", po_sys(access("noperm", R_OK)), NULL);
	PO_CHECK("access.w_0000", po_sys(access("noperm", W_OK)), NULL);
	PO_CHECK("access.x_0000", po_sys(access("noperm", X_OK)), NULL);
	PO_CHECK("access.f_0000", po_sys(access("noperm", F_OK)), NULL);
	chmod("noperm", 0755);
	PO_CHECK("access.x_0755", po_sys(access("noperm", X_OK)), NULL);
	chmod("noperm", 0644);
	PO_CHECK("access.x_0644", po_sys(access("noperm", X_OK)), NULL);
	PO_CHECK("access.missing", po_sys(access("nope", F_OK)), NULL);
	PO_CHECK("faccessat.eaccess_w",
		po_sys(faccessat(AT_FDCWD, "noperm", W_OK, AT_EACCESS)), NULL);
	mkdir("nox", 0644);
	po_write_file("nox/f", "", 0, 0644);
	chmod("nox", 0644);
	PO_CHECK("access.through_dir_without_x", po_sys(access("nox/f", F_OK)),
		NULL);
	chmod("nox", 0755);
}

static const char *po_meta_rel(struct timespec t, struct timespec given,
			       struct timespec before)
{
	if (po_ts_cmp(t, given) == 0)
		return "given";
	if (po_ts_cmp(t, before) >= 0)
		return "now";
	return "other";
}

static void po_meta_times(void)
{
	struct timespec given[2] = { { 1000000000, 500 }, { 1100000000, 700 } };
	struct timespec ts[2], t0;
	struct stat s, s0;
	int fd;

	po_write_file("tm", "t", 1, 0644);
	t0 = po_now();
	PO_CHECK("utimensat.given", po_sys(utimensat(AT_FDCWD, "tm", given, 0)),
		NULL);
	stat("tm", &s);
	po_note("times.given", "atime=%s mtime=%s",
		po_meta_rel(s.st_atim, given[0], t0),
		po_meta_rel(s.st_mtim, given[1], t0));
	t0 = po_now();
	ts[0].tv_nsec = UTIME_OMIT;
	ts[1].tv_nsec = UTIME_NOW;
	PO_CHECK("utimensat.omit_now", po_sys(utimensat(AT_FDCWD, "tm", ts, 0)),
		NULL);
	stat("tm", &s);
	po_note("times.omit_now", "atime=%s mtime=%s",
		po_meta_rel(s.st_atim, given[0], t0),
		po_meta_rel(s.st_mtim, given[1], t0));
	utimensat(AT_FDCWD, "tm", given, 0);
	t0 = po_now();
	ts[0].tv_nsec = UTIME_NOW;
	ts[1].tv_nsec = UTIME_OMIT;
	PO_CHECK("utimensat.now_omit", po_sys(utimensat(AT_FDCWD, "tm", ts, 0)),
		NULL);
	stat("tm", &s);
	po_note("times.now_omit", "atime=%s mtime=%s",
		po_meta_rel(s.st_atim, given[0], t0),
		po_meta_rel(s.st_mtim, given[1], t0));
	utimensat(AT_FDCWD, "tm", given, 0);
	t0 = po_now();
	PO_CHECK("utimensat.null", po_sys(utimensat(AT_FDCWD, "tm", NULL, 0)),
		NULL);
	stat("tm", &s);
	po_note("times.null", "atime=%s mtime=%s",
		po_meta_rel(s.st_atim, given[0], t0),
		po_meta_rel(s.st_mtim, given[1], t0));
	ts[0].tv_nsec = ts[1].tv_nsec = UTIME_OMIT;
	stat("tm", &s0);
	PO_CHECK("utimensat.omit_omit", po_sys(utimensat(AT_FDCWD, "tm", ts, 0)),
		"ctime=%s", (stat("tm", &s), po_ts_cmp(s.st_ctim, s0.st_ctim) == 0)
				    ? "unchanged" : "changed");
	ts[0].tv_sec = 0;
	ts[0].tv_nsec = 1000000000;
	ts[1].tv_nsec = UTIME_OMIT;
	PO_CHECK("utimensat.bad_nsec", po_sys(utimensat(AT_FDCWD, "tm", ts, 0)),
		NULL);
	symlink("tm", "tl");
	utimensat(AT_FDCWD, "tm", given, 0);
	PO_CHECK("utimensat.symlink_nofollow",
		po_sys(utimensat(AT_FDCWD, "tl", (struct timespec[2]){
			{ 1200000000, 0 }, { 1200000000, 0 } },
			AT_SYMLINK_NOFOLLOW)),
		"link_mtime=%s target_mtime=%s",
		(lstat("tl", &s), s.st_mtim.tv_sec == 1200000000) ? "given"
								 : "other",
		(stat("tm", &s0), po_ts_cmp(s0.st_mtim, given[1]) == 0)
			? "unchanged" : "changed");
	fd = open("tm", O_RDONLY);
	PO_CHECK("futimens.rdonly_fd", po_sys(futimens(fd, given)), NULL);
	close(fd);
	/* writing through an fd moves mtime and ctime forward */
	utimensat(AT_FDCWD, "tm", given, 0);
	stat("tm", &s0);
	t0 = po_now();
	fd = open("tm", O_WRONLY);
	PO_CHECK("write.moves_mtime", po_sys(write(fd, "w", 1)), NULL);
	close(fd);
	stat("tm", &s);
	po_note("times.after_write", "mtime=%s ctime=%s",
		po_meta_rel(s.st_mtim, given[1], t0),
		po_ts_cmp(s.st_ctim, s0.st_ctim) >= 0 ? "advanced" : "older");
	/* creating an entry moves the directory's mtime */
	mkdir("td", 0755);
	po_age("td");
	t0 = po_now();
	po_write_file("td/new", "", 0, 0644);
	stat("td", &s);
	po_note("times.dir_after_create", "mtime=%s",
		po_meta_rel(s.st_mtim, given[1], t0));
	po_age("td");
	t0 = po_now();
	unlink("td/new");
	stat("td", &s);
	po_note("times.dir_after_unlink", "mtime=%s",
		po_meta_rel(s.st_mtim, given[1], t0));
}

static void po_meta_statfs(void)
{
	struct statvfs v;
	struct statfs f;
	int fd;
	long r = po_sys(statvfs(".", &v));

	PO_CHECK("statvfs", r,
		"bsize>0=%d blocks>0=%d bfree<=blocks=%d bavail<=bfree=%d "
		"files>0=%d ffree<=files=%d namemax=%lu",
		v.f_bsize > 0, v.f_blocks > 0, v.f_bfree <= v.f_blocks,
		v.f_bavail <= v.f_bfree, v.f_files > 0, v.f_ffree <= v.f_files,
		v.f_namemax);
	fd = open(".", O_RDONLY | O_DIRECTORY);
	r = po_sys(fstatfs(fd, &f));
	PO_CHECK("fstatfs", r, "bsize>0=%d blocks>0=%d namelen=%ld",
		f.f_bsize > 0, f.f_blocks > 0, (long)f.f_namelen);
	close(fd);
	PO_CHECK("statvfs.missing", po_sys(statvfs("nope", &v)), NULL);
}

void po_meta_run(void)
{
	po_meta_xattr();
	po_meta_modes();
	po_meta_times();
	po_meta_statfs();
}
