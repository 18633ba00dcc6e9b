/* posix_ops battery "acl": POSIX ACLs as the disk keeps them (the raw
 * system.posix_acl_* xattrs, no libacl): access granted and denied by
 * named-user and named-group entries, the mode's group bits as the mask,
 * chmod rewriting the mask, default ACLs inherited by files, directories
 * and fifos made under them with the caller's umask ignored there and
 * applied elsewhere, and the set-gid bit dropped when an owner outside
 * the file's group sets an ACL. Needs root (it switches users). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "posix_ops.h"

#define PO_ACL_ACCESS "system.posix_acl_access"
#define PO_ACL_DEFAULT "system.posix_acl_default"

/* The on-disk format (Linux's posix_acl_xattr.h): a version word, then
 * entries sorted by tag and id, all little-endian. */
#define PO_ACL_VERSION 2
enum { PO_USER_OBJ = 1, PO_USER = 2, PO_GROUP_OBJ = 4, PO_GROUP = 8, PO_MASK = 16, PO_OTHER = 32 };

struct po_acl_entry {
	uint16_t tag, perm;
	uint32_t id;
};

/* Encode n entries into buf; returns the size. */
static size_t po_acl_encode(const struct po_acl_entry *e, size_t n, unsigned char *buf)
{
	size_t off = 4;

	buf[0] = PO_ACL_VERSION;
	buf[1] = buf[2] = buf[3] = 0;
	for (size_t i = 0; i < n; i++, off += 8) {
		buf[off] = (unsigned char)e[i].tag;
		buf[off + 1] = (unsigned char)(e[i].tag >> 8);
		buf[off + 2] = (unsigned char)e[i].perm;
		buf[off + 3] = 0;
		for (int b = 0; b < 4; b++)
			buf[off + 4 + b] = (unsigned char)(e[i].id >> (8 * b));
	}
	return off;
}

static long po_acl_set(const char *path, const char *name, const struct po_acl_entry *e,
		       size_t n)
{
	unsigned char buf[4 + 8 * 16];

	return po_sys(setxattr(path, name, buf, po_acl_encode(e, n, buf), 0));
}

/* The ACL of path as "u::rw-,u:1234:r--,..." (ids only for named
 * entries), or the errno name. */
static const char *po_acl_str(const char *path, const char *name, char *out, size_t size)
{
	unsigned char buf[4 + 8 * 32];
	ssize_t n = getxattr(path, name, buf, sizeof(buf));
	size_t len = 0;

	if (n < 0)
		return po_errname(errno);
	out[0] = '\0';
	for (ssize_t off = 4; off + 8 <= n && len + 32 < size; off += 8) {
		unsigned tag = buf[off] | (unsigned)buf[off + 1] << 8;
		unsigned perm = buf[off + 2];
		unsigned id = buf[off + 4] | (unsigned)buf[off + 5] << 8 |
			      (unsigned)buf[off + 6] << 16 | (unsigned)buf[off + 7] << 24;
		char who[16] = "";
		char t = tag == PO_USER_OBJ || tag == PO_USER ? 'u'
			 : tag == PO_GROUP_OBJ || tag == PO_GROUP ? 'g'
			 : tag == PO_MASK ? 'm' : tag == PO_OTHER ? 'o' : '?';

		if (tag == PO_USER || tag == PO_GROUP)
			snprintf(who, sizeof(who), "%u", id);
		len += (size_t)snprintf(out + len, size - len, "%s%c:%s:%c%c%c",
					len ? "," : "", t, who,
					perm & 4 ? 'r' : '-', perm & 2 ? 'w' : '-',
					perm & 1 ? 'x' : '-');
	}
	return out;
}

/* As user A (member of PO_GROUP_X): what the ACLs let through. */
static void po_acl_as_a(void *arg)
{
	char st[256], acl[512];

	(void)arg;
	PO_CHECK("a.open_rw_named_user", po_open_ret("granted", O_RDWR), NULL);
	PO_CHECK("a.write_named_user", po_write_file("granted", "by a", 4, 0644), NULL);
	PO_CHECK("a.open_r_denied_by_entry", po_open_ret("denied", O_RDONLY), NULL);
	PO_CHECK("a.access_r_denied_by_entry", po_sys(access("denied", R_OK)), NULL);
	PO_CHECK("a.open_r_named_group", po_open_ret("grouped", O_RDONLY), NULL);
	PO_CHECK("a.open_w_named_group", po_open_ret("grouped", O_WRONLY), NULL);
	PO_CHECK("a.open_w_masked", po_open_ret("masked", O_WRONLY), NULL);
	PO_CHECK("a.list_dir_named_user", po_open_ret("adir", O_RDONLY | O_DIRECTORY), NULL);
	PO_CHECK("a.stat_in_dir_named_user", po_sys(access("adir/inside", F_OK)), NULL);
	PO_CHECK("a.create_in_dir_named_user",
		po_write_file("adir/by_a", "", 0, 0644), NULL);

	/* under a default ACL the umask does not apply */
	umask(077);
	PO_CHECK("a.create_under_default", po_write_file("inherit/f", "", 0, 0666), "%s acl=%s",
		po_lstat_str("inherit/f", st, sizeof(st)),
		po_acl_str("inherit/f", PO_ACL_ACCESS, acl, sizeof(acl)));
	PO_CHECK("a.mkdir_under_default", po_sys(mkdir("inherit/d", 0777)), "%s",
		po_lstat_str("inherit/d", st, sizeof(st)));
	po_note("a.mkdir_under_default.default", "%s",
		po_acl_str("inherit/d", PO_ACL_DEFAULT, acl, sizeof(acl)));
	PO_CHECK("a.mkdir_under_default.nested", po_sys(mkdir("inherit/d/e", 0750)), "%s",
		po_lstat_str("inherit/d/e", st, sizeof(st)));
	PO_CHECK("a.mkfifo_under_default", po_sys(mkfifo("inherit/p", 0666)), "%s",
		po_lstat_str("inherit/p", st, sizeof(st)));
	PO_CHECK("a.open_creat_under_default",
		po_open_ret("inherit/o", O_WRONLY | O_CREAT | O_EXCL, 0640), "%s",
		po_lstat_str("inherit/o", st, sizeof(st)));
	/* and elsewhere it does */
	umask(027);
	PO_CHECK("a.create_plain", po_write_file("plain/f", "", 0, 0666), "%s",
		po_lstat_str("plain/f", st, sizeof(st)));
	PO_CHECK("a.mkdir_plain", po_sys(mkdir("plain/d", 0777)), "%s",
		po_lstat_str("plain/d", st, sizeof(st)));
	umask(022);

	/* an owner outside the file's group loses set-gid by setting an ACL */
	{
		const struct po_acl_entry e[] = {
			{ PO_USER_OBJ, 6, 0 }, { PO_USER, 4, PO_UID_B }, { PO_GROUP_OBJ, 4, 0 },
			{ PO_MASK, 6, 0 }, { PO_OTHER, 0, 0 },
		};
		PO_CHECK("a.setacl_own_sgid_foreign_group",
			po_acl_set("sgid_of_a", PO_ACL_ACCESS, e, 5), "%s acl=%s",
			po_lstat_str("sgid_of_a", st, sizeof(st)),
			po_acl_str("sgid_of_a", PO_ACL_ACCESS, acl, sizeof(acl)));
	}
	PO_CHECK("a.setacl_others_file",
		po_sys(removexattr("granted", PO_ACL_ACCESS)), NULL);
}

static void po_acl_root(void)
{
	static const gid_t groups_a[] = { PO_GROUP_X };
	char st[256], acl[512];

	/* a 0600 file that a named-user entry opens to A */
	po_write_file("granted", "root data", 9, 0600);
	{
		const struct po_acl_entry e[] = {
			{ PO_USER_OBJ, 6, 0 }, { PO_USER, 6, PO_UID_A }, { PO_GROUP_OBJ, 0, 0 },
			{ PO_MASK, 6, 0 }, { PO_OTHER, 0, 0 },
		};
		PO_CHECK("root.setacl_named_user", po_acl_set("granted", PO_ACL_ACCESS, e, 5),
			"%s acl=%s", po_lstat_str("granted", st, sizeof(st)),
			po_acl_str("granted", PO_ACL_ACCESS, acl, sizeof(acl)));
	}
	/* a 0644 file that a named-user entry closes to A */
	po_write_file("denied", "root data", 9, 0644);
	{
		const struct po_acl_entry e[] = {
			{ PO_USER_OBJ, 6, 0 }, { PO_USER, 0, PO_UID_A }, { PO_GROUP_OBJ, 4, 0 },
			{ PO_MASK, 4, 0 }, { PO_OTHER, 4, 0 },
		};
		PO_CHECK("root.setacl_deny_user", po_acl_set("denied", PO_ACL_ACCESS, e, 5),
			"%s", po_lstat_str("denied", st, sizeof(st)));
	}
	/* a named-group entry, then a mask that takes write away again */
	po_write_file("grouped", "g", 1, 0600);
	{
		const struct po_acl_entry e[] = {
			{ PO_USER_OBJ, 6, 0 }, { PO_GROUP_OBJ, 0, 0 }, { PO_GROUP, 4, PO_GROUP_X },
			{ PO_MASK, 4, 0 }, { PO_OTHER, 0, 0 },
		};
		PO_CHECK("root.setacl_named_group", po_acl_set("grouped", PO_ACL_ACCESS, e, 5),
			"%s", po_lstat_str("grouped", st, sizeof(st)));
	}
	po_write_file("masked", "m", 1, 0600);
	{
		const struct po_acl_entry e[] = {
			{ PO_USER_OBJ, 6, 0 }, { PO_USER, 6, PO_UID_A }, { PO_GROUP_OBJ, 0, 0 },
			{ PO_MASK, 4, 0 }, { PO_OTHER, 0, 0 },
		};
		PO_CHECK("root.setacl_mask", po_acl_set("masked", PO_ACL_ACCESS, e, 5), "%s",
			po_lstat_str("masked", st, sizeof(st)));
	}
	/* chmod rewrites the mask, and the ACL shows it at once */
	po_write_file("chmodded", "c", 1, 0600);
	{
		const struct po_acl_entry e[] = {
			{ PO_USER_OBJ, 6, 0 }, { PO_USER, 7, PO_UID_A }, { PO_GROUP_OBJ, 4, 0 },
			{ PO_MASK, 7, 0 }, { PO_OTHER, 0, 0 },
		};
		po_acl_set("chmodded", PO_ACL_ACCESS, e, 5);
	}
	po_note("root.acl_sets_mode", "%s", po_lstat_str("chmodded", st, sizeof(st)));
	PO_CHECK("root.chmod_rewrites_mask", po_sys(chmod("chmodded", 0640)), "%s acl=%s",
		po_lstat_str("chmodded", st, sizeof(st)),
		po_acl_str("chmodded", PO_ACL_ACCESS, acl, sizeof(acl)));
	PO_CHECK("root.removeacl", po_sys(removexattr("chmodded", PO_ACL_ACCESS)), "%s acl=%s",
		po_lstat_str("chmodded", st, sizeof(st)),
		po_acl_str("chmodded", PO_ACL_ACCESS, acl, sizeof(acl)));

	/* a 0700 directory that a named-user entry opens to A */
	mkdir("adir", 0700);
	po_write_file("adir/inside", "", 0, 0600);
	{
		const struct po_acl_entry e[] = {
			{ PO_USER_OBJ, 7, 0 }, { PO_USER, 7, PO_UID_A }, { PO_GROUP_OBJ, 0, 0 },
			{ PO_MASK, 7, 0 }, { PO_OTHER, 0, 0 },
		};
		PO_CHECK("root.setacl_dir", po_acl_set("adir", PO_ACL_ACCESS, e, 5), "%s",
			po_lstat_str("adir", st, sizeof(st)));
	}
	/* a directory whose default ACL everything made in it inherits */
	mkdir("inherit", 0777);
	chmod("inherit", 0777);
	{
		const struct po_acl_entry e[] = {
			{ PO_USER_OBJ, 7, 0 }, { PO_USER, 5, PO_UID_B }, { PO_GROUP_OBJ, 7, 0 },
			{ PO_MASK, 7, 0 }, { PO_OTHER, 5, 0 },
		};
		PO_CHECK("root.setacl_default", po_acl_set("inherit", PO_ACL_DEFAULT, e, 5),
			"default=%s", po_acl_str("inherit", PO_ACL_DEFAULT, acl, sizeof(acl)));
	}
	mkdir("plain", 0777);
	chmod("plain", 0777);
	/* set-gid file of A in a group A is not in */
	po_write_file("sgid_of_a", "s", 1, 0660);
	chown("sgid_of_a", PO_UID_A, 0);
	chmod("sgid_of_a", 02660);
	po_note("root.sgid_of_a", "%s", po_lstat_str("sgid_of_a", st, sizeof(st)));

	PO_CHECK("as_a.run", po_as_user(PO_UID_A, PO_GID_A, 1, groups_a, po_acl_as_a, NULL),
		NULL);
	/* root made under the default ACL too, umask 022 ignored there */
	PO_CHECK("root.create_under_default", po_write_file("inherit/r", "", 0, 0666), "%s",
		po_lstat_str("inherit/r", st, sizeof(st)));
	PO_CHECK("root.mknod_under_default",
		po_sys(mknod("inherit/s", S_IFSOCK | 0777, 0)), "%s",
		po_lstat_str("inherit/s", st, sizeof(st)));
}

void po_acl_run(void)
{
	if (!po_is_root()) {
		po_note("acl", "needs root to switch users");
		return;
	}
	po_acl_root();
}
