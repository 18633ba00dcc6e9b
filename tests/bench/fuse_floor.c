/* fuse_floor: the cheapest filesystem FUSE allows, as a bench baseline.
 *
 * It keeps names and attributes in memory and stores no data, but asks the
 * kernel for what hermesfs asks (default_permissions, allow_other as root,
 * day-long entry and attribute timeouts, negative entries, direct I/O for
 * write-only opens, a multithreaded loop), so the kernel sends it the same
 * requests. What a workload costs on it is the price of the FUSE round
 * trips alone on this machine: the part of hermesfs's time that no work in
 * the daemon can remove.
 *
 *   fuse_floor MOUNTPOINT     mounts, detaches once live; fusermount3 -u ends it
 */
#ifndef FUSE_USE_VERSION
#define FUSE_USE_VERSION 314
#endif
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FLOOR_TIMEOUT 86400.0
#define FLOOR_BUCKETS (1u << 20)

struct floor_node {
	struct floor_node *next; /* in its hash bucket */
	fuse_ino_t ino, parent;
	char *name;
	struct stat st;
	unsigned children;
};

static pthread_mutex_t floor_lock = PTHREAD_MUTEX_INITIALIZER;
static struct floor_node **floor_buckets;
static struct floor_node **floor_inodes; /* by ino */
static size_t floor_ninodes, floor_cap;

static size_t floor_hash(fuse_ino_t parent, const char *name)
{
	uint64_t h = 1469598103934665603ull ^ parent;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 1099511628211ull;
	return (size_t)(h & (FLOOR_BUCKETS - 1));
}

static struct floor_node *floor_find(fuse_ino_t parent, const char *name)
{
	struct floor_node *n = floor_buckets[floor_hash(parent, name)];

	while (n && (n->parent != parent || strcmp(n->name, name) != 0))
		n = n->next;
	return n;
}

static struct floor_node *floor_ino(fuse_ino_t ino)
{
	return ino < floor_ninodes ? floor_inodes[ino] : NULL;
}

static struct floor_node *floor_new(fuse_req_t req, fuse_ino_t parent, const char *name,
				    mode_t mode)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct floor_node *n = calloc(1, sizeof(*n));
	size_t b;

	if (!n || !(n->name = strdup(name))) {
		free(n);
		return NULL;
	}
	if (floor_ninodes == floor_cap) {
		size_t cap = floor_cap ? floor_cap * 2 : 1024;
		struct floor_node **v = realloc(floor_inodes, cap * sizeof(*v));
		if (!v) {
			free(n->name);
			free(n);
			return NULL;
		}
		floor_inodes = v;
		floor_cap = cap;
	}
	n->ino = floor_ninodes;
	floor_inodes[floor_ninodes++] = n;
	n->parent = parent;
	n->st.st_ino = n->ino;
	n->st.st_mode = mode;
	n->st.st_nlink = S_ISDIR(mode) ? 2 : 1;
	n->st.st_uid = ctx->uid;
	n->st.st_gid = ctx->gid;
	clock_gettime(CLOCK_REALTIME, &n->st.st_mtim);
	n->st.st_atim = n->st.st_ctim = n->st.st_mtim;
	b = floor_hash(parent, name);
	n->next = floor_buckets[b];
	floor_buckets[b] = n;
	if (floor_ino(parent))
		floor_ino(parent)->children++;
	return n;
}

static void floor_entry(fuse_req_t req, const struct floor_node *n)
{
	struct fuse_entry_param e;

	memset(&e, 0, sizeof(e));
	e.attr_timeout = FLOOR_TIMEOUT;
	e.entry_timeout = FLOOR_TIMEOUT;
	if (n) {
		e.ino = n->ino;
		e.attr = n->st;
	}
	fuse_reply_entry(req, &e); /* ino 0: a negative entry, cached */
}

static void floor_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct floor_node copy, *n;

	pthread_mutex_lock(&floor_lock);
	n = floor_find(parent, name);
	if (n)
		copy = *n;
	pthread_mutex_unlock(&floor_lock);
	floor_entry(req, n ? &copy : NULL);
}

/* Applies the to_set fields of attr (none for a getattr) and replies with
 * the attributes. */
static void floor_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
			  struct fuse_file_info *fi)
{
	struct floor_node *n;
	struct stat st;

	(void)fi;
	pthread_mutex_lock(&floor_lock);
	n = floor_ino(ino);
	if (n && to_set) {
		if (to_set & FUSE_SET_ATTR_MODE)
			n->st.st_mode = (n->st.st_mode & S_IFMT) | (attr->st_mode & 07777);
		if (to_set & FUSE_SET_ATTR_UID)
			n->st.st_uid = attr->st_uid;
		if (to_set & FUSE_SET_ATTR_GID)
			n->st.st_gid = attr->st_gid;
		if (to_set & FUSE_SET_ATTR_SIZE)
			n->st.st_size = attr->st_size;
		if (to_set & FUSE_SET_ATTR_MTIME)
			n->st.st_mtim = attr->st_mtim;
		if (to_set & FUSE_SET_ATTR_ATIME)
			n->st.st_atim = attr->st_atim;
		if (to_set & (FUSE_SET_ATTR_MTIME_NOW | FUSE_SET_ATTR_ATIME_NOW))
			clock_gettime(CLOCK_REALTIME, &n->st.st_mtim);
		clock_gettime(CLOCK_REALTIME, &n->st.st_ctim);
	}
	if (n)
		st = n->st;
	pthread_mutex_unlock(&floor_lock);
	if (n)
		fuse_reply_attr(req, &st, FLOOR_TIMEOUT);
	else
		fuse_reply_err(req, ENOENT);
}

static void floor_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	floor_setattr(req, ino, NULL, 0, fi);
}

static void floor_make(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		       struct fuse_file_info *fi)
{
	struct floor_node copy, *n;
	int exists;

	pthread_mutex_lock(&floor_lock);
	exists = floor_find(parent, name) != NULL;
	n = exists ? NULL : floor_new(req, parent, name, mode & ~fuse_req_ctx(req)->umask);
	if (n)
		copy = *n;
	pthread_mutex_unlock(&floor_lock);
	if (!n) {
		fuse_reply_err(req, exists ? EEXIST : ENOMEM);
		return;
	}
	if (fi) {
		struct fuse_entry_param e;

		memset(&e, 0, sizeof(e));
		e.ino = copy.ino;
		e.attr = copy.st;
		e.attr_timeout = e.entry_timeout = FLOOR_TIMEOUT;
		fuse_reply_create(req, &e, fi);
	} else {
		floor_entry(req, &copy);
	}
}

static void floor_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	floor_make(req, parent, name, S_IFDIR | (mode & 07777), NULL);
}

static void floor_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
			 struct fuse_file_info *fi)
{
	if ((fi->flags & O_ACCMODE) == O_WRONLY)
		fi->direct_io = 1;
	floor_make(req, parent, name, S_IFREG | (mode & 07777), fi);
}

static void floor_remove(fuse_req_t req, fuse_ino_t parent, const char *name, int dir)
{
	struct floor_node **p, *n;
	int err = ENOENT;

	pthread_mutex_lock(&floor_lock);
	for (p = &floor_buckets[floor_hash(parent, name)]; (n = *p); p = &n->next) {
		if (n->parent != parent || strcmp(n->name, name) != 0)
			continue;
		if (dir != !!S_ISDIR(n->st.st_mode)) {
			err = dir ? ENOTDIR : EISDIR;
		} else if (dir && n->children) {
			err = ENOTEMPTY;
		} else {
			*p = n->next;
			if (floor_ino(parent))
				floor_ino(parent)->children--;
			n->parent = 0; /* the inode lives on, nameless */
			err = 0;
		}
		break;
	}
	pthread_mutex_unlock(&floor_lock);
	fuse_reply_err(req, err);
}

static void floor_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	floor_remove(req, parent, name, 0);
}

static void floor_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	floor_remove(req, parent, name, 1);
}

static void floor_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	if ((fi->flags & O_ACCMODE) == O_WRONLY)
		fi->direct_io = 1;
	fuse_reply_open(req, fi);
}

static void floor_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size,
			off_t off, struct fuse_file_info *fi)
{
	struct floor_node *n;

	(void)buf;
	(void)fi;
	pthread_mutex_lock(&floor_lock);
	n = floor_ino(ino);
	if (n && off + (off_t)size > n->st.st_size)
		n->st.st_size = off + (off_t)size;
	if (n)
		clock_gettime(CLOCK_REALTIME, &n->st.st_mtim);
	pthread_mutex_unlock(&floor_lock);
	fuse_reply_write(req, size);
}

static void floor_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0);
}

static void floor_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	(void)ino;
	(void)name;
	(void)size;
	fuse_reply_err(req, ENODATA);
}

static void floor_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	(void)ino;
	(void)nlookup;
	fuse_reply_none(req);
}

static void floor_init(void *data, struct fuse_conn_info *conn)
{
	(void)data;
	conn->want &= ~(FUSE_CAP_WRITEBACK_CACHE | FUSE_CAP_HANDLE_KILLPRIV);
}

static const struct fuse_lowlevel_ops floor_ops = {
	.init = floor_init,
	.lookup = floor_lookup,
	.forget = floor_forget,
	.getattr = floor_getattr,
	.setattr = floor_setattr,
	.mkdir = floor_mkdir,
	.create = floor_create,
	.unlink = floor_unlink,
	.rmdir = floor_rmdir,
	.open = floor_open,
	.write = floor_write,
	.release = floor_release,
	.getxattr = floor_getxattr,
};

int main(int argc, char **argv)
{
	char *fargv[] = { argv[0], "-o",
			  getuid() == 0 ? "default_permissions,allow_other,fsname=fuse_floor"
					: "default_permissions,fsname=fuse_floor",
			  NULL };
	struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
	struct fuse_session *se;
	struct fuse_loop_config *cfg;
	struct floor_node *root;
	int r;

	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: fuse_floor MOUNTPOINT\n");
		return 2;
	}
	floor_buckets = calloc(FLOOR_BUCKETS, sizeof(*floor_buckets));
	if (!floor_buckets)
		return 1;
	/* inode 0 is unused, 1 is the root (nameless, parent 0) */
	floor_ninodes = 1;
	floor_cap = 1024;
	floor_inodes = calloc(floor_cap, sizeof(*floor_inodes));
	root = calloc(1, sizeof(*root));
	if (!floor_inodes || !root)
		return 1;
	root->ino = 1;
	root->name = "";
	root->st.st_ino = 1;
	root->st.st_mode = S_IFDIR | 01777;
	root->st.st_nlink = 2;
	floor_inodes[floor_ninodes++] = root;
	se = fuse_session_new(&args, &floor_ops, sizeof(floor_ops), NULL);
	if (!se || fuse_session_mount(se, argv[1]) != 0)
		return 1;
	fuse_daemonize(0);
	cfg = fuse_loop_cfg_create();
	fuse_loop_cfg_set_max_threads(cfg, 16);
	r = fuse_session_loop_mt(se, cfg);
	fuse_loop_cfg_destroy(cfg);
	fuse_session_unmount(se);
	fuse_session_destroy(se);
	return r ? 1 : 0;
}
