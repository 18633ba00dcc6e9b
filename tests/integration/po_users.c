/* posix_ops battery "users": permissions across users: creation with the
 * caller's uid/gid/groups, setgid directories, permission errors on files
 * of others, sticky directories, setuid clearing. Root runs the
 * unprivileged part as user A (and B); others run it as themselves
 * against fixtures that root created beforehand (--fixtures). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "posix_ops.h"

#define FX "../../fx"

int po_users_fixtures(const char *dir)
{
	char p[4096];
	int r = 0;

#define PO_FX_DIR(name, mode, gid)                                       \
	do {                                                              \
		snprintf(p, sizeof(p), "%s/fx%s", dir, name);             \
		if (mkdir(p, 0700) < 0 || chown(p, 0, gid) < 0 ||         \
		    chmod(p, mode) < 0)                                   \
			r = -errno;                                       \
	} while (0)
#define PO_FX_FILE(name, data, mode)                                    \
	do {                                                              \
		snprintf(p, sizeof(p), "%s/fx%s", dir, name);             \
		if (po_write_file(p, data, strlen(data), 0600) < 0 ||     \
		    chown(p, 0, 0) < 0 || chmod(p, mode) < 0)             \
			r = -errno;                                       \
	} while (0)

	if (geteuid() != 0) {
		fprintf(stderr, "posix_ops: --fixtures needs root\n");
		return -EPERM;
	}
	PO_FX_DIR("", 0755, 0);
	PO_FX_FILE("/rootfile", "root data", 0644);
	PO_FX_FILE("/secret", "secret", 0600);
	PO_FX_DIR("/rootdir", 0755, 0);
	PO_FX_FILE("/rootdir/f", "f", 0644);
	PO_FX_DIR("/privdir", 0700, 0);
	PO_FX_DIR("/sticky", 01777, 0);
	PO_FX_FILE("/sticky/rootowned", "shared", 0666);
	PO_FX_FILE("/sticky/suidfile", "suid", 06777);
	PO_FX_DIR("/sgid", 02777, PO_GROUP_X);
	PO_FX_DIR("/grp", 0770, PO_GROUP_X);
	snprintf(p, sizeof(p), "%s/fx/rootfile", dir);
	if (setxattr(p, "user.r", "root", 4, 0) < 0)
		r = -errno;
	if (r < 0)
		fprintf(stderr, "posix_ops: fixtures in %s: %s\n", dir,
			strerror(-r));
	return r;
}

static void po_users_unpriv(void *arg)
{
	char st[256], v[64];
	struct timespec t[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
	long r;
	int fd;

	(void)arg;
	if (chdir("a") < 0) {
		po_note("unpriv", "cannot enter a: %s", po_errname(errno));
		return;
	}
	po_note("unpriv.ids", "uid=%u gid=%u", geteuid(), getegid());
	PO_CHECK("create.own", po_write_file("own", "mine", 4, 0644), "%s",
		po_lstat_str("own", st, sizeof(st)));
	PO_CHECK("mkdir.own", po_sys(mkdir("ownd", 0755)), "%s",
		po_lstat_str("ownd", st, sizeof(st)));
	PO_CHECK("open.others_0600", po_open_ret(FX "/secret", O_RDONLY),
		NULL);
	PO_CHECK("open.others_0644_for_write",
		po_open_ret(FX "/rootfile", O_WRONLY), NULL);
	PO_CHECK("access.others_r", po_sys(access(FX "/rootfile", R_OK)), NULL);
	PO_CHECK("access.others_w", po_sys(access(FX "/rootfile", W_OK)), NULL);
	PO_CHECK("chmod.others", po_sys(chmod(FX "/rootfile", 0777)), NULL);
	PO_CHECK("chown.others_to_self",
		po_sys(chown(FX "/rootfile", geteuid(), getegid())), NULL);
	PO_CHECK("chown.own_to_root", po_sys(chown("own", 0, (gid_t)-1)), NULL);
	PO_CHECK("chown.own_group_self", po_sys(chown("own", (uid_t)-1, getegid())),
		"%s", po_lstat_str("own", st, sizeof(st)));
	PO_CHECK("chown.own_group_x", po_sys(chown("own", (uid_t)-1, PO_GROUP_X)),
		"%s", po_lstat_str("own", st, sizeof(st)));
	PO_CHECK("chown.own_group_other", po_sys(chown("own", (uid_t)-1, 5555)),
		NULL);
	fd = open("own", O_RDONLY);
	PO_CHECK("fchown.own_to_other", po_sys(fchown(fd, 4444, (gid_t)-1)),
		NULL);
	close(fd);

	/* setgid directory of a group the caller may not be in */
	PO_CHECK("create.in_sgid_dir",
		po_write_file(FX "/sgid/file", "", 0, 0644), "%s",
		po_lstat_str(FX "/sgid/file", st, sizeof(st)));
	PO_CHECK("chmod.sgid_foreign_group",
		po_sys(chmod(FX "/sgid/file", 02755)), "%s",
		po_lstat_str(FX "/sgid/file", st, sizeof(st)));
	PO_CHECK("mkdir.in_sgid_dir", po_sys(mkdir(FX "/sgid/dir", 0755)), "%s",
		po_lstat_str(FX "/sgid/dir", st, sizeof(st)));
	PO_CHECK("create.in_group_dir",
		po_write_file(FX "/grp/file", "", 0, 0644), NULL);

	/* setuid and setgid bits fall on write and truncate */
	chmod("own", 06755);
	po_note("chmod.own_suid", "%s", po_lstat_str("own", st, sizeof(st)));
	fd = open("own", O_WRONLY);
	PO_CHECK("write.own_suid", po_sys(write(fd, "w", 1)), "%s",
		po_fstat_str(fd, st, sizeof(st)));
	close(fd);
	chmod("own", 06755);
	PO_CHECK("truncate.own_suid", po_sys(truncate("own", 1)), "%s",
		po_lstat_str("own", st, sizeof(st)));
	chmod("own", 06755);
	PO_CHECK("chown.own_suid_group_self",
		 po_sys(chown("own", (uid_t)-1, getegid())), "%s",
		 po_lstat_str("own", st, sizeof(st)));
	fd = open(FX "/sticky/suidfile", O_WRONLY);
	PO_CHECK("write.others_suid", fd < 0 ? -errno : po_sys(write(fd, "x", 1)),
		"%s", po_lstat_str(FX "/sticky/suidfile", st, sizeof(st)));
	if (fd >= 0)
		close(fd);

	/* sticky directory: others' entries stay */
	PO_CHECK("unlink.sticky_others", po_sys(unlink(FX "/sticky/rootowned")),
		NULL);
	PO_CHECK("rename.sticky_others",
		po_sys(rename(FX "/sticky/rootowned", FX "/sticky/moved")), NULL);
	PO_CHECK("rename.over_sticky_others",
		po_sys(rename("own", FX "/sticky/rootowned")), NULL);
	PO_CHECK("write.sticky_others_writable",
		po_write_file(FX "/sticky/rootowned", "by user", 7, 0644), NULL);
	PO_CHECK("create.in_sticky", po_write_file(FX "/sticky/mine", "m", 1, 0644),
		"%s", po_lstat_str(FX "/sticky/mine", st, sizeof(st)));
	PO_CHECK("chmod.sticky_dir_of_root", po_sys(chmod(FX "/sticky", 0777)),
		NULL);

	/* xattrs on others' files */
	PO_CHECK("setxattr.others_user",
		po_sys(setxattr(FX "/rootfile", "user.x", "1", 1, 0)), NULL);
	memset(v, 0, sizeof(v));
	r = po_sys(getxattr(FX "/rootfile", "user.r", v, sizeof(v)));
	PO_CHECK("getxattr.others_user", r, "value=%s", r > 0 ? v : "");
	PO_CHECK("setxattr.own_trusted",
		po_sys(setxattr("ownd", "trusted.x", "1", 1, 0)), NULL);
	PO_CHECK("getxattr.own_trusted",
		po_sys(getxattr("ownd", "trusted.x", v, sizeof(v))), NULL);
	PO_CHECK("setxattr.own_security",
		po_sys(setxattr("ownd", "security.x", "1", 1, 0)), NULL);

	PO_CHECK("mknod.chr_unpriv",
		po_sys(mknod("dev", S_IFCHR | 0666, makedev(1, 3))), NULL);
	PO_CHECK("utimensat.others_now",
		po_sys(utimensat(AT_FDCWD, FX "/rootfile", NULL, 0)), NULL);
	PO_CHECK("utimensat.others_writable_now",
		po_sys(utimensat(AT_FDCWD, FX "/sticky/rootowned", NULL, 0)), NULL);
	PO_CHECK("utimensat.others_writable_given",
		po_sys(utimensat(AT_FDCWD, FX "/sticky/rootowned", t, 0)), NULL);
	PO_CHECK("link.others_protected",
		po_sys(link(FX "/secret", "secret_link")), NULL);
	PO_CHECK("open.creat_in_others_dir",
		po_open_ret(FX "/rootdir/new", O_WRONLY | O_CREAT, 0644),
		NULL);
	PO_CHECK("rename.into_others_dir",
		po_sys(rename("ownd", FX "/rootdir/ownd")), NULL);
	PO_CHECK("unlink.in_others_dir", po_sys(unlink(FX "/rootdir/f")), NULL);
	PO_CHECK("rmdir.others_dir", po_sys(rmdir(FX "/rootdir")), NULL);
	PO_CHECK("opendir.others_0700",
		po_open_ret(FX "/privdir", O_RDONLY | O_DIRECTORY), NULL);
	PO_CHECK("stat.in_others_0700",
		po_sys(access(FX "/privdir/x", F_OK)), NULL);
	PO_CHECK("open.noatime_others",
		po_open_ret(FX "/rootfile", O_RDONLY | O_NOATIME), NULL);
	symlink("own", "ownl");
	PO_CHECK("lchown.own_symlink",
		po_sys(lchown("ownl", geteuid(), getegid())), "%s",
		po_lstat_str("ownl", st, sizeof(st)));
	if (chdir("..") < 0)
		po_note("unpriv", "cannot leave a");
}

/* User B against user A's entries in the sticky directory. */
static void po_users_other(void *arg)
{
	char st[256];

	(void)arg;
	PO_CHECK("b.unlink_sticky_of_a", po_sys(unlink("../fx/sticky/mine")),
		NULL);
	PO_CHECK("b.rename_sticky_of_a",
		po_sys(rename("../fx/sticky/mine", "../fx/sticky/b")), NULL);
	PO_CHECK("b.open_a_0644_for_write",
		po_open_ret("../fx/sticky/mine", O_WRONLY), NULL);
	PO_CHECK("b.create_in_group_dir",
		po_write_file("../fx/grp/b", "", 0, 0644), NULL);
	PO_CHECK("b.create_in_pub", po_write_file("pub/b", "", 0, 0644), "%s",
		po_lstat_str("pub/b", st, sizeof(st)));
}

static void po_users_root(void)
{
	static const gid_t groups_a[] = { PO_GROUP_X };
	char st[256];

	mkdir("pub", 0777);
	chmod("pub", 01777);
	PO_CHECK("as_a.run", po_as_user(PO_UID_A, PO_GID_A, 1, groups_a,
				       po_users_unpriv, NULL), NULL);
	PO_CHECK("as_b.run", po_as_user(PO_UID_B, PO_GID_B, 0, NULL,
				       po_users_other, NULL), NULL);
	PO_CHECK("root.unlink_sticky_of_a", po_sys(unlink("../fx/sticky/mine")),
		NULL);

	/* root in a setgid directory of another group */
	mkdir("sg", 0755);
	chown("sg", 0, PO_GROUP_X);
	chmod("sg", 02775);
	PO_CHECK("root.create_in_sgid",
		po_write_file("sg/f", "", 0, 0644), "%s",
		po_lstat_str("sg/f", st, sizeof(st)));
	PO_CHECK("root.mkdir_in_sgid", po_sys(mkdir("sg/d", 0755)), "%s",
		po_lstat_str("sg/d", st, sizeof(st)));
	po_write_file("su", "x", 1, 0644);
	chmod("su", 06755);
	PO_CHECK("root.chown_suid_file",
		po_sys(chown("su", PO_UID_A, PO_GID_A)), "%s",
		po_lstat_str("su", st, sizeof(st)));
	chmod("su", 06755);
	PO_CHECK("root.write_keeps_suid",
		po_write_file("su", "y", 1, 0644), "%s",
		po_lstat_str("su", st, sizeof(st)));
	PO_CHECK("root.chown_to_b", po_sys(chown("su", PO_UID_B, PO_GID_B)),
		"%s", po_lstat_str("su", st, sizeof(st)));
	symlink("su", "sul");
	PO_CHECK("root.lchown_symlink",
		po_sys(lchown("sul", PO_UID_A, PO_GROUP_X)), "link=%s",
		po_lstat_str("sul", st, sizeof(st)));
	po_note("root.lchown_target", "%s", po_lstat_str("su", st, sizeof(st)));
	PO_CHECK("root.setxattr_trusted",
		po_sys(setxattr("su", "trusted.t", "1", 1, 0)), NULL);
	PO_CHECK("root.open_0600_of_a",
		po_open_ret("pub/b", O_RDWR), NULL);
}

void po_users_run(void)
{
	mkdir("a", 0777);
	chmod("a", 0777);
	if (po_is_root()) {
		if (access("../fx", F_OK) != 0 && po_users_fixtures("..") < 0)
			po_note("users", "fixtures failed");
		po_users_root();
	} else {
		po_users_unpriv(NULL);
	}
}
