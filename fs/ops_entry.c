/* Namespace operations: lookup and forget, attributes, and everything that
 * creates, links, renames or removes a name. New names are made with the
 * caller's credentials so ownership matches the disk's own rules. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "hfs.h"
#include "log.h"

static void hfs_reply_entry_or_err(fuse_req_t req, struct fuse_entry_param *e, int r)
{
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		fuse_reply_entry(req, e);
}

void hfs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct hfs *fs = hfs_of(req);
	struct fuse_entry_param e;
	int r;

	hfs_count(fs, HFS_OP_LOOKUP);
	r = inode_lookup(fs, inode_get(fs, parent), name, &e);
	if (r == -ENOENT) {
		/* a negative entry: the kernel caches the absence */
		memset(&e, 0, sizeof(e));
		e.entry_timeout = HFS_TIMEOUT;
		fuse_reply_entry(req, &e);
		return;
	}
	hfs_reply_entry_or_err(req, &e, r);
}

void hfs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct hfs *fs = hfs_of(req);

	hfs_count(fs, HFS_OP_FORGET);
	inode_forget(fs, inode_get(fs, ino), nlookup);
	fuse_reply_none(req);
}

void hfs_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	struct hfs *fs = hfs_of(req);

	hfs_count(fs, HFS_OP_FORGET);
	for (size_t i = 0; i < count; i++)
		inode_forget(fs, inode_get(fs, forgets[i].ino), forgets[i].nlookup);
	fuse_reply_none(req);
}

void hfs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct hfs *fs = hfs_of(req);
	struct stat st;
	int r;

	hfs_count(fs, HFS_OP_GETATTR);
	/* with a handle: the file may be unlinked, fstat it like the caller would */
	if (fi) {
		r = fstat(hfs_fh_fd(fi), &st) < 0 ? -errno : 0;
	} else {
		struct inode_fd f;
		r = inode_fd_get(fs, inode_get(fs, ino), &f);
		if (r == 0)
			r = sys_stat(f.fd, &st);
		inode_fd_put(&f);
	}
	if (r < 0) {
		fuse_reply_err(req, -r);
	} else {
		st.st_ino = inode_ino_out(fs, st.st_dev, st.st_ino);
		fuse_reply_attr(req, &st, inode_attr_timeout(inode_get(fs, ino), st.st_mode));
	}
}

static int hfs_setattr_times(int fd, int fh, struct stat *attr, int valid)
{
	struct timespec tv[2];

	tv[0].tv_sec = 0;
	tv[1].tv_sec = 0;
	tv[0].tv_nsec = UTIME_OMIT;
	tv[1].tv_nsec = UTIME_OMIT;
	if (valid & FUSE_SET_ATTR_ATIME_NOW)
		tv[0].tv_nsec = UTIME_NOW;
	else if (valid & FUSE_SET_ATTR_ATIME)
		tv[0] = attr->st_atim;
	if (valid & FUSE_SET_ATTR_MTIME_NOW)
		tv[1].tv_nsec = UTIME_NOW;
	else if (valid & FUSE_SET_ATTR_MTIME)
		tv[1] = attr->st_mtim;
	if (fh >= 0)
		return futimens(fh, tv) < 0 ? -errno : 0;
	return utimensat(fd, "", tv, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

/* The changes setattr asks for, in the kernel's order; 0 or -errno. */
static int hfs_setattr_apply(int fd, int fh, struct stat *attr, int valid)
{
	if (valid & FUSE_SET_ATTR_MODE) {
		int r = fh >= 0 ? (fchmod(fh, attr->st_mode) < 0 ? -errno : 0)
				: sys_chmod_fd(fd, attr->st_mode);
		if (r < 0)
			return r;
	}
	if (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		uid_t uid = valid & FUSE_SET_ATTR_UID ? attr->st_uid : (uid_t)-1;
		gid_t gid = valid & FUSE_SET_ATTR_GID ? attr->st_gid : (gid_t)-1;
		if (fchownat(fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
	}
	if (valid & FUSE_SET_ATTR_SIZE) {
		char proc[64];
		int r;

		if (fh >= 0) {
			r = ftruncate(fh, attr->st_size);
		} else {
			sys_proc_path(fd, proc);
			r = truncate(proc, attr->st_size);
		}
		if (r < 0)
			return -errno;
	}
	if (valid & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME_NOW |
		     FUSE_SET_ATTR_MTIME_NOW))
		return hfs_setattr_times(fd, fh, attr, valid);
	/* chown(f, -1, -1) changes nothing but ctime, on the disk as here */
	if (!(valid & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID |
		       FUSE_SET_ATTR_SIZE)) &&
	    fchownat(fd, "", (uid_t)-1, (gid_t)-1, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	return 0;
}

void hfs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int valid,
		 struct fuse_file_info *fi)
{
	struct hfs *fs = hfs_of(req);
	int fh = fi ? hfs_fh_fd(fi) : -1;
	struct inode_fd f;
	struct stat st;
	struct track tk = { 0 };
	int r;

	hfs_count(fs, HFS_OP_SETATTR);
	log_debug("setattr %s valid 0x%x", fi ? "fh" : "path", valid);
	r = inode_fd_get(fs, inode_get(fs, ino), &f);
	if (r == 0) {
		track_inode(req, inode_get(fs, ino), &tk);
		r = hfs_setattr_apply(f.fd, fh, attr, valid);
		if (r == 0 && (valid & FUSE_SET_ATTR_SIZE))
			inode_wrote(inode_get(fs, ino));
		/* FATTR_KILL_SUIDGID (libfuse's KILL_SUID bit): a truncate by a
		 * caller without CAP_FSETID; a chown clears them below itself */
		if (r == 0 && (valid & FUSE_SET_ATTR_KILL_SUID) && (valid & FUSE_SET_ATTR_SIZE))
			sys_kill_suidgid(fh >= 0 ? fh : f.fd, fh < 0);
		track_done(req, &tk);
	}
	if (r == 0)
		r = fh >= 0 ? (fstat(fh, &st) < 0 ? -errno : 0) : sys_stat(f.fd, &st);
	inode_fd_put(&f);
	if (r < 0) {
		fuse_reply_err(req, -r);
	} else {
		st.st_ino = inode_ino_out(fs, st.st_dev, st.st_ino);
		fuse_reply_attr(req, &st, inode_attr_timeout(inode_get(fs, ino), st.st_mode));
	}
}

void hfs_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct hfs *fs = hfs_of(req);
	char buf[PATH_MAX + 1];
	struct inode_fd f;
	ssize_t n;
	int r;

	hfs_count(fs, HFS_OP_READLINK);
	if ((r = inode_fd_get(fs, inode_get(fs, ino), &f)) < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	n = readlinkat(f.fd, "", buf, sizeof(buf));
	r = n < 0 ? -errno : 0;
	inode_fd_put(&f);
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	if ((size_t)n >= sizeof(buf)) {
		fuse_reply_err(req, ENAMETOOLONG);
		return;
	}
	buf[n] = '\0';
	fuse_reply_readlink(req, buf);
}

enum hfs_mk { HFS_MK_NOD, HFS_MK_DIR, HFS_MK_SYMLINK };

/* mknod, mkdir, symlink: made as the caller, then looked up */
static void hfs_make(fuse_req_t req, enum hfs_op op, enum hfs_mk kind, fuse_ino_t parent,
		     const char *name, mode_t mode, dev_t rdev, const char *link)
{
	struct hfs *fs = hfs_of(req);
	struct hfs_inode *dir = inode_get(fs, parent);
	struct fuse_entry_param e;
	struct sys_creds c;
	struct inode_fd d;
	struct track tk = { 0 };
	int r;

	hfs_count(fs, op);
	if ((r = inode_fd_get(fs, dir, &d)) < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	/* the turn's checkpoint may run inside track_name: as the daemon, never
	 * with the caller's credentials */
	track_name(req, dir, name, &tk);
	if ((r = sys_creds_enter(fs, req, &c)) < 0) {
		track_done(req, &tk);
		inode_fd_put(&d);
		fuse_reply_err(req, -r);
		return;
	}
	if (kind != HFS_MK_SYMLINK)
		sys_creds_umask(fs, req, &c, &mode);
	do {
		if (kind == HFS_MK_DIR)
			r = mkdirat(d.fd, name, mode);
		else if (kind == HFS_MK_SYMLINK)
			r = symlinkat(link, d.fd, name);
		else
			r = mknodat(d.fd, name, mode, rdev);
		r = r < 0 ? -errno : 0;
	} while ((r == -EACCES || r == -EPERM) && sys_creds_raise(req, &c));
	sys_creds_leave(&c);
	track_done(req, &tk);
	inode_fd_put(&d);
	if (r == 0)
		r = inode_lookup(fs, dir, name, &e);
	hfs_reply_entry_or_err(req, &e, r);
}

void hfs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
	       dev_t rdev)
{
	hfs_make(req, HFS_OP_MKNOD, HFS_MK_NOD, parent, name, mode, rdev, NULL);
}

void hfs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	hfs_make(req, HFS_OP_MKDIR, HFS_MK_DIR, parent, name, mode, 0, NULL);
}

void hfs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	hfs_make(req, HFS_OP_SYMLINK, HFS_MK_SYMLINK, parent, name, 0, 0, link);
}

void hfs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	struct hfs *fs = hfs_of(req);
	struct hfs_inode *in = inode_get(fs, ino);
	struct hfs_inode *dir = inode_get(fs, newparent);
	struct fuse_entry_param e;
	struct inode_fd f, d;
	struct sys_creds c;
	struct track tk = { 0 };
	char proc[64];
	int r;

	hfs_count(fs, HFS_OP_LINK);
	/* through /proc with the caller's ids: protected_hardlinks then judges
	 * the caller, as it would on the disk */
	if ((r = inode_fd_get(fs, in, &f)) < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	if ((r = inode_fd_get(fs, dir, &d)) < 0) {
		inode_fd_put(&f);
		fuse_reply_err(req, -r);
		return;
	}
	sys_proc_path(f.fd, proc);
	track_name(req, dir, newname, &tk);
	if ((r = sys_creds_enter(fs, req, &c)) < 0) {
		track_done(req, &tk);
		inode_fd_put(&d);
		inode_fd_put(&f);
		fuse_reply_err(req, -r);
		return;
	}
	do
		r = linkat(AT_FDCWD, proc, d.fd, newname, AT_SYMLINK_FOLLOW) < 0 ? -errno : 0;
	while ((r == -EACCES || r == -EPERM) && sys_creds_raise(req, &c));
	sys_creds_leave(&c);
	track_done(req, &tk);
	inode_fd_put(&d);
	inode_fd_put(&f);
	if (r == 0)
		r = inode_lookup(fs, dir, newname, &e);
	hfs_reply_entry_or_err(req, &e, r);
}

void hfs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct hfs *fs = hfs_of(req);
	struct hfs_inode *dir = inode_get(fs, parent);
	struct inode_fd d;
	struct inode_pin pin;
	struct track tk = { 0 };
	int r;

	hfs_count(fs, HFS_OP_UNLINK);
	if ((r = inode_fd_get(fs, dir, &d)) < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	track_name(req, dir, name, &tk);
	inode_pin_prepare(fs, dir, name, &pin);
	r = unlinkat(d.fd, name, 0) < 0 ? errno : 0;
	inode_pin_commit(fs, &pin, r == 0);
	track_done(req, &tk);
	inode_fd_put(&d);
	fuse_reply_err(req, r);
}

void hfs_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct hfs *fs = hfs_of(req);
	struct hfs_inode *dir = inode_get(fs, parent);
	struct inode_fd d;
	struct track tk = { 0 };
	int r;

	struct inode_pin pin;

	hfs_count(fs, HFS_OP_RMDIR);
	if ((r = inode_fd_get(fs, dir, &d)) < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	track_name(req, dir, name, &tk);
	/* a process may keep its cwd in it: stat and listing go on working */
	inode_pin_prepare(fs, dir, name, &pin);
	r = unlinkat(d.fd, name, AT_REMOVEDIR) < 0 ? errno : 0;
	inode_pin_commit(fs, &pin, r == 0);
	track_done(req, &tk);
	inode_fd_put(&d);
	fuse_reply_err(req, r);
}

void hfs_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	struct hfs *fs = hfs_of(req);
	struct hfs_inode *from = inode_get(fs, parent);
	struct hfs_inode *to = inode_get(fs, newparent);
	struct inode_fd fd_from, fd_to;
	struct inode_pin pin;
	struct track tk = { 0 };
	int r;

	hfs_count(fs, HFS_OP_RENAME);
	if ((r = inode_fd_get(fs, from, &fd_from)) < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	if ((r = inode_fd_get(fs, to, &fd_to)) < 0) {
		inode_fd_put(&fd_from);
		fuse_reply_err(req, -r);
		return;
	}
	track_rename(req, from, name, to, newname, &tk);
	pin.fd = -1;
	if (!(flags & (RENAME_EXCHANGE | RENAME_NOREPLACE)))
		inode_pin_prepare(fs, to, newname, &pin);
	r = renameat2(fd_from.fd, name, fd_to.fd, newname, flags) < 0 ? -errno : 0;
	inode_pin_commit(fs, &pin, r == 0);
	track_done(req, &tk);
	inode_fd_put(&fd_to);
	inode_fd_put(&fd_from);
	if (r == 0) {
		inode_renamed(fs, to, newname);
		if (flags & RENAME_EXCHANGE)
			inode_renamed(fs, from, name);
	}
	fuse_reply_err(req, -r);
}

void hfs_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct hfs *fs = hfs_of(req);
	struct statvfs sv;
	struct inode_fd f;
	int r;

	hfs_count(fs, HFS_OP_STATFS);
	r = inode_fd_get(fs, inode_get(fs, ino), &f);
	if (r == 0)
		r = fstatvfs(f.fd, &sv) < 0 ? -errno : 0;
	inode_fd_put(&f);
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		fuse_reply_statfs(req, &sv);
}
