/* The inode table: one record per (dev, ino) the kernel holds, with an
 * O_PATH fd (or, past the fd budget, a file handle), its lookup count, and
 * the parent and name it was last seen under so later code can name every
 * inode it mutates. One mutex guards the whole table. */
#include <errno.h>
#include <time.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hfs.h"

static size_t inode_hash(dev_t dev, ino_t ino, size_t size)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ull;

	h ^= (uint64_t)dev * 0xc2b2ae3d27d4eb4full;
	h ^= h >> 29;
	return (size_t)(h & (size - 1));
}

int inode_table_init(struct hfs *fs, int root_fd)
{
	struct stat st;

	if (fstatat(root_fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	pthread_mutex_init(&fs->table_lock, NULL);
	pthread_mutex_init(&fs->hfd_lock, NULL);
	fs->hfd_head = fs->hfd_tail = NULL;
	fs->hfd_count = 0;
	fs->hfd_cap = HFS_HFD_CAP;
	fs->root.hfd = -1;
	fs->table_size = 4096;
	fs->table_count = 0;
	fs->table = calloc(fs->table_size, sizeof(*fs->table));
	if (!fs->table)
		return -ENOMEM;
	fs->root.fd = root_fd;
	fs->root.handle = NULL;
	fs->root.dev = st.st_dev;
	fs->root.ino = st.st_ino;
	fs->root.type = st.st_mode & S_IFMT;
	fs->root.refs = 1;
	fs->root.parent = NULL;
	fs->root.name = NULL;
	fs->root.next = NULL;
	fs->root.hashed = 1;
	fs->table[inode_hash(st.st_dev, st.st_ino, fs->table_size)] = &fs->root;
	fs->table_count = 1;
	return 0;
}

void inode_table_free(struct hfs *fs)
{
	for (size_t i = 0; fs->table && i < fs->table_size; i++) {
		struct hfs_inode *in = fs->table[i], *next;
		for (; in; in = next) {
			next = in->next;
			if (in == &fs->root)
				continue;
			if (in->fd >= 0)
				close(in->fd);
			if (in->hfd >= 0)
				close(in->hfd);
			free(in->handle);
			free(in->name);
			free(in);
		}
	}
	while (fs->stale) {
		struct hfs_inode *in = fs->stale;
		fs->stale = in->next;
		if (in->fd >= 0)
			close(in->fd);
		if (in->hfd >= 0)
			close(in->hfd);
		free(in->handle);
		free(in->name);
		free(in);
	}
	free(fs->table);
	fs->table = NULL;
	pthread_mutex_destroy(&fs->hfd_lock);
}

struct hfs_inode *inode_get(struct hfs *fs, fuse_ino_t ino)
{
	if (ino == FUSE_ROOT_ID)
		return &fs->root;
	return (struct hfs_inode *)(uintptr_t)ino;
}

/* table_lock held */
static struct hfs_inode *inode_find_locked(struct hfs *fs, dev_t dev, ino_t ino)
{
	struct hfs_inode *in = fs->table[inode_hash(dev, ino, fs->table_size)];

	while (in && !(in->ino == ino && in->dev == dev))
		in = in->next;
	return in;
}

/* table_lock held; a failed grow only makes chains longer */
static void inode_grow_locked(struct hfs *fs)
{
	size_t nsize = fs->table_size * 2;
	struct hfs_inode **nt = calloc(nsize, sizeof(*nt));

	if (!nt)
		return;
	for (size_t i = 0; i < fs->table_size; i++) {
		struct hfs_inode *in = fs->table[i], *next;
		for (; in; in = next) {
			size_t h = inode_hash(in->dev, in->ino, nsize);
			next = in->next;
			in->next = nt[h];
			nt[h] = in;
		}
	}
	free(fs->table);
	fs->table = nt;
	fs->table_size = nsize;
}

/* table_lock held */
static void inode_unhash_locked(struct hfs *fs, struct hfs_inode *in)
{
	struct hfs_inode **pp = &fs->table[inode_hash(in->dev, in->ino, fs->table_size)];

	while (*pp && *pp != in)
		pp = &(*pp)->next;
	if (*pp)
		*pp = in->next;
	in->hashed = 0;
	fs->table_count--;
	in->next = fs->stale;
	fs->stale = in;
}

/* table_lock held: take a stale record off the stale list */
static void inode_unstale_locked(struct hfs *fs, struct hfs_inode *in)
{
	struct hfs_inode **pp = &fs->stale;

	while (*pp && *pp != in)
		pp = &(*pp)->next;
	if (*pp)
		*pp = in->next;
}

/* Handle-only records: each use would open the file from its handle and
 * close it again (open_by_handle_at costs more than the op it serves, and
 * a file being written takes several ops in a row: create, chown, chmod,
 * utimes). So the fd opened last is kept, per record, in a list of at most
 * hfs.hfd_cap, most recently used first; an op leases it (hfd_users) and
 * only unleased fds are closed, oldest first. Lock order: table_lock, then
 * hfd_lock. */

/* hfd_lock held */
static void hfd_unlink_locked(struct hfs *fs, struct hfs_inode *in)
{
	if (in->hfd_prev)
		in->hfd_prev->hfd_next = in->hfd_next;
	else
		fs->hfd_head = in->hfd_next;
	if (in->hfd_next)
		in->hfd_next->hfd_prev = in->hfd_prev;
	else
		fs->hfd_tail = in->hfd_prev;
	in->hfd_prev = in->hfd_next = NULL;
}

/* hfd_lock held */
static void hfd_push_locked(struct hfs *fs, struct hfs_inode *in)
{
	in->hfd_prev = NULL;
	in->hfd_next = fs->hfd_head;
	if (fs->hfd_head)
		fs->hfd_head->hfd_prev = in;
	else
		fs->hfd_tail = in;
	fs->hfd_head = in;
}

/* hfd_lock held, in->hfd open: lease it to out */
static void hfd_lease_locked(struct hfs *fs, struct hfs_inode *in, struct inode_fd *out)
{
	in->hfd_users++;
	if (fs->hfd_head != in) {
		hfd_unlink_locked(fs, in);
		hfd_push_locked(fs, in);
	}
	out->fd = in->hfd;
	out->lease = in;
}

#define HFD_TRIM_MAX 8

/* hfd_lock held: take unleased fds off the list, oldest first, until it
 * is within the cap (at most HFD_TRIM_MAX); the caller closes them after
 * unlocking (closing the last fd of a deleted file frees its blocks).
 * Returns how many. */
static int hfd_trim_locked(struct hfs *fs, int out[HFD_TRIM_MAX])
{
	struct hfs_inode *in = fs->hfd_tail;
	int n = 0;

	while (fs->hfd_count > fs->hfd_cap && in && n < HFD_TRIM_MAX) {
		struct hfs_inode *prev = in->hfd_prev;

		if (in->hfd_users == 0) {
			hfd_unlink_locked(fs, in);
			out[n++] = in->hfd;
			in->hfd = -1;
			fs->hfd_count--;
		}
		in = prev;
	}
	return n;
}

static void hfd_close(const int *fds, int n)
{
	for (int i = 0; i < n; i++)
		close(fds[i]);
}

/* Keep fd, open on in's file, for reuse (unless one is kept already, or
 * keeping is off: then it is closed, or handed to out as its own). With
 * out, lease the kept fd to it. */
static void hfd_keep(struct hfs *fs, struct hfs_inode *in, int fd, struct inode_fd *out)
{
	int victims[HFD_TRIM_MAX], n, spare = -1;

	pthread_mutex_lock(&fs->hfd_lock);
	if (fs->hfd_cap <= 0) {
		pthread_mutex_unlock(&fs->hfd_lock);
		if (out) {
			out->fd = fd;
			out->owned = 1;
		} else {
			close(fd);
		}
		return;
	}
	if (in->hfd >= 0) {
		spare = fd; /* another op kept one meanwhile */
	} else {
		in->hfd = fd;
		hfd_push_locked(fs, in);
		fs->hfd_count++;
	}
	if (out)
		hfd_lease_locked(fs, in, out);
	n = hfd_trim_locked(fs, victims);
	pthread_mutex_unlock(&fs->hfd_lock);
	if (spare >= 0)
		close(spare);
	hfd_close(victims, n);
}

/* The record is being freed (table_lock held; nobody can lease it). */
static void hfd_drop(struct hfs *fs, struct hfs_inode *in)
{
	int fd;

	pthread_mutex_lock(&fs->hfd_lock);
	fd = in->hfd;
	if (fd >= 0) {
		hfd_unlink_locked(fs, in);
		in->hfd = -1;
		fs->hfd_count--;
	}
	pthread_mutex_unlock(&fs->hfd_lock);
	if (fd >= 0)
		close(fd);
}

/* table_lock held: drop n references, freeing inodes (and, in turn, the
 * references they hold on their parents) that reach zero. */
static void inode_unref_locked(struct hfs *fs, struct hfs_inode *in, uint64_t n)
{
	while (in && in != &fs->root) {
		struct hfs_inode *parent;

		in->refs = in->refs > n ? in->refs - n : 0;
		if (in->refs)
			return;
		if (in->hashed)
			inode_unhash_locked(fs, in);
		inode_unstale_locked(fs, in);
		parent = in->parent;
		if (in->fd >= 0) {
			close(in->fd);
			atomic_fetch_sub(&fs->kept_fds, 1);
		} else if (in->handle) {
			atomic_fetch_sub(&fs->handle_recs, 1);
		}
		hfd_drop(fs, in);
		free(in->handle);
		free(in->name);
		free(in);
		in = parent;
		n = 1;
	}
}

/* table_lock held */
static void inode_set_name_locked(struct hfs *fs, struct hfs_inode *in,
				  struct hfs_inode *parent, const char *name)
{
	if (in == &fs->root)
		return;
	if (!in->name || strcmp(in->name, name) != 0) {
		char *copy = strdup(name);
		if (copy) {
			free(in->name);
			in->name = copy;
		}
	}
	if (in->parent != parent) {
		struct hfs_inode *old = in->parent;
		parent->refs++;
		in->parent = parent;
		inode_unref_locked(fs, old, 1);
	}
}

/* Does a new inode keep a file handle instead of its fd? Past the fd
 * budget it does, directories too: a tree of a million directories must
 * not need a million fds (their fds are leased like files', inode_fd_get). */
static int inode_wants_handle(struct hfs *fs, const struct stat *st)
{
	return fs->use_handles && st->st_dev == fs->root.dev &&
	       atomic_load(&fs->kept_fds) >= fs->fd_budget;
}

/* The handle of an O_PATH fd (caller frees), or NULL. */
static struct file_handle *inode_handle_of(int fd)
{
	struct file_handle *h = malloc(sizeof(*h) + MAX_HANDLE_SZ);
	int mnt;

	if (!h)
		return NULL;
	h->handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(fd, "", h, &mnt, AT_EMPTY_PATH) < 0) {
		free(h);
		return NULL;
	}
	return h;
}

static int inode_handle_eq(const struct file_handle *a, const struct file_handle *b)
{
	return a->handle_type == b->handle_type && a->handle_bytes == b->handle_bytes &&
	       memcmp(a->f_handle, b->f_handle, a->handle_bytes) == 0;
}

int inode_lookup(struct hfs *fs, struct hfs_inode *parent, const char *name,
		 struct fuse_entry_param *e)
{
	struct hfs_inode *in, *fresh = NULL;
	struct file_handle *handle = NULL;
	struct inode_fd dir;
	int fd, r;

	memset(e, 0, sizeof(*e));
	e->attr_timeout = HFS_TIMEOUT;
	e->entry_timeout = HFS_TIMEOUT;
	if ((r = inode_fd_get(fs, parent, &dir)) < 0)
		return r;
	fd = openat(dir.fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	r = fd < 0 ? -errno : 0;
	inode_fd_put(&dir);
	if (fd < 0)
		return r;
	if (fstatat(fd, "", &e->attr, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0) {
		r = -errno;
		close(fd);
		return r;
	}

	pthread_mutex_lock(&fs->table_lock);
	in = inode_find_locked(fs, e->attr.st_dev, e->attr.st_ino);
	if (!in || in->fd < 0) {
		/* A handle does not pin the inode: once its file is gone the disk
		 * may give the number to a new file, so a handle-only record must
		 * match the new file's handle (generation included) to be reused.
		 * The handle syscall runs unlocked; recheck after it. */
		int want = inode_wants_handle(fs, &e->attr);
		int check = in != NULL;
		pthread_mutex_unlock(&fs->table_lock);
		if (want || check)
			handle = inode_handle_of(fd);
		pthread_mutex_lock(&fs->table_lock);
		in = inode_find_locked(fs, e->attr.st_dev, e->attr.st_ino);
		if (in && in->fd < 0 && handle && !inode_handle_eq(in->handle, handle)) {
			/* stale: it lives on for the kernel's references only */
			inode_unhash_locked(fs, in);
			in = NULL;
		}
		if (!in && !want) {
			free(handle);
			handle = NULL;
		}
	}
	if (!in) {
		fresh = calloc(1, sizeof(*fresh));
		if (!fresh) {
			pthread_mutex_unlock(&fs->table_lock);
			free(handle);
			close(fd);
			return -ENOMEM;
		}
		fresh->fd = handle ? -1 : fd;
		fresh->hfd = -1;
		fresh->handle = handle;
		fresh->dev = e->attr.st_dev;
		fresh->ino = e->attr.st_ino;
		fresh->type = e->attr.st_mode & S_IFMT;
		if (fs->table_count >= fs->table_size)
			inode_grow_locked(fs);
		size_t h = inode_hash(fresh->dev, fresh->ino, fs->table_size);
		fresh->next = fs->table[h];
		fs->table[h] = fresh;
		fresh->hashed = 1;
		fs->table_count++;
		if (!handle)
			atomic_fetch_add(&fs->kept_fds, 1);
		else
			atomic_fetch_add(&fs->handle_recs, 1);
		in = fresh;
	}
	in->refs++;
	inode_set_name_locked(fs, in, parent, name);
	pthread_mutex_unlock(&fs->table_lock);

	if (!fresh)
		free(handle);
	/* the fd just opened serves the ops that follow a lookup or create */
	if (__atomic_load_n(&in->fd, __ATOMIC_ACQUIRE) < 0 && in != &fs->root)
		hfd_keep(fs, in, fd, NULL);
	else if (!fresh || handle)
		close(fd);
	e->ino = in == &fs->root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)in;
	e->attr.st_ino = inode_ino_out(fs, e->attr.st_dev, e->attr.st_ino);
	e->attr_timeout = inode_attr_timeout(in, e->attr.st_mode);
	return 0;
}

static unsigned inode_mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (unsigned)ts.tv_sec;
}

/* A file being written through us changes size with every write, and the
 * kernel, given a size to keep, now and then keeps one from before the
 * last append after showing a later one (fstat going backwards beside an
 * appender that seeks or stats: ~1 in 10,000 opens on 6.18, and mmap(2) of
 * the size just seen then fails). Such a file's attributes are asked for
 * each time while it is open for writing and for a second or two after
 * its last write (an appender that opens and closes per line leaves gaps
 * between its handles); a file nobody writes keeps them a day. */
double inode_attr_timeout(const struct hfs_inode *in, mode_t mode)
{
	if (S_ISREG(mode) && (atomic_load(&in->write_opens) > 0 ||
			      inode_mono_s() - atomic_load(&in->written_s) < 2))
		return 0.0;
	return HFS_TIMEOUT;
}

void inode_wrote(struct hfs_inode *in)
{
	unsigned now = inode_mono_s();

	/* once a second at most: writers on many cores share the line */
	if (atomic_load_explicit(&in->written_s, memory_order_relaxed) != now)
		atomic_store_explicit(&in->written_s, now, memory_order_relaxed);
}

/* Everything on the mount shows the mount's st_dev, so files of a
 * filesystem mounted inside the tree would share inode numbers with the
 * tree's own (tar, rsync -H and cp -a then take one for a hard link of the
 * other). Their numbers get the device's slot (1..255, in order of first
 * sight) in the top byte; the tree's own keep theirs. */
#define INODE_DEV_SLOTS 255
static dev_t inode_devs[INODE_DEV_SLOTS];
static _Atomic unsigned inode_ndevs;
static pthread_mutex_t inode_devs_lock = PTHREAD_MUTEX_INITIALIZER;

/* A number that uses the top byte itself (overlayfs xino, NFS file ids)
 * is mixed down to 56 bits: unique but for a 2^-56 chance per pair. */
static uint64_t inode_ino_low(ino_t ino)
{
	const uint64_t low = (UINT64_C(1) << 56) - 1;
	uint64_t x = (uint64_t)ino;

	if (!(x >> 56))
		return x;
	x ^= x >> 30;
	x *= UINT64_C(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64_C(0x94d049bb133111eb);
	x ^= x >> 31;
	return x & low;
}

ino_t inode_ino_out(struct hfs *fs, dev_t dev, ino_t ino)
{
	unsigned n = atomic_load_explicit(&inode_ndevs, memory_order_acquire), i;

	if (dev == fs->root.dev)
		return ino;
	for (i = 0; i < n; i++)
		if (inode_devs[i] == dev)
			return (ino_t)((uint64_t)(i + 1) << 56 | inode_ino_low(ino));
	pthread_mutex_lock(&inode_devs_lock);
	n = atomic_load_explicit(&inode_ndevs, memory_order_relaxed);
	for (i = 0; i < n && inode_devs[i] != dev; i++)
		;
	if (i == n && n < INODE_DEV_SLOTS) {
		inode_devs[n] = dev;
		atomic_store_explicit(&inode_ndevs, n + 1, memory_order_release);
	}
	pthread_mutex_unlock(&inode_devs_lock);
	if (i == INODE_DEV_SLOTS) /* 255 other filesystems: share the last slot */
		i = INODE_DEV_SLOTS - 1;
	return (ino_t)((uint64_t)(i + 1) << 56 | inode_ino_low(ino));
}

/* open_by_handle_at, again when it fails with ENOMEM: the kernel reports
 * so a reconnection of the file's dentry that raced with a rename of its
 * directories (seen once in a concurrent stress run) */
static int inode_by_handle(struct hfs *fs, struct hfs_inode *in, int flags)
{
	int fd, tries = 0;

	do
		fd = open_by_handle_at(fs->mount_fd, in->handle, flags | O_CLOEXEC);
	while (fd < 0 && errno == ENOMEM && ++tries < 3);
	return fd;
}

int inode_fd_get(struct hfs *fs, struct hfs_inode *in, struct inode_fd *out)
{
	int fd;

	out->owned = 0;
	out->fs = fs;
	out->lease = NULL;
	/* -1 may turn into an fd (inode_pin_commit), never the other way */
	out->fd = __atomic_load_n(&in->fd, __ATOMIC_ACQUIRE);
	if (out->fd >= 0)
		return 0;
	pthread_mutex_lock(&fs->hfd_lock);
	if (in->hfd >= 0) {
		hfd_lease_locked(fs, in, out);
		pthread_mutex_unlock(&fs->hfd_lock);
		return 0;
	}
	pthread_mutex_unlock(&fs->hfd_lock);
	fd = inode_by_handle(fs, in, O_PATH);
	if (fd < 0) {
		out->fd = -1;
		return -errno;
	}
	hfd_keep(fs, in, fd, out);
	return 0;
}

void inode_fd_put(struct inode_fd *f)
{
	if (f->lease) {
		struct hfs *fs = f->fs;
		int victims[HFD_TRIM_MAX], n = 0;

		pthread_mutex_lock(&fs->hfd_lock);
		f->lease->hfd_users--;
		if (fs->hfd_count > fs->hfd_cap)
			n = hfd_trim_locked(fs, victims);
		pthread_mutex_unlock(&fs->hfd_lock);
		hfd_close(victims, n);
	} else if (f->owned && f->fd >= 0) {
		close(f->fd);
	}
	f->fd = -1;
	f->owned = 0;
	f->lease = NULL;
}

int inode_open(struct hfs *fs, struct hfs_inode *in, int flags)
{
	int fd = __atomic_load_n(&in->fd, __ATOMIC_ACQUIRE);

	if (fd >= 0)
		return sys_reopen(fd, flags);
	fd = inode_by_handle(fs, in, flags & ~O_NOFOLLOW);
	return fd < 0 ? -errno : fd;
}

void inode_forget(struct hfs *fs, struct hfs_inode *in, uint64_t n)
{
	pthread_mutex_lock(&fs->table_lock);
	inode_unref_locked(fs, in, n);
	pthread_mutex_unlock(&fs->table_lock);
}

void inode_renamed(struct hfs *fs, struct hfs_inode *newparent, const char *newname)
{
	struct hfs_inode *in;
	struct inode_fd dir;
	struct stat st;
	int r;

	if (inode_fd_get(fs, newparent, &dir) < 0)
		return;
	r = fstatat(dir.fd, newname, &st, AT_SYMLINK_NOFOLLOW);
	inode_fd_put(&dir);
	if (r < 0)
		return;
	pthread_mutex_lock(&fs->table_lock);
	in = inode_find_locked(fs, st.st_dev, st.st_ino);
	if (in)
		inode_set_name_locked(fs, in, newparent, newname);
	pthread_mutex_unlock(&fs->table_lock);
}

void inode_pin_prepare(struct hfs *fs, struct hfs_inode *dir, const char *name,
		       struct inode_pin *p)
{
	struct hfs_inode *in;
	struct inode_fd d;
	struct stat st, fst;
	int fd, need;

	p->fd = -1;
	p->handle = NULL;
	if (atomic_load(&fs->handle_recs) == 0 || inode_fd_get(fs, dir, &d) < 0)
		return;
	/* A file with another name survives the removal, and its handle
	 * keeps working: pinning it would hold an fd until the kernel forgets
	 * it (git links each object in, then unlinks the temporary: one fd
	 * per object, for good). A directory removed is always gone. */
	if (fstatat(d.fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    (!S_ISDIR(st.st_mode) && st.st_nlink > 1)) {
		inode_fd_put(&d);
		return;
	}
	pthread_mutex_lock(&fs->table_lock);
	in = inode_find_locked(fs, st.st_dev, st.st_ino);
	need = in && in->fd < 0 && in->handle;
	pthread_mutex_unlock(&fs->table_lock);
	fd = need ? openat(d.fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC) : -1;
	inode_fd_put(&d);
	if (fd < 0)
		return;
	/* the record must be this very file, not an older one whose number
	 * the disk gave again: compared by handle at commit */
	if (fstat(fd, &fst) < 0 || fst.st_dev != st.st_dev || fst.st_ino != st.st_ino ||
	    !(p->handle = inode_handle_of(fd))) {
		close(fd);
		return;
	}
	p->fd = fd;
	p->dev = st.st_dev;
	p->ino = st.st_ino;
}

void inode_pin_commit(struct hfs *fs, struct inode_pin *p, int removed)
{
	struct hfs_inode *in;

	if (p->fd < 0)
		return;
	if (removed) {
		pthread_mutex_lock(&fs->table_lock);
		in = inode_find_locked(fs, p->dev, p->ino);
		if (in && in->fd < 0 && in->handle && inode_handle_eq(in->handle, p->handle)) {
			__atomic_store_n(&in->fd, p->fd, __ATOMIC_RELEASE);
			atomic_fetch_add(&fs->kept_fds, 1);
			atomic_fetch_sub(&fs->handle_recs, 1);
			p->fd = -1;
		}
		pthread_mutex_unlock(&fs->table_lock);
	}
	free(p->handle);
	p->handle = NULL;
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
}

/* table_lock held */
static int inode_path_locked(struct hfs *fs, struct hfs_inode *in, char *out, size_t size)
{
	size_t pos = size;

	if (size == 0)
		return -ENAMETOOLONG;
	out[--pos] = '\0';
	for (; in && in != &fs->root; in = in->parent) {
		size_t len = in->name ? strlen(in->name) : 0;
		if (!in->name || len + 1 > pos)
			return in->name ? -ENAMETOOLONG : -ENOENT;
		pos -= len;
		memcpy(out + pos, in->name, len);
		if (in->parent && in->parent != &fs->root)
			out[--pos] = '/';
	}
	if (!in)
		return -ENOENT;
	memmove(out, out + pos, size - pos);
	return 0;
}

int inode_path(struct hfs *fs, struct hfs_inode *in, char *out, size_t size)
{
	int r;

	pthread_mutex_lock(&fs->table_lock);
	r = inode_path_locked(fs, in, out, size);
	pthread_mutex_unlock(&fs->table_lock);
	return r;
}

/* The kernel's number for the inode at relpath below ("" the root), or 0
 * when the kernel does not know it. The record may be freed as soon as the
 * table is unlocked: the number then only makes a notice the kernel
 * ignores or spends on an inode that came after. */
static fuse_ino_t inode_known(struct hfs *fs, const char *relpath)
{
	struct hfs_inode *in;
	struct stat st;
	fuse_ino_t ino = 0;

	if (!*relpath)
		return FUSE_ROOT_ID;
	if (fstatat(fs->root.fd, relpath, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	pthread_mutex_lock(&fs->table_lock);
	in = inode_find_locked(fs, st.st_dev, st.st_ino);
	if (in)
		ino = in == &fs->root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)in;
	pthread_mutex_unlock(&fs->table_lock);
	return ino;
}

void inode_invalidate_path(struct hfs *fs, const char *relpath, struct inode_inval *memo)
{
	char dir[PATH_MAX];
	const char *base;
	fuse_ino_t ino, parent = 0;
	size_t len = strlen(relpath);
	char *slash;

	if (len >= sizeof(dir))
		return;
	ino = inode_known(fs, relpath);
	if (ino && ino != FUSE_ROOT_ID)
		fuse_lowlevel_notify_inval_inode(fs->se, ino, 0, 0); /* pages and attributes */
	/* the entry in the deepest directory the kernel knows: a restore may
	 * have made the ones below it */
	memcpy(dir, relpath, len + 1);
	for (;;) {
		slash = strrchr(dir, '/');
		base = slash ? slash + 1 : dir;
		if (slash)
			*slash = '\0';
		parent = inode_known(fs, slash ? dir : "");
		if (parent || !slash)
			break;
	}
	if (!parent)
		return;
	/* base points into dir, past the cut: relpath's component below it */
	fuse_lowlevel_notify_inval_entry(fs->se, parent, base, strlen(base));
	if (parent != memo->last_dir) {
		/* its listing and times */
		fuse_lowlevel_notify_inval_inode(fs->se, parent, 0, 0);
		memo->last_dir = parent;
	}
}

int inode_open_for_write(struct hfs *fs, dev_t dev, ino_t ino)
{
	struct hfs_inode *in;
	int held;

	pthread_mutex_lock(&fs->table_lock);
	in = inode_find_locked(fs, dev, ino);
	held = in && atomic_load(&in->write_opens) > 0;
	pthread_mutex_unlock(&fs->table_lock);
	return held;
}

fuse_ino_t inode_replaced(struct hfs *fs, dev_t dev, ino_t ino, int gone)
{
	struct hfs_inode *in;
	fuse_ino_t n = 0;

	pthread_mutex_lock(&fs->table_lock);
	in = inode_find_locked(fs, dev, ino);
	if (in && in != &fs->root) {
		if (gone)
			atomic_store(&in->replaced, 1);
		n = (fuse_ino_t)(uintptr_t)in;
	}
	pthread_mutex_unlock(&fs->table_lock);
	return n;
}

size_t inode_walk_up(struct hfs *fs, struct hfs_inode *in,
		     enum inode_walk (*visit)(struct hfs_inode *in, void *arg), void *arg,
		     struct hfs_inode **out, size_t max)
{
	size_t n = 0;

	pthread_mutex_lock(&fs->table_lock);
	for (; in && in != &fs->root && n < max; in = in->parent) {
		enum inode_walk w = visit(in, arg);
		if (w == INODE_WALK_STOP)
			break;
		if (w == INODE_WALK_TAKE) {
			/* the parent chain may change once we unlock */
			in->refs++;
			out[n++] = in;
		}
	}
	pthread_mutex_unlock(&fs->table_lock);
	return n;
}

void inode_put_all(struct hfs *fs, struct hfs_inode **v, size_t n)
{
	if (n == 0)
		return;
	pthread_mutex_lock(&fs->table_lock);
	for (size_t i = 0; i < n; i++)
		inode_unref_locked(fs, v[i], 1);
	pthread_mutex_unlock(&fs->table_lock);
}

void inode_sync_writers(struct hfs *fs, int mount_fd)
{
	char **paths = NULL;
	size_t n = 0, cap = 0;

	pthread_mutex_lock(&fs->table_lock);
	for (size_t i = 0; i < fs->table_size; i++) {
		for (struct hfs_inode *in = fs->table[i]; in; in = in->next) {
			char path[PATH_MAX], *p, **v;

			if (!S_ISREG(in->type) || atomic_load(&in->write_opens) == 0 ||
			    inode_path_locked(fs, in, path, sizeof(path)) < 0)
				continue;
			if (n == cap) {
				cap = cap ? cap * 2 : 16;
				v = realloc(paths, cap * sizeof(*v));
				if (!v)
					goto out;
				paths = v;
			}
			if ((p = strdup(path)))
				paths[n++] = p;
		}
	}
out:
	pthread_mutex_unlock(&fs->table_lock);
	for (size_t i = 0; i < n; i++) {
		/* fsync through the mount waits for the kernel's writes of the
		 * file's dirty pages; syncfs does not wait on FUSE's */
		int fd = openat(mount_fd, paths[i], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0) {
			(void)fsync(fd);
			close(fd);
		}
		free(paths[i]);
	}
	free(paths);
}
