/* Directories: offsets taken from the disk's own d_off so telldir/seekdir
 * stay stable, and readdirplus that hands the kernel entries (one lookup
 * reference each). Where the kernel opens directories without asking
 * (session.c), each readdir opens the directory below, seeks to the offset
 * and closes it again; the kernel caches what it read, so a directory is
 * read through us once until it changes. With -o dir_handles (or a kernel
 * without that mode) an opendir keeps a DIR stream as the handle. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hfs.h"

struct hfs_dir {
	DIR *dp;
	struct dirent *entry; /* read but not yet sent, or NULL */
	off_t offset;         /* offset of the next entry the stream gives */
};

static struct hfs_dir *hfs_dir_of(struct fuse_file_info *fi)
{
	return (struct hfs_dir *)(uintptr_t)fi->fh;
}

static int hfs_is_dot(const char *name)
{
	return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

/* An fd to read the directory in by: where the record keeps its O_PATH
 * fd, "." from it costs less than a /proc reopen. That lookup needs search
 * permission, which a daemon that is not root may lack on its own
 * directory (mode 0444). Past the fd budget, it is opened from its handle. */
static int hfs_dir_open(struct hfs *fs, struct hfs_inode *in)
{
	int fd = -1, kept = __atomic_load_n(&in->fd, __ATOMIC_ACQUIRE);

	if (kept >= 0)
		fd = openat(kept, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		fd = inode_open(fs, in, O_RDONLY | O_DIRECTORY);
	return fd;
}

void hfs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct hfs *fs = hfs_of(req);
	struct hfs_dir *d;
	int fd, r;

	hfs_count(fs, HFS_OP_OPENDIR);
	if (fs->no_opendir) {
		fuse_reply_err(req, ENOSYS); /* the kernel takes it as success */
		return;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	fd = hfs_dir_open(fs, inode_get(fs, ino));
	if (fd < 0) {
		free(d);
		fuse_reply_err(req, -fd);
		return;
	}
	d->dp = fdopendir(fd);
	if (!d->dp) {
		r = errno;
		close(fd);
		free(d);
		fuse_reply_err(req, r);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)d;
	fi->keep_cache = 1;
	fi->cache_readdir = 1;
	if (fuse_reply_open(req, fi) == -ENOENT) {
		closedir(d->dp);
		free(d);
	}
}

/* Fill one entry into p; returns its size (> rem when it did not fit, in
 * which case nothing is kept) or a negative errno to skip it. */
static ssize_t hfs_dir_add(fuse_req_t req, struct hfs *fs, struct hfs_inode *dir,
			   struct dirent *de, char *p, size_t rem, int plus)
{
	size_t n;

	if (plus) {
		struct fuse_entry_param e;
		int r = 0;
		if (hfs_is_dot(de->d_name)) {
			memset(&e, 0, sizeof(e));
			e.attr.st_ino = inode_ino_out(fs, dir->dev, de->d_ino);
			e.attr.st_mode = (mode_t)de->d_type << 12;
		} else if ((r = inode_lookup(fs, dir, de->d_name, &e)) < 0) {
			return r; /* gone since readdir: leave it out */
		}
		n = fuse_add_direntry_plus(req, p, rem, de->d_name, &e, de->d_off);
		if (n > rem && e.ino)
			inode_forget(fs, inode_get(fs, e.ino), 1);
		return (ssize_t)n;
	}
	struct stat st = { .st_ino = inode_ino_out(fs, dir->dev, de->d_ino),
			   .st_mode = (mode_t)de->d_type << 12 };
	n = fuse_add_direntry(req, p, rem, de->d_name, &st, de->d_off);
	return (ssize_t)n;
}

static void hfs_do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			   struct fuse_file_info *fi, int plus)
{
	struct hfs *fs = hfs_of(req);
	struct hfs_inode *dir = inode_get(fs, ino);
	struct hfs_dir *d = hfs_dir_of(fi), once = { 0 };
	size_t rem = size;
	char *buf, *p;
	int err = 0;

	hfs_count(fs, HFS_OP_READDIR);
	if (!d) { /* no handle: read this part and close again */
		int fd = hfs_dir_open(fs, dir);

		if (fd < 0) {
			fuse_reply_err(req, -fd);
			return;
		}
		once.dp = fdopendir(fd);
		if (!once.dp) {
			err = errno;
			close(fd);
			fuse_reply_err(req, err);
			return;
		}
		d = &once;
	}
	buf = malloc(size ? size : 1);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		goto out;
	}
	if (off != d->offset) {
		seekdir(d->dp, off);
		d->entry = NULL;
		d->offset = off;
	}
	p = buf;
	for (;;) {
		if (!d->entry) {
			errno = 0;
			d->entry = readdir(d->dp);
			if (!d->entry) {
				err = errno;
				break;
			}
		}
		ssize_t n = hfs_dir_add(req, fs, dir, d->entry, p, rem, plus);
		if (n >= 0 && (size_t)n > rem)
			break;
		if (n > 0) {
			p += n;
			rem -= (size_t)n;
		}
		d->offset = d->entry->d_off;
		d->entry = NULL;
	}
	if (err && rem == size)
		fuse_reply_err(req, err);
	else
		fuse_reply_buf(req, buf, size - rem);
	free(buf);
out:
	if (d == &once)
		closedir(once.dp);
}

void hfs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		 struct fuse_file_info *fi)
{
	hfs_do_readdir(req, ino, size, off, fi, 0);
}

void hfs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	hfs_do_readdir(req, ino, size, off, fi, 1);
}

void hfs_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct hfs_dir *d = hfs_dir_of(fi);

	(void)ino;
	hfs_count(hfs_of(req), HFS_OP_RELEASEDIR);
	closedir(d->dp);
	free(d);
	fuse_reply_err(req, 0);
}

void hfs_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct hfs *fs = hfs_of(req);
	struct hfs_dir *d = hfs_dir_of(fi);
	int fd, r;

	hfs_count(fs, HFS_OP_FSYNCDIR);
	fd = d ? dirfd(d->dp) : hfs_dir_open(fs, inode_get(fs, ino));
	if (fd < 0) {
		fuse_reply_err(req, -fd);
		return;
	}
	r = datasync ? fdatasync(fd) : fsync(fd);
	r = r < 0 ? errno : 0;
	if (!d)
		close(fd);
	fuse_reply_err(req, r);
}
