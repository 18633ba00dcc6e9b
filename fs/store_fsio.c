/* Raw file-system calls of the store on the protected tree: opening paths
 * below the root fd without following symlinks, atomic replacement,
 * removal with pruning of emptied directories, hashing a file into the odb. */
#include "store_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"

/* Walk the components of relpath one openat() at a time. */
static int fsio_walk(int rootfd, const char *relpath, int flags)
{
	const char *base;
	_cleanup_close_ int dfd = fsio_open_parent(rootfd, relpath, 0, &base);
	int fd;

	if (dfd < 0)
		return dfd;
	fd = openat(dfd, base, flags | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int fsio_open(int rootfd, const char *relpath, int flags)
{
	static int no_openat2;
	struct open_how how = {
		.flags = (unsigned long long)(flags | O_NOFOLLOW | O_CLOEXEC),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	if (!no_openat2) {
		fd = syscall(SYS_openat2, rootfd, relpath, &how, sizeof(how));
		if (fd >= 0)
			return (int)fd;
		if (errno != ENOSYS && errno != EAGAIN)
			return -errno;
		if (errno == ENOSYS)
			no_openat2 = 1;
	}
	return fsio_walk(rootfd, relpath, flags);
}

int fsio_lstat(int rootfd, const char *relpath, struct stat *st)
{
	_cleanup_close_ int fd = fsio_open(rootfd, relpath, O_PATH);

	if (fd < 0)
		return fd;
	return fstat(fd, st) < 0 ? -errno : 0;
}

int fsio_open_parent(int rootfd, const char *relpath, mode_t dir_mode, const char **base)
{
	char comp[NAME_MAX + 1];
	const char *p = relpath, *slash;
	int dfd = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);

	if (dfd < 0)
		return -errno;
	while ((slash = strchr(p, '/'))) {
		size_t len = (size_t)(slash - p);
		int nfd;

		if (len == 0 || len > NAME_MAX) {
			close(dfd);
			return -EINVAL;
		}
		memcpy(comp, p, len);
		comp[len] = '\0';
		nfd = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		/* a file or symlink in the way of a restored path goes (it is
		 * in the safety checkpoint) */
		if (nfd < 0 && (errno == ENOTDIR || errno == ELOOP) && dir_mode &&
		    unlinkat(dfd, comp, 0) == 0)
			errno = ENOENT;
		if (nfd < 0 && errno == ENOENT && dir_mode) {
			/* dir_mode is already masked: the daemon runs with umask 0 */
			if (mkdirat(dfd, comp, dir_mode & 07777) < 0 && errno != EEXIST) {
				int r = -errno;
				close(dfd);
				return r;
			}
			nfd = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (nfd < 0) {
			int r = errno == ELOOP ? -ENOTDIR : -errno;
			close(dfd);
			return r;
		}
		close(dfd);
		dfd = nfd;
		p = slash + 1;
	}
	*base = p;
	return dfd;
}

/* Remove directory name in dfd if it holds nothing but (empty) directories:
 * those are not tracked, so they must not block a restore. */
static int fsio_rmdir_dirs_only(int dfd, const char *name, int depth)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	int r = 0;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	while (r == 0 && (de = readdir(d))) {
		if (de->d_name[0] == '.' &&
		    (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		if (de->d_type != DT_DIR || depth > 64)
			r = -ENOTEMPTY;
		else
			r = fsio_rmdir_dirs_only(fd, de->d_name, depth + 1);
	}
	if (r == 0 && unlinkat(dfd, name, AT_REMOVEDIR) < 0)
		r = -errno;
	return r;
}

int fsio_write_all(int fd, const void *buf, size_t left)
{
	const char *p = buf;

	while (left > 0) {
		ssize_t w = write(fd, p, left);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		left -= (size_t)w;
	}
	return 0;
}

/* Rewrite a regular file of one link in place: a process that holds it
 * open (a log writer, tail -f) goes on with the file the user sees, not a
 * deleted one. 1 when it was not such a file (then nothing was done). */
static int fsio_rewrite(int dfd, const char *base, const struct stat *old, const void *buf,
			size_t len, mode_t mode)
{
	_cleanup_close_ int fd = -1;
	struct stat now;
	int r;

	if (!S_ISREG(old->st_mode) || old->st_nlink != 1)
		return 1;
	fd = openat(dfd, base, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 1;
	/* the same file as looked at, still of one link */
	if (fstat(fd, &now) < 0 || now.st_ino != old->st_ino || now.st_dev != old->st_dev ||
	    !S_ISREG(now.st_mode) || now.st_nlink != 1)
		return 1;
	/* the new bytes over the old ones, then cut: a reader meanwhile sees
	 * the old file, the new one, or the new one with the old one's tail,
	 * never an empty file */
	if ((r = fsio_write_all(fd, buf, len)) < 0)
		return r;
	if (ftruncate(fd, (off_t)len) < 0)
		return -errno;
	if ((now.st_mode & 07777) != (mode & 07777) && fchmod(fd, mode & 07777) < 0)
		return -errno;
	return 0;
}

int fsio_write(int rootfd, const char *relpath, const void *buf, size_t len,
	       mode_t mode, mode_t dir_mode, int is_link, int in_place)
{
	const char *base;
	_cleanup_close_ int dfd = fsio_open_parent(rootfd, relpath, dir_mode, &base);
	char tmp[64];
	struct stat old;
	int have_old, r = 0;

	if (dfd < 0)
		return dfd;
	have_old = fstatat(dfd, base, &old, AT_SYMLINK_NOFOLLOW) == 0;
	if (have_old && !is_link && in_place && (r = fsio_rewrite(dfd, base, &old, buf, len, mode)) <= 0)
		return r;
	r = 0;
	snprintf(tmp, sizeof(tmp), STORE_TMP_PREFIX "%d-%lx", (int)getpid(),
		 (unsigned long)random());
	if (is_link) {
		_cleanup_free_ char *target = strndup(buf, len);
		if (!target)
			return -ENOMEM;
		if (symlinkat(target, dfd, tmp) < 0)
			return -errno;
		if (have_old && geteuid() == 0)
			(void)fchownat(dfd, tmp, old.st_uid, old.st_gid, AT_SYMLINK_NOFOLLOW);
	} else {
		_cleanup_close_ int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
						mode & 07777);

		if (fd < 0)
			return -errno;
		r = fsio_write_all(fd, buf, len);
		if (r == 0 && have_old && geteuid() == 0)
			(void)fchown(fd, old.st_uid, old.st_gid);
		if (r == 0 && fchmod(fd, mode & 07777) < 0)
			r = -errno;
		if (r < 0) {
			unlinkat(dfd, tmp, 0);
			return r;
		}
	}
	if (renameat(dfd, tmp, dfd, base) < 0) {
		r = -errno;
		/* a directory in the way: take it only when it is empty */
		if ((r == -EISDIR || r == -ENOTEMPTY || r == -EEXIST) &&
		    fsio_rmdir_dirs_only(dfd, base, 0) == 0 &&
		    renameat(dfd, tmp, dfd, base) == 0)
			return 0;
		unlinkat(dfd, tmp, 0);
		return r;
	}
	return 0;
}

int fsio_rmdir_empty_parents(int rootfd, const char *relpath)
{
	char buf[PATH_MAX];
	char *slash;

	if (strlen(relpath) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, relpath);
	while ((slash = strrchr(buf, '/'))) {
		const char *base;
		int dfd, r;

		*slash = '\0';
		dfd = fsio_open_parent(rootfd, buf, 0, &base);
		if (dfd < 0)
			return dfd;
		r = unlinkat(dfd, base, AT_REMOVEDIR);
		close(dfd);
		if (r < 0)
			return 0; /* not empty (or gone): stop here */
	}
	return 0;
}

int fsio_mkdir(int rootfd, const char *relpath, mode_t dir_mode)
{
	const char *base;
	_cleanup_close_ int dfd = fsio_open_parent(rootfd, relpath, dir_mode, &base);
	struct stat sb;

	if (dfd < 0)
		return dfd;
	if (mkdirat(dfd, base, dir_mode & 07777) == 0)
		return 0;
	if (errno != EEXIST)
		return -errno;
	if (fstatat(dfd, base, &sb, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	return S_ISDIR(sb.st_mode) ? 0 : -EEXIST;
}

int fsio_rmdir(int rootfd, const char *relpath)
{
	const char *base;
	_cleanup_close_ int dfd = fsio_open_parent(rootfd, relpath, 0, &base);

	if (dfd < 0)
		return dfd == -ENOENT ? 0 : dfd;
	if (unlinkat(dfd, base, AT_REMOVEDIR) < 0)
		return errno == ENOENT ? 0 : -errno;
	return 0;
}

int fsio_remove(int rootfd, const char *relpath)
{
	const char *base;
	_cleanup_close_ int dfd = fsio_open_parent(rootfd, relpath, 0, &base);
	struct stat sb;

	if (dfd < 0)
		return dfd == -ENOENT || dfd == -ENOTDIR ? 0 : dfd;
	if (fstatat(dfd, base, &sb, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (unlinkat(dfd, base, S_ISDIR(sb.st_mode) ? AT_REMOVEDIR : 0) < 0)
		return -errno;
	return fsio_rmdir_empty_parents(rootfd, relpath);
}

static int fsio_read_full(int fd, char *buf, size_t len, size_t *got)
{
	size_t n = 0;

	while (n < len) {
		ssize_t r = read(fd, buf + n, len - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*got = n;
	return 0;
}

int fsio_hash_fd(struct store *st, int fd, size_t size, const git_oid *have, git_oid *out)
{
	char small[65536], extra;
	_cleanup_free_ char *big = NULL;
	char *buf = small;
	size_t got = 0;
	int r;

	if (size > sizeof(small)) {
		big = malloc(size);
		if (!big)
			return -ENOMEM;
		buf = big;
	}
	r = fsio_read_full(fd, buf, size, &got);
	if (r < 0)
		return r;
	if (got != size || read(fd, &extra, 1) != 0)
		return -EAGAIN; /* changed while we read it */
	return fsio_hash_buf(st, buf, size, have, out);
}

int fsio_hash_buf(struct store *st, const void *buf, size_t size, const git_oid *have,
		  git_oid *out)
{
	int r = store_object_id(GIT_OBJECT_BLOB, buf, size, out);

	if (r < 0 || (have && git_oid_equal(have, out)))
		return r;
	return store_sink_keep(st, GIT_OBJECT_BLOB, buf, size, out);
}
