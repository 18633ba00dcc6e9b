/* File handle operations: open and create, zero-copy read and write, and
 * the calls that act on an open file (sync, allocate, copy, seek, flock).
 * A handle is a real fd on the file below, so unlinked files keep working. */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hfs.h"

/* Flags for the fd below: creation is done, and with the writeback cache
 * the kernel may read to fill pages and appends itself. */
static int hfs_open_flags(struct hfs *fs, int flags)
{
	flags &= ~(O_CREAT | O_EXCL | O_NOCTTY | O_DIRECT);
	if (fs->writeback) {
		if ((flags & O_ACCMODE) == O_WRONLY)
			flags = (flags & ~O_ACCMODE) | O_RDWR;
		flags &= ~O_APPEND;
	}
	return flags;
}

/* Open the file below with flags as hfs_open_flags made them, or with the
 * caller's access mode if the read-write upgrade is refused (a caller's
 * write-only permission on create). */
static int hfs_open_retry(int r, int *flags, int asked)
{
	if (r == -EACCES && (*flags & O_ACCMODE) != (asked & O_ACCMODE)) {
		*flags = (*flags & ~O_ACCMODE) | (asked & O_ACCMODE);
		return 1;
	}
	return 0;
}

static void hfs_file_info(struct hfs *fs, struct fuse_file_info *fi, int fd, int pt)
{
	fi->fh = (uint64_t)fd | ((uint64_t)pt << HFS_FH_PT_SHIFT);
	/* every change passes through us: the page cache stays valid */
	fi->keep_cache = 1;
	/* A write-only handle that does not pass through (no passthrough
	 * here, cached handles open, a set-id file) cannot read or map the
	 * file, so its pages in the kernel's cache would only be copied there
	 * for nothing. Direct I/O hands the caller's buffer to us as it is.
	 * Pages other handles cached are invalidated by the kernel around
	 * each such write. */
	if (!fs->writeback && !fs->cached_writes && (fi->flags & O_ACCMODE) == O_WRONLY &&
	    (pt == PT_NONE || pt == PT_DIRECT)) {
		fi->direct_io = 1;
		fi->fh |= HFS_FH_DIRECT;
	}
	if (pt == PT_PASS || pt == PT_PASS_DIRECT)
		fi->keep_cache = 0; /* passthrough handles have no page cache */
	if (pt == PT_PASS_DIRECT)
		fi->fh |= HFS_FH_DIRECT; /* its writes come to us as direct I/O */
}

static int hfs_fh_pt(const struct fuse_file_info *fi)
{
	return (int)((fi->fh >> HFS_FH_PT_SHIFT) & 7);
}

/* Set-id bits a write or truncate by this caller must clear: the kernel
 * leaves that to us for direct I/O, and for everything once it has handed
 * us FUSE_HANDLE_KILLPRIV_V2; we write as root, which would keep them.
 * (uid 0 stands for CAP_FSETID.) */
static int hfs_must_kill(fuse_req_t req, int direct)
{
	return fuse_req_ctx(req)->uid != 0 && (direct || atomic_load(&hfs_of(req)->killpriv));
}

/* Clear them below, and drop the kernel's copy of the mode: it keeps it for
 * the attribute timeout (a day), and execve trusts it. Invalidating only
 * attributes takes no inode lock, so this is safe inside the request. */
static void hfs_kill_suidgid(fuse_req_t req, fuse_ino_t ino, int fd, int direct)
{
	if (hfs_must_kill(req, direct) && sys_kill_suidgid(fd, 0))
		fuse_lowlevel_notify_inval_inode(hfs_of(req)->se, ino, -1, 0);
}

/* Count a handle that may write, +1 at open, -1 at release. */
static void hfs_write_opens(struct hfs_inode *in, int flags, int delta)
{
	if ((flags & O_ACCMODE) != O_RDONLY)
		atomic_fetch_add(&in->write_opens, (unsigned)delta);
}

void hfs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct hfs *fs = hfs_of(req);
	struct hfs_inode *in = inode_get(fs, ino);
	struct track tk = { 0 };
	int fd, pt = PT_NONE, r, lflags;

	hfs_count(fs, HFS_OP_OPEN);
	/* opening for writing (or truncating) counts as the change itself: with
	 * the writeback cache the writes come much later */
	if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC))
		track_inode(req, in, &tk);
	if (atomic_load(&in->replaced)) {
		/* a restore replaced the file under a name the kernel cached
		 * (this open may have waited for it): the kernel looks the
		 * name up again on ESTALE and opens the new file */
		track_done(req, &tk);
		fuse_reply_err(req, ESTALE);
		return;
	}
	lflags = hfs_open_flags(fs, fi->flags);
	do
		fd = inode_open(fs, in, lflags);
	while (hfs_open_retry(fd, &lflags, fi->flags));
	/* an O_TRUNC open truncates like truncate() (the kernel asks us with
	 * FUSE_OPEN_KILL_SUIDGID, which libfuse 3.14 does not pass on) */
	if (fd >= 0 && (fi->flags & O_TRUNC))
		hfs_kill_suidgid(req, ino, fd, 0);
	if (fd >= 0) {
		/* in the gate still: a turn that begins now sees it live */
		pt = pt_open_decide(fs, in, fi->flags, fd, NULL);
		pt_live_open(fs, req, in, fd, pt, fi->flags, NULL);
		hfs_write_opens(in, fi->flags, 1);
	}
	track_done(req, &tk);
	if (fd < 0) {
		fuse_reply_err(req, -fd);
		return;
	}
	hfs_file_info(fs, fi, fd, pt);
	pt_reply_begin(in, pt);
	r = fuse_reply_open(req, fi);
	pt_reply_end();
	if (r == -ENOENT) { /* the caller was interrupted and is gone */
		pt_live_close(fs, fd);
		pt_release(fs, in, pt);
		hfs_write_opens(in, fi->flags, -1);
		close(fd);
	}
}

void hfs_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		struct fuse_file_info *fi)
{
	struct hfs *fs = hfs_of(req);
	struct hfs_inode *dir = inode_get(fs, parent);
	struct fuse_entry_param e;
	struct sys_creds c;
	struct inode_fd d;
	struct track tk = { 0 };
	int fd, r, pt, lflags;

	hfs_count(fs, HFS_OP_CREATE);
	if ((r = inode_fd_get(fs, dir, &d)) < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	/* the turn's checkpoint may run inside track_name: as the daemon */
	track_name(req, dir, name, &tk);
	if ((r = sys_creds_enter(fs, req, &c)) < 0) {
		track_done(req, &tk);
		inode_fd_put(&d);
		fuse_reply_err(req, -r);
		return;
	}
	sys_creds_umask(fs, req, &c, &mode);
	/* Exclusive even when not asked: the kernel asks us to create only
	 * names it found absent, and a file we made has no capabilities to
	 * look up on its first write. A name that appeared since opens as
	 * the caller asked. */
	lflags = (hfs_open_flags(fs, fi->flags) & ~O_NOFOLLOW) | O_CREAT | O_EXCL | O_CLOEXEC;
	for (;;) {
		fd = openat(d.fd, name, lflags, mode);
		r = fd < 0 ? -errno : 0;
		if (r == -EEXIST && !(fi->flags & O_EXCL) && (lflags & O_EXCL)) {
			lflags &= ~O_EXCL;
			continue;
		}
		if (hfs_open_retry(r, &lflags, fi->flags))
			continue;
		if ((r == -EACCES || r == -EPERM) && sys_creds_raise(req, &c))
			continue;
		break;
	}
	sys_creds_leave(&c);
	inode_fd_put(&d);
	if (r < 0) {
		track_done(req, &tk);
		fuse_reply_err(req, -r);
		return;
	}
	if ((r = inode_lookup(fs, dir, name, &e)) < 0) {
		track_done(req, &tk);
		close(fd);
		fuse_reply_err(req, -r);
		return;
	}
	/* a file this call made has no security.capability yet */
	if (lflags & O_EXCL)
		atomic_store(&inode_get(fs, e.ino)->caps_none, 1);
	/* in the gate still: a turn that begins now sees it live */
	/* e.attr is fresh: nobody has the file yet */
	pt = pt_open_decide(fs, inode_get(fs, e.ino), fi->flags, fd, &e.attr);
	pt_live_open(fs, req, inode_get(fs, e.ino), fd, pt, fi->flags, &e.attr);
	hfs_write_opens(inode_get(fs, e.ino), fi->flags, 1);
	track_done(req, &tk);
	hfs_file_info(fs, fi, fd, pt);
	pt_reply_begin(inode_get(fs, e.ino), pt);
	r = fuse_reply_create(req, &e, fi);
	pt_reply_end();
	if (r == -ENOENT) {
		pt_live_close(fs, fd);
		pt_release(fs, inode_get(fs, e.ino), pt);
		hfs_write_opens(inode_get(fs, e.ino), fi->flags, -1);
		close(fd);
		inode_forget(fs, inode_get(fs, e.ino), 1);
	}
}

/* Below this a copy costs less CPU than setting up splice (measured:
 * 4 KiB random reads use ~30% less daemon CPU copied, 128 KiB sequential
 * reads ~60% less spliced). */
#define HFS_SPLICE_MIN (32u << 10)

void hfs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
	      struct fuse_file_info *fi)
{
	static __thread char small[HFS_SPLICE_MIN];
	struct fuse_bufvec buf = FUSE_BUFVEC_INIT(size);

	(void)ino;
	hfs_count(hfs_of(req), HFS_OP_READ);
	if (size < HFS_SPLICE_MIN) {
		ssize_t n = pread(hfs_fh_fd(fi), small, size, off);
		if (n < 0)
			fuse_reply_err(req, errno);
		else
			fuse_reply_buf(req, small, (size_t)n);
		return;
	}
	buf.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	buf.buf[0].fd = hfs_fh_fd(fi);
	buf.buf[0].pos = off;
	fuse_reply_data(req, &buf, FUSE_BUF_SPLICE_MOVE);
}

void hfs_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *bufv, off_t off,
		   struct fuse_file_info *fi)
{
	struct fuse_bufvec out = FUSE_BUFVEC_INIT(fuse_buf_size(bufv));
	struct hfs *fs = hfs_of(req);
	struct track tk = { 0 };
	ssize_t n;

	hfs_count(fs, HFS_OP_WRITE);
	/* a file opened in an earlier turn is written in this one */
	track_write(req, inode_get(fs, ino), off, fuse_buf_size(bufv), &tk);
	out.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	out.buf[0].fd = hfs_fh_fd(fi);
	out.buf[0].pos = off;
	n = fuse_buf_copy(&out, bufv, 0);
	if (n > 0)
		inode_wrote(inode_get(fs, ino));
	if (n > 0)
		hfs_kill_suidgid(req, ino, hfs_fh_fd(fi), (fi->fh & HFS_FH_DIRECT) != 0);
	track_done(req, &tk);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_write(req, (size_t)n);
}

/* A shared writable map of a passthrough handle writes the file below
 * without a word to the kernel's FUSE inode, which then shows the mtime
 * (and blocks) from before for the attribute timeout, a day: make it ask
 * again once the maps were synced or the handle is let go. Attributes
 * only: no inode lock, safe inside the request. */
static void hfs_maps_wrote(struct hfs *fs, fuse_ino_t ino, struct fuse_file_info *fi)
{
	int pt = hfs_fh_pt(fi);

	if (pt == PT_PASS_DIRECT || (pt == PT_PASS && (fi->flags & O_ACCMODE) != O_RDONLY))
		fuse_lowlevel_notify_inval_inode(fs->se, ino, -1, 0);
}

void hfs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct hfs *fs = hfs_of(req);
	int pt = hfs_fh_pt(fi);

	hfs_count(fs, HFS_OP_RELEASE);
	if (pt == PT_PASS_DIRECT && (fi->flags & O_ACCMODE) == O_RDWR) {
		/* Its maps wrote the file below without us; the kernel
		 * releases the handle only after the last map is gone, so
		 * count the file as changed now rather than never. */
		struct track tk = { 0 };

		track_inode(req, inode_get(fs, ino), &tk);
		track_done(req, &tk);
	}
	if (pt == PT_PASS && (fi->flags & O_ACCMODE) != O_RDONLY)
		pt_live_close(fs, hfs_fh_fd(fi));
	pt_release(fs, inode_get(fs, ino), pt);
	hfs_write_opens(inode_get(fs, ino), fi->flags, -1);
	close(hfs_fh_fd(fi));
	hfs_maps_wrote(fs, ino, fi);
	fuse_reply_err(req, 0);
}

void hfs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct hfs *fs = hfs_of(req);
	int r;

	hfs_count(fs, HFS_OP_FSYNC);
	r = datasync ? fdatasync(hfs_fh_fd(fi)) : fsync(hfs_fh_fd(fi));
	r = r < 0 ? errno : 0;
	/* with the writeback cache the kernel keeps attributes it cached
	 * before the writes (st_blocks): make it ask again now they landed */
	if (fs->writeback && r == 0)
		fuse_lowlevel_notify_inval_inode(fs->se, ino, -1, 0);
	else if (r == 0)
		hfs_maps_wrote(fs, ino, fi);
	fuse_reply_err(req, r);
}

void hfs_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
		   struct fuse_file_info *fi)
{
	struct hfs *fs = hfs_of(req);
	struct track tk = { 0 };
	int r;

	hfs_count(fs, HFS_OP_FALLOCATE);
	track_inode(req, inode_get(fs, ino), &tk);
	r = fallocate(hfs_fh_fd(fi), mode, offset, length) < 0 ? errno : 0;
	if (r == 0)
		inode_wrote(inode_get(fs, ino));
	track_done(req, &tk);
	fuse_reply_err(req, r);
}

void hfs_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
			 struct fuse_file_info *fi_in, fuse_ino_t ino_out, off_t off_out,
			 struct fuse_file_info *fi_out, size_t len, int flags)
{
	struct hfs *fs = hfs_of(req);
	loff_t in = off_in, out = off_out;
	struct track tk = { 0 };
	ssize_t n;

	(void)ino_in;
	hfs_count(fs, HFS_OP_COPY_FILE_RANGE);
	track_inode(req, inode_get(fs, ino_out), &tk);
	n = copy_file_range(hfs_fh_fd(fi_in), &in, hfs_fh_fd(fi_out), &out, len,
			    (unsigned int)flags);
	n = n < 0 ? -errno : n;
	if (n > 0)
		inode_wrote(inode_get(fs, ino_out));
	track_done(req, &tk);
	if (n < 0)
		errno = (int)-n;
	if (n < 0)
		fuse_reply_err(req, errno);
	else
		fuse_reply_write(req, (size_t)n);
}

void hfs_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
	       struct fuse_file_info *fi)
{
	off_t r;

	struct hfs *fs = hfs_of(req);

	hfs_count(fs, HFS_OP_LSEEK);
	/* With the writeback cache, data may still sit in the kernel's dirty
	 * pages, so the disk's holes are not yet the file's. Invalidating the
	 * pages makes the kernel write them back to us first (other workers
	 * serve those WRITEs while this one waits). */
	if (fs->writeback && (whence == SEEK_DATA || whence == SEEK_HOLE))
		fuse_lowlevel_notify_inval_inode(fs->se, ino, 0, 0);
	r = lseek(hfs_fh_fd(fi), off, whence);
	if (r < 0)
		fuse_reply_err(req, errno);
	else
		fuse_reply_lseek(req, r);
}

void hfs_flock(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, int op)
{
	int r;

	(void)ino;
	hfs_count(hfs_of(req), HFS_OP_FLOCK);
	r = flock(hfs_fh_fd(fi), op);
	fuse_reply_err(req, r < 0 ? errno : 0);
}

/* The inode flags chattr and lsattr use (FS_IOC_GETFLAGS/SETFLAGS) and
 * the xattr-style ones (FS_IOC_FSGETXATTR/FSSETXATTR): the kernel asks
 * for them on a handle it opens itself, read-only, after checking the
 * caller (owner, CAP_LINUX_IMMUTABLE); we ask the file below. A
 * directory gets an fd of its own (its handle, if any, is not an fd).
 * Other ioctls are not ours to forward: ENOTTY, as for a file that has
 * none. */
void hfs_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
	       struct fuse_file_info *fi, unsigned flags, const void *in_buf, size_t in_bufsz,
	       size_t out_bufsz)
{
	struct hfs *fs = hfs_of(req);
	union {
		int flags;
		struct fsxattr fsx;
	} v;
	size_t size;
	int fd, own = 0, r;

	(void)arg;
	hfs_count(fs, HFS_OP_IOCTL);
	switch (cmd) {
	case FS_IOC_GETFLAGS:
	case FS_IOC_SETFLAGS:
		size = sizeof(v.flags);
		break;
	case FS_IOC_FSGETXATTR:
	case FS_IOC_FSSETXATTR:
		size = sizeof(v.fsx);
		break;
	default:
		fuse_reply_err(req, ENOTTY);
		return;
	}
	if (flags & FUSE_IOCTL_COMPAT) {
		fuse_reply_err(req, ENOTTY);
		return;
	}
	memset(&v, 0, sizeof(v));
	if (cmd == FS_IOC_SETFLAGS || cmd == FS_IOC_FSSETXATTR) {
		if (in_bufsz < size) {
			fuse_reply_err(req, EINVAL);
			return;
		}
		memcpy(&v, in_buf, size);
	} else if (out_bufsz < size) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (!(flags & FUSE_IOCTL_DIR) && fi && fi->fh) {
		fd = hfs_fh_fd(fi);
	} else {
		fd = inode_open(fs, inode_get(fs, ino),
				O_RDONLY | ((flags & FUSE_IOCTL_DIR) ? O_DIRECTORY : 0));
		if (fd < 0) {
			fuse_reply_err(req, -fd);
			return;
		}
		own = 1;
	}
	r = ioctl(fd, cmd, &v) < 0 ? errno : 0;
	if (own)
		close(fd);
	if (r)
		fuse_reply_err(req, r);
	else if (cmd == FS_IOC_GETFLAGS || cmd == FS_IOC_FSGETXATTR)
		fuse_reply_ioctl(req, 0, &v, size);
	else
		fuse_reply_ioctl(req, 0, NULL, 0);
}
