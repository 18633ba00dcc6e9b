/* Extended attributes, passed through by the /proc/self/fd path of the
 * inode's O_PATH fd: the magic link lands on the inode itself, symlinks
 * included, without resolving any name in the tree again. Whether a file
 * has no security.capability is remembered: the kernel asks before the
 * first write of each file and before every chown, and only setxattr adds
 * one (writes and chowns below remove it). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "hfs.h"

#define HFS_XATTR_CAPS "security.capability"
#define HFS_XATTR_ACL "system.posix_acl_access"

/* The /proc path of an O_PATH fd on the inode; put f afterwards. */
static int hfs_xattr_path(fuse_req_t req, fuse_ino_t ino, struct inode_fd *f, char proc[64])
{
	struct hfs *fs = hfs_of(req);
	int r = inode_fd_get(fs, inode_get(fs, ino), f);

	if (r < 0) {
		fuse_reply_err(req, -r);
		return r;
	}
	sys_proc_path(f->fd, proc);
	return 0;
}

/* Reply to a get/list call: size 0 asks for the needed size only. */
static void hfs_xattr_reply(fuse_req_t req, ssize_t n, int err, char *buf, size_t size)
{
	if (n < 0)
		fuse_reply_err(req, err);
	else if (size == 0)
		fuse_reply_xattr(req, (size_t)n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
}

void hfs_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct hfs *fs = hfs_of(req);
	char proc[64], *buf = NULL;
	struct inode_fd f;
	ssize_t n;
	int err, caps;

	hfs_count(fs, HFS_OP_GETXATTR);
	caps = strcmp(name, HFS_XATTR_CAPS) == 0;
	if (caps && atomic_load(&inode_get(fs, ino)->caps_none)) {
		fuse_reply_err(req, ENODATA);
		return;
	}
	if (size && !(buf = malloc(size))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (hfs_xattr_path(req, ino, &f, proc) < 0) {
		free(buf);
		return;
	}
	n = getxattr(proc, name, buf, size);
	err = errno;
	if (caps && n < 0 && err == ENODATA)
		atomic_store(&inode_get(fs, ino)->caps_none, 1);
	inode_fd_put(&f);
	hfs_xattr_reply(req, n, err, buf, size);
	free(buf);
}

void hfs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct hfs *fs = hfs_of(req);
	char proc[64], *buf = NULL;
	struct inode_fd f;
	ssize_t n;
	int err;

	hfs_count(fs, HFS_OP_LISTXATTR);
	if (size && !(buf = malloc(size))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (hfs_xattr_path(req, ino, &f, proc) < 0) {
		free(buf);
		return;
	}
	n = listxattr(proc, buf, size);
	err = errno;
	inode_fd_put(&f);
	hfs_xattr_reply(req, n, err, buf, size);
	free(buf);
}

void hfs_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
		  size_t size, int flags)
{
	struct hfs *fs = hfs_of(req);
	struct hfs_inode *in = inode_get(fs, ino);
	struct track tk = { 0 };
	struct sys_creds c;
	char proc[64];
	struct inode_fd f;
	int r;

	hfs_count(fs, HFS_OP_SETXATTR);
	if (hfs_xattr_path(req, ino, &f, proc) < 0)
		return;
	track_inode(req, in, &tk);
	atomic_store(&in->caps_none, 0);
	/* an access ACL as the caller: the disk then drops the set-gid bit
	 * for an owner outside the file's group, as natively (the kernel's
	 * own flag for it needs a newer protocol than libfuse 3.14 speaks).
	 * Everything else as the daemon: the kernel checked the caller, and
	 * sends some changes of its own (capabilities dropped on write). */
	if (strcmp(name, HFS_XATTR_ACL) != 0) {
		r = setxattr(proc, name, value, size, flags) < 0 ? errno : 0;
	} else if ((r = -sys_creds_enter(fs, req, &c)) == 0) {
		/* a caller that is not the owner but holds CAP_FOWNER: with
		 * its capabilities, as natively */
		do
			r = setxattr(proc, name, value, size, flags) < 0 ? errno : 0;
		while ((r == EPERM || r == EACCES) && sys_creds_raise(req, &c));
		sys_creds_leave(&c);
	}
	track_done(req, &tk);
	inode_fd_put(&f);
	fuse_reply_err(req, r);
}

void hfs_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct hfs *fs = hfs_of(req);
	struct hfs_inode *in = inode_get(fs, ino);
	struct track tk = { 0 };
	char proc[64];
	struct inode_fd f;
	int r;

	hfs_count(fs, HFS_OP_REMOVEXATTR);
	if (hfs_xattr_path(req, ino, &f, proc) < 0)
		return;
	track_inode(req, in, &tk);
	atomic_store(&in->caps_none, 0);
	r = removexattr(proc, name) < 0 ? errno : 0;
	track_done(req, &tk);
	inode_fd_put(&f);
	fuse_reply_err(req, r);
}
