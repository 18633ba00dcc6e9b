/* hermesfs shared state: the filesystem object, the inode record, the
 * per-op counters, and the entry points each fs/ file exports. */
#pragma once

#include <fuse_lowlevel.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "err.h"
#include "log.h"
#include "paths.h"

/* Kernel caches: entries, attributes and negative lookups live a day; every
 * change goes through us, so nothing behind the kernel's back invalidates
 * them (see ARCHITECTURE.md: the tree is mounted in place). */
#define HFS_TIMEOUT 86400.0
#define HFS_MAX_WRITE (1u << 20)

/* One inode the kernel knows (or a parent of one). fuse_ino_t is the
 * pointer; the root is hfs.root and never freed. */
struct hfs_inode {
	/* O_PATH|O_NOFOLLOW, or -1 once the fd budget is spent and only the
	 * handle is kept (directories too: use inode_fd_get, never this field
	 * directly, for a directory's *at() calls). Closed only when the record
	 * is freed, so ops borrow it unlocked; -1 may become an fd once
	 * (inode_pin_commit), so unlocked readers load it atomically. */
	int fd;
	struct file_handle *handle; /* immutable; set when fd is -1 */
	/* hfs.hfd_lock: for a handle-only record, an fd opened from the
	 * handle and kept while in use or recently used (-1: none), how many
	 * ops use it now, and its place in the recently-used list */
	int hfd;
	unsigned hfd_users;
	struct hfs_inode *hfd_prev, *hfd_next;
	dev_t dev;  /* key, immutable */
	ino_t ino;  /* key, immutable */
	mode_t type; /* S_IFMT bits, immutable */

	/* dirty tracking (track.c): the turn epoch in which this inode was
	 * last marked dirty, or found excluded */
	atomic_uint_fast64_t mark_epoch;
	atomic_uint_fast64_t skip_epoch;
	/* of a directory: is it a git repository or a virtualenv (low two
	 * bits, TRACK_DIR_*), and above them a generation that each change
	 * of a name deciding it bumps, so a verdict reached before the change
	 * is never stored after it */
	atomic_uint_fast32_t dir_kind;
	/* end offset of the last write if it stopped on a page boundary (the
	 * kernel may send the rest of the same write() as the next request),
	 * else 0 */
	atomic_uint_fast64_t write_split_end;
	/* known to have no security.capability (ops_xattr.c): the kernel asks
	 * before the first write of each file and before every chown */
	atomic_int caps_none;
	/* open handles that may write (ops_file.c): a restore rewrites such a
	 * file in place, so its writers go on in the file the user sees */
	atomic_uint write_opens;
	/* a restore replaced or removed the file below: the kernel may still
	 * reach this record by a cached name, and an open then answers ESTALE,
	 * so the kernel looks the name up again and finds the new file */
	atomic_int replaced;
	/* the monotonic second of its last write through us: its size may
	 * still be settling in the kernel (inode_attr_timeout) */
	atomic_uint written_s;

	/* passthrough.c, under hfs.pt_lock: the kernel's id for this file as
	 * a backing file (0: none), and our open handles of each kind */
	int pt_backing;
	unsigned pt_opens;
	unsigned cached_opens;
	unsigned direct_opens;

	/* All below: protected by hfs.table_lock. */
	uint64_t refs;            /* kernel nlookup + one per child naming us as parent */
	struct hfs_inode *next;   /* hash chain, or the stale list once unhashed */
	int hashed;               /* in the hash (not replaced by a newer record) */
	struct hfs_inode *parent; /* directory of the latest lookup/creation/rename */
	char *name;               /* name in parent at that time (NULL for the root) */
};

/* fuse_file_info.fh of a file: the fd below in the low 32 bits, how the
 * kernel was told to treat the handle above them */
#define HFS_FH_DIRECT (1ull << 32) /* FOPEN_DIRECT_IO: writes skip the page cache */
#define HFS_FH_PT_SHIFT 33         /* enum pt_mode, passthrough.c */
static inline int hfs_fh_fd(const struct fuse_file_info *fi)
{
	return (int)(fi->fh & 0xffffffffu);
}

enum hfs_op {
	HFS_OP_LOOKUP, HFS_OP_FORGET, HFS_OP_GETATTR, HFS_OP_SETATTR,
	HFS_OP_READLINK, HFS_OP_MKNOD, HFS_OP_MKDIR, HFS_OP_UNLINK, HFS_OP_RMDIR,
	HFS_OP_SYMLINK, HFS_OP_RENAME, HFS_OP_LINK, HFS_OP_OPEN, HFS_OP_READ,
	HFS_OP_WRITE, HFS_OP_RELEASE, HFS_OP_FSYNC, HFS_OP_OPENDIR,
	HFS_OP_READDIR, HFS_OP_RELEASEDIR, HFS_OP_FSYNCDIR, HFS_OP_STATFS,
	HFS_OP_SETXATTR, HFS_OP_GETXATTR, HFS_OP_LISTXATTR, HFS_OP_REMOVEXATTR,
	HFS_OP_CREATE, HFS_OP_FLOCK, HFS_OP_FALLOCATE, HFS_OP_COPY_FILE_RANGE,
	HFS_OP_LSEEK, HFS_OP_IOCTL, HFS_OP__COUNT
};

struct hfs_ctl;

struct hfs {
	/* Set up by main() before the loop, read-only afterwards. */
	char source[PATH_MAX];     /* realpath of the protected tree */
	char mountpoint[PATH_MAX]; /* == source when mounted in place */
	char id[TREE_ID_LEN + 1];
	char sock_path[PATH_MAX];
	char log_path[PATH_MAX];
	int writeback;      /* -o writeback */
	int nosplice;       /* -o nosplice */
	int cached_writes;  /* -o cached_writes: no direct I/O for write-only opens */
	int dir_handles;    /* -o dir_handles: answer opendir with a handle */
	int readonly;       /* -o ro */
	int no_opendir;     /* the kernel opens directories without asking (init) */
	int acl;            /* the kernel enforces POSIX ACLs and leaves the
			     * caller's umask to us (init) */
	int pt_wanted;      /* root, no -o nopassthrough, no writeback cache */
	int pt_writes;      /* handles that write may pass through (-o nopassthrough_writes) */
	int pt_live_writes; /* with checkpoints on, tracked files' too (-o live_writes) */
	int pt_stack_depth;
	int pt_offered;            /* the kernel's INIT offers passthrough */
	int kp2_offered;           /* ... and FUSE_HANDLE_KILLPRIV_V2 */
	atomic_int killpriv;       /* we clear set-id bits: the kernel leaves it to us */
	uint64_t pt_init_unique;   /* the INIT request, to find its reply */
	atomic_int pt_init_seen, pt_init_done, pt_enabled, pt_warned;
	pthread_mutex_t pt_lock;
	struct pt_live *pt_live;   /* passthrough.c, pt_lock */
	int switch_creds;   /* running as root: act with the caller's ids */
	time_t started;
	struct fuse_session *se;
	int ready_fd;       /* pipe to the waiting parent, -1 once told */

	struct hfs_inode root;
	int mount_fd;      /* O_RDONLY on the source: open_by_handle_at's anchor */
	int use_handles;   /* root on a filesystem with file handles */
	long fd_budget;    /* kept O_PATH fds beyond which inodes keep handles */
	atomic_long kept_fds;
	atomic_long handle_recs; /* records without an fd (handle only) */
	/* fds of handle-only records kept for reuse (inode.c): most recent
	 * first; at most hfd_cap of them, closed when unused past that */
	pthread_mutex_t hfd_lock;
	struct hfs_inode *hfd_head, *hfd_tail;
	long hfd_count, hfd_cap;

	pthread_mutex_t table_lock;
	struct hfs_inode **table; /* hash buckets; table_lock */
	size_t table_size;        /* table_lock */
	size_t table_count;       /* table_lock */
	struct hfs_inode *stale;  /* unhashed records still referenced, via next; table_lock */

	atomic_uint_fast64_t ops[HFS_OP__COUNT];
	struct hfs_ctl *ctl;
	struct hfs_ckpt *ckpt; /* set before the loop; ckptd.c */
};

static inline struct hfs *hfs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

const char *hfs_op_name(enum hfs_op op);

/* passthrough.c */
/* PT_NONE: passthrough is off (or not a regular file); PT_DIRECT: direct
 * I/O beside handles that are not passthrough */
enum pt_mode { PT_NONE, PT_CACHED, PT_PASS, PT_PASS_DIRECT, PT_DIRECT };
int pt_setup(struct hfs *fs);
/* The mode of a new handle opened with flags, its fd below being fd; st:
 * the file's attributes if the caller has them fresh, else NULL. */
int pt_open_decide(struct hfs *fs, struct hfs_inode *in, int flags, int fd, const struct stat *st);
/* Handles that write may pass through: their writes would bypass us. */
int pt_writes_allowed(struct hfs *fs);
/* With checkpoints on: follow a writable passthrough handle while it is
 * open (call inside the turn gate, before the reply), and stop. */
void pt_track_setup(struct hfs *fs);
void pt_live_open(struct hfs *fs, fuse_req_t req, struct hfs_inode *in, int fd, int mode,
		  int flags, const struct stat *fresh);
void pt_live_close(struct hfs *fs, int fd);
void pt_reply_begin(struct hfs_inode *in, int mode);
void pt_reply_end(void);
void pt_release(struct hfs *fs, struct hfs_inode *in, int mode);

/* Count an op for status; with -d also name it in the log. */
static inline void hfs_count(struct hfs *fs, enum hfs_op op)
{
	atomic_fetch_add_explicit(&fs->ops[op], 1, memory_order_relaxed);
	log_debug("op %s", hfs_op_name(op));
}

/* inode.c */
int inode_table_init(struct hfs *fs, int root_fd);
void inode_table_free(struct hfs *fs);
struct hfs_inode *inode_get(struct hfs *fs, fuse_ino_t ino);
/* The inode number the mount shows for (dev, ino) below. */
ino_t inode_ino_out(struct hfs *fs, dev_t dev, ino_t ino);
/* How long the kernel may keep the attributes of in (of type mode). */
double inode_attr_timeout(const struct hfs_inode *in, mode_t mode);
/* Note that in was just written through us. */
void inode_wrote(struct hfs_inode *in);
/* Look name up below parent; on success *out holds one new kernel reference
 * and e is filled. ENOENT is returned as is (callers cache it). */
int inode_lookup(struct hfs *fs, struct hfs_inode *parent, const char *name,
		 struct fuse_entry_param *e);
void inode_forget(struct hfs *fs, struct hfs_inode *in, uint64_t n);

/* default of hfs.hfd_cap (-o handle_fds=N) */
#define HFS_HFD_CAP 1024

/* An O_PATH fd for an inode: its own (borrowed), the one kept from its
 * handle (leased), or, with keeping off, one opened from its handle (owned).
 * inode_fd_put ends the lease or closes the owned fd. */
struct inode_fd {
	int fd;
	int owned;
	struct hfs *fs;          /* with lease: */
	struct hfs_inode *lease; /* the record whose kept fd this is */
};
int inode_fd_get(struct hfs *fs, struct hfs_inode *in, struct inode_fd *out);
void inode_fd_put(struct inode_fd *f);
/* A new fd on the inode opened with flags (for file and dir handles). */
int inode_open(struct hfs *fs, struct hfs_inode *in, int flags);
/* Record that name in newparent now denotes the inode that has (dev, ino). */
void inode_renamed(struct hfs *fs, struct hfs_inode *newparent, const char *newname);
/* Around the removal or replacement of NAME in DIR: if the kernel knows
 * its file by a handle only, the record gets an fd opened before, once the
 * removal succeeded, so later ops still reach the file (a handle cannot
 * open a deleted one). A removal that failed pins nothing. */
struct inode_pin {
	int fd;
	dev_t dev;
	ino_t ino;
	struct file_handle *handle;
};
void inode_pin_prepare(struct hfs *fs, struct hfs_inode *dir, const char *name,
		       struct inode_pin *p);
void inode_pin_commit(struct hfs *fs, struct inode_pin *p, int removed);
/* After the tree below changed behind the kernel (a restore writes it
 * directly): drop what the kernel caches of relpath, its entry in the
 * deepest directory the kernel knows, and that directory's listing. Never
 * with mutations held off: the kernel may wait for requests in flight. */
struct inode_inval {
	fuse_ino_t last_dir; /* a directory already invalidated just before */
};
void inode_invalidate_path(struct hfs *fs, const char *relpath, struct inode_inval *memo);
/* Write out the kernel's dirty pages of every file open for writing, and
 * wait for them (mount_fd: the mount's root). */
void inode_sync_writers(struct hfs *fs, int mount_fd);
/* Is the file (dev, ino) below open for writing through the mount? */
int inode_open_for_write(struct hfs *fs, dev_t dev, ino_t ino);
/* A restore replaced or removed the file (dev, ino) below; gone: it has no
 * other name. The kernel's number for it (to invalidate), or 0. */
fuse_ino_t inode_replaced(struct hfs *fs, dev_t dev, ino_t ino, int gone);
/* Path of in relative to the root ("" for the root) as last seen. */
int inode_path(struct hfs *fs, struct hfs_inode *in, char *out, size_t size);
/* Visit in and the directories above it, nearest first, up to the root
 * (not visited), under the table lock: visit() must not block, and says
 * go on, stop, or take: hand the inode to the caller, with a reference, in
 * out (at most max; the walk stops once out is full). Returns how many were
 * taken; inode_put_all() drops them. */
enum inode_walk { INODE_WALK_NEXT, INODE_WALK_STOP, INODE_WALK_TAKE };
size_t inode_walk_up(struct hfs *fs, struct hfs_inode *in,
		     enum inode_walk (*visit)(struct hfs_inode *in, void *arg), void *arg,
		     struct hfs_inode **out, size_t max);
void inode_put_all(struct hfs *fs, struct hfs_inode **v, size_t n);

/* sys.c */
struct sys_creds {
	int switched;
	int umask_set;
	int raised;
};
int sys_creds_enter(struct hfs *fs, fuse_req_t req, struct sys_creds *c);
/* Before making a node with *mode: the caller's umask in this thread (or
 * taken off *mode) where the kernel leaves it to us. */
void sys_creds_umask(struct hfs *fs, fuse_req_t req, struct sys_creds *c, mode_t *mode);
/* After EACCES/EPERM as a caller that is not root: take on the caller's
 * own effective capabilities (the kernel already let it in with them:
 * CAP_DAC_OVERRIDE and friends) and say 1 if the op is worth a retry. */
int sys_creds_raise(fuse_req_t req, struct sys_creds *c);
void sys_creds_leave(struct sys_creds *c);
/* Reopen an O_PATH fd for I/O with flags. Returns the new fd or -errno. */
int sys_reopen(int fd, int flags);
void sys_proc_path(int fd, char out[64]);
int sys_stat(int fd, struct stat *st);
/* Clear set-user-ID, and set-group-ID if group-executable, as the kernel
 * does on a write or truncate by a caller without CAP_FSETID. fd: open
 * file, or (is_path) an O_PATH fd. */
int sys_kill_suidgid(int fd, int is_path); /* 1 when it cleared bits */
/* chmod of what an fd (O_PATH too) refers to; 0 or -errno */
int sys_chmod_fd(int fd, mode_t mode);

/* ops_*.c: the lowlevel ops table is assembled in main.c */
void hfs_init(void *userdata, struct fuse_conn_info *conn);
void hfs_destroy(void *userdata);
void hfs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name);
void hfs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup);
void hfs_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets);
void hfs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void hfs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int valid,
		 struct fuse_file_info *fi);
void hfs_readlink(fuse_req_t req, fuse_ino_t ino);
void hfs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
	       dev_t rdev);
void hfs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode);
void hfs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name);
void hfs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname);
void hfs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name);
void hfs_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name);
void hfs_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		fuse_ino_t newparent, const char *newname, unsigned int flags);
void hfs_statfs(fuse_req_t req, fuse_ino_t ino);

void hfs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void hfs_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		struct fuse_file_info *fi);
void hfs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
	      struct fuse_file_info *fi);
void hfs_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *bufv, off_t off,
		   struct fuse_file_info *fi);
void hfs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void hfs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);
void hfs_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
		   struct fuse_file_info *fi);
void hfs_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
			 struct fuse_file_info *fi_in, fuse_ino_t ino_out, off_t off_out,
			 struct fuse_file_info *fi_out, size_t len, int flags);
void hfs_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
	       struct fuse_file_info *fi);
void hfs_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
	       struct fuse_file_info *fi, unsigned flags, const void *in_buf, size_t in_bufsz,
	       size_t out_bufsz);
void hfs_flock(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, int op);

void hfs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void hfs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		 struct fuse_file_info *fi);
void hfs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi);
void hfs_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void hfs_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);

void hfs_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
		  size_t size, int flags);
void hfs_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size);
void hfs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);
void hfs_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name);

/* track.c: bracket every mutation; a checkpoint never sees one half done.
 * Paths excluded from checkpoints are not tracked (no bracket at all). */
struct turns;
struct track {
	struct turns *turns; /* non-NULL while inside the turn gate */
	int continuation;    /* the rest of a write() already begun */
	/* directories in which the operation creates or removes a name that
	 * decides whether they are a git repository or a virtualenv, and
	 * their verdict before it */
	struct hfs_inode *kind_dir[2];
	int kind_before[2];
};
/* The content or attributes of in change. */
void track_inode(fuse_req_t req, struct hfs_inode *in, struct track *tk);
/* A write of size bytes at off: like track_inode, and keeps the halves of
 * a write() the kernel split at a page boundary in one turn. */
void track_write(fuse_req_t req, struct hfs_inode *in, off_t off, size_t size,
		 struct track *tk);
/* name in dir is created or removed. */
void track_name(fuse_req_t req, struct hfs_inode *dir, const char *name, struct track *tk);
/* Two names change (rename, exchange); d2 may be NULL. */
void track_rename(fuse_req_t req, struct hfs_inode *d1, const char *n1,
		  struct hfs_inode *d2, const char *n2, struct track *tk);
void track_done(fuse_req_t req, struct track *tk);
/* Is in, or a directory above it, a git repository or a virtualenv (whose
 * contents are excluded whatever their names)? Cached per directory. */
int track_foreign(struct hfs *fs, struct hfs_inode *in);

/* ctl.c */
int ctl_start(struct hfs *fs, struct herr *e);
void ctl_stop(struct hfs *fs);
