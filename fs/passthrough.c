/* Kernel passthrough of opened files (Linux 6.9+, as root).
 *
 * The kernel can serve a handle's reads, writes and maps from the file
 * below ("backing file") at the speed of the disk below, without us.
 * libfuse 3.14 predates the feature, so this file speaks the bits of
 * protocol it does not know: through libfuse's custom I/O hooks it offers
 * FUSE_PASSTHROUGH (and FUSE_HANDLE_KILLPRIV_V2) in the INIT reply when
 * the kernel asks for them, and marks an OPEN or CREATE reply as
 * passthrough with the backing id we registered for the inode.
 *
 * The kernel keeps one mode per inode: while any handle is in passthrough
 * mode, no handle may use the page cache, and all passthrough handles share
 * one backing file; it fails an open that breaks the rule with EIO, after
 * our answer, and it may apply concurrent answers in any order. So per
 * inode we count the handles we answered of each kind, from the answer to
 * their release, and decide:
 * - while passthrough handles are counted, every open is passthrough: those
 *   that may not write through the kernel (passthrough writes off,
 *   with checkpoints on unless -o live_writes, a set-id file's writers, whose bits
 *   we clear) get direct I/O, so reads and writes come to us and maps go
 *   to the backing file;
 * - while page-cache or plain direct I/O handles are counted, none is:
 *   write-only opens get direct I/O, the others the page cache (the kernel
 *   fails a direct open of an inode with a backing file too);
 * - with nothing counted, an open that may pass or is write-only is
 *   passthrough (write-only with direct I/O), a read-write one that may not
 *   pass uses the page cache.
 * With -o live_writes, a writable passthrough handle of a tracked file is
 * "live" (turn.h)
 * from its open to its release: below, the pt_live list.
 * Our counts drop on RELEASE, which the kernel sends after dropping the
 * handle's mode, so they never claim less than the kernel holds.
 * Anything missing (older kernel, not root, a backing file on a stack too
 * deep) falls back to the page cache, per open. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <fcntl.h>
#include <unistd.h>
#include <linux/fuse.h>

#include "ckptd.h"
#include "hfs.h"
#include "turn.h"

/* From the kernel's uapi/linux/fuse.h (7.40), absent from older headers. */
#define PT_FUSE_INIT_EXT (1u << 30)
#define PT_FUSE_PASSTHROUGH_FLAGS2 (1u << (37 - 32))
#define PT_FOPEN_PASSTHROUGH (1u << 7)
#define PT_FOPEN_KEEP_CACHE (1u << 1)
#define PT_FUSE_INIT_OPCODE 26
#define PT_FUSE_HANDLE_KILLPRIV_V2 (1u << 28)
struct pt_backing_map {
	int32_t fd;
	uint32_t flags;
	uint64_t padding;
};
#define PT_IOC_BACKING_OPEN _IOW(229, 1, struct pt_backing_map)
#define PT_IOC_BACKING_CLOSE _IOW(229, 2, uint32_t)

/* Layouts of the messages we read or patch, by offset (the structs of the
 * installed headers may be older than the protocol the kernel speaks). */
#define PT_IN_HDR 40  /* fuse_in_header */
#define PT_OUT_HDR 16 /* fuse_out_header */
#define PT_INIT_IN_FLAGS 12
#define PT_INIT_IN_FLAGS2 16
#define PT_INIT_OUT_FLAGS 12
#define PT_INIT_OUT_FLAGS2 32
#define PT_INIT_OUT_STACK 36
#define PT_INIT_OUT_MIN 40
#define PT_OPEN_OUT_FLAGS 8
#define PT_OPEN_OUT_BACKING 12
#define PT_OPEN_OUT_SIZE 16
#define PT_ENTRY_OUT_SIZE 128 /* fuse_entry_out, before a CREATE's open_out */

/* The backing id to put in the OPEN reply this thread is sending, 0 for
 * none: set around fuse_reply_open(), which writes the reply from the
 * calling thread. */
static __thread int pt_reply_backing;
static __thread int pt_reply_direct;

static uint32_t pt_get32(const void *p, size_t off)
{
	uint32_t v;

	memcpy(&v, (const char *)p + off, sizeof(v));
	return v;
}

static void pt_put32(void *p, size_t off, uint32_t v)
{
	memcpy((char *)p + off, &v, sizeof(v));
}

static ssize_t pt_read(int fd, void *buf, size_t len, void *userdata)
{
	struct hfs *fs = userdata;
	ssize_t n = read(fd, buf, len);

	if (atomic_load_explicit(&fs->pt_init_seen, memory_order_relaxed) || n < PT_IN_HDR)
		return n;
	if (pt_get32(buf, 4) == PT_FUSE_INIT_OPCODE && n >= PT_IN_HDR + PT_INIT_IN_FLAGS2 + 4) {
		const char *in = (const char *)buf + PT_IN_HDR;
		uint32_t flags = pt_get32(in, PT_INIT_IN_FLAGS);
		uint32_t flags2 = (flags & PT_FUSE_INIT_EXT) ? pt_get32(in, PT_INIT_IN_FLAGS2) : 0;

		memcpy(&fs->pt_init_unique, (const char *)buf + 8, sizeof(uint64_t));
		fs->pt_offered = (flags2 & PT_FUSE_PASSTHROUGH_FLAGS2) != 0;
		fs->kp2_offered = (flags & PT_FUSE_HANDLE_KILLPRIV_V2) != 0;
		atomic_store(&fs->pt_init_seen, 1);
	}
	return n;
}

static void pt_patch_init(struct hfs *fs, struct iovec *iov, int count)
{
	char *out;

	if (count < 2 || iov[1].iov_len < PT_INIT_OUT_MIN)
		return;
	out = iov[1].iov_base;
	if (fs->kp2_offered && !fs->writeback) {
		/* We clear set-id bits on write, truncate and chown ourselves
		 * (ops_file.c, ops_entry.c). The kernel then marks the mount
		 * SB_NOSEC: no security.capability lookup before each write,
		 * no attribute refresh before each chown. */
		pt_put32(out, PT_INIT_OUT_FLAGS,
			 pt_get32(out, PT_INIT_OUT_FLAGS) | PT_FUSE_HANDLE_KILLPRIV_V2);
		atomic_store(&fs->killpriv, 1);
		log_info("set-id bits: cleared by us on write, truncate and chown");
	}
	if (!fs->pt_offered || !fs->pt_wanted) {
		log_info("passthrough: %s", fs->pt_wanted ? "the kernel does not offer it"
							 : "off");
		return;
	}
	pt_put32(out, PT_INIT_OUT_FLAGS, pt_get32(out, PT_INIT_OUT_FLAGS) | PT_FUSE_INIT_EXT);
	pt_put32(out, PT_INIT_OUT_FLAGS2,
		 pt_get32(out, PT_INIT_OUT_FLAGS2) | PT_FUSE_PASSTHROUGH_FLAGS2);
	pt_put32(out, PT_INIT_OUT_STACK, (uint32_t)fs->pt_stack_depth);
	atomic_store(&fs->pt_enabled, 1);
	log_info("passthrough: read-only opens are served by the kernel from the files below");
	if (fs->pt_writes)
		log_info("passthrough: so are opens for writing (%s)",
			 fs->pt_live_writes ? "with checkpoints on, followed as live files"
					    : "while checkpoints are off");
}

static ssize_t pt_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	struct hfs *fs = userdata;

	if (count >= 1 && iov[0].iov_len >= PT_OUT_HDR) {
		uint64_t unique;
		int32_t error;

		memcpy(&error, (char *)iov[0].iov_base + 4, sizeof(error));
		memcpy(&unique, (char *)iov[0].iov_base + 8, sizeof(unique));
		if (pt_reply_backing && error == 0 && count == 2 &&
		    (iov[1].iov_len == PT_OPEN_OUT_SIZE ||
		     iov[1].iov_len == PT_ENTRY_OUT_SIZE + PT_OPEN_OUT_SIZE)) {
			/* OPEN: fuse_open_out; CREATE: fuse_entry_out, then it */
			char *out = (char *)iov[1].iov_base + iov[1].iov_len - PT_OPEN_OUT_SIZE;
			uint32_t fl = pt_get32(out, PT_OPEN_OUT_FLAGS);

			fl = (fl & ~PT_FOPEN_KEEP_CACHE) | PT_FOPEN_PASSTHROUGH;
			if (pt_reply_direct)
				fl |= FOPEN_DIRECT_IO;
			pt_put32(out, PT_OPEN_OUT_FLAGS, fl);
			pt_put32(out, PT_OPEN_OUT_BACKING, (uint32_t)pt_reply_backing);
		} else if (!atomic_load(&fs->pt_init_done) && unique == fs->pt_init_unique &&
			   error == 0) {
			/* the thread that read INIT answers it, before any
			 * other request is sent to us */
			pt_patch_init(fs, iov, count);
			atomic_store(&fs->pt_init_done, 1);
		}
	}
	return writev(fd, iov, count);
}

static ssize_t pt_splice(int fdin, off_t *offin, int fdout, off_t *offout, size_t len,
			 unsigned int flags, void *userdata)
{
	(void)userdata;
	return splice(fdin, offin, fdout, offout, len, flags);
}

int pt_setup(struct hfs *fs)
{
	static const struct fuse_custom_io io = {
		.read = pt_read,
		.writev = pt_writev,
		.splice_receive = pt_splice,
		.splice_send = pt_splice,
	};
	struct statfs sfs;
	int r;

	pthread_mutex_init(&fs->pt_lock, NULL);
	/* a backing file must sit lower than us: one level above ext4 and
	 * friends, two above an overlay (a container's root) */
	fs->pt_stack_depth = 1;
	if (fstatfs(fs->root.fd, &sfs) == 0 && sfs.f_type == 0x794c7630)
		fs->pt_stack_depth = 2;
	r = fuse_session_custom_io(fs->se, &io, fuse_session_fd(fs->se));
	if (r < 0) {
		log_warn("passthrough off: libfuse refused custom I/O (%s)", strerror(-r));
		fs->pt_wanted = 0;
		fs->kp2_offered = 0;
	}
	return 0;
}

/* May a handle that writes be passthrough? Its writes do not pass through
 * us: with checkpoints on, the handle is "live" (turn.h) while open. */
int pt_writes_allowed(struct hfs *fs)
{
	return atomic_load(&fs->pt_enabled) && fs->pt_writes;
}

/* Live handles: writable passthrough handles while checkpoints are on,
 * under pt_lock. */
struct pt_live {
	struct pt_live *next;
	struct hfs_inode *in; /* the kernel holds it while the handle is open */
	int fd;               /* the handle's fd below */
	pid_t pid;            /* who opened it: the changes are theirs */
	uid_t uid;
	struct timespec ctime; /* as last seen */
	off_t size;
};

/* Checkpoints on, or paused (a tree over the file cap): a handle opened
 * while paused must not write below us once they are on again, and a
 * live one must be known at both ends. */
static struct turns *pt_turns(struct hfs *fs)
{
	return fs->ckpt ? ckptd_turns_any(fs->ckpt) : NULL;
}

/* Has it changed since last seen? Remembers what it saw. */
static int pt_live_changed(struct pt_live *l)
{
	struct stat st;

	if (fstat(l->fd, &st) < 0)
		return 0;
	if (st.st_ctim.tv_sec == l->ctime.tv_sec && st.st_ctim.tv_nsec == l->ctime.tv_nsec &&
	    st.st_size == l->size)
		return 0;
	l->ctime = st.st_ctim;
	l->size = st.st_size;
	return 1;
}

/* Mark it dirty; its path (a copy, NULL if it has none we can name). */
static char *pt_live_mark(struct hfs *fs, struct turns *t, struct pt_live *l)
{
	char path[PATH_MAX];

	if (inode_path(fs, l->in, path, sizeof(path)) < 0) {
		turns_need_full_scan(t);
		return NULL;
	}
	if (ckptd_excluded(fs->ckpt, path, 0) || track_foreign(fs, l->in))
		return NULL;
	turns_mark(t, path);
	return strdup(path);
}

static size_t pt_live_mark_all(void *arg, struct turns *t, char ***paths)
{
	struct hfs *fs = arg;
	size_t n = 0, cap = 0;
	char **v = NULL;

	pthread_mutex_lock(&fs->pt_lock);
	for (struct pt_live *l = fs->pt_live; l; l = l->next)
		cap++;
	v = calloc(cap ? cap : 1, sizeof(*v));
	for (struct pt_live *l = fs->pt_live; l; l = l->next) {
		char *p = pt_live_mark(fs, t, l);
		if (p && v)
			v[n++] = p;
		else
			free(p);
	}
	pthread_mutex_unlock(&fs->pt_lock);
	*paths = v;
	return n;
}

static int pt_live_poll(void *arg, struct turns *t)
{
	struct hfs *fs = arg;
	int n = 0;

	pthread_mutex_lock(&fs->pt_lock);
	for (struct pt_live *l = fs->pt_live; l; l = l->next) {
		if (pt_live_changed(l)) {
			free(pt_live_mark(fs, t, l));
			turns_note(t, l->pid, l->uid);
			n++;
		}
	}
	pthread_mutex_unlock(&fs->pt_lock);
	return n;
}

static const struct turns_live_ops pt_live_ops = {
	.mark_all = pt_live_mark_all,
	.poll = pt_live_poll,
};

void pt_track_setup(struct hfs *fs)
{
	struct turns *t = pt_turns(fs);

	if (t && fs->pt_wanted && fs->pt_live_writes)
		turns_live_setup(t, &pt_live_ops, fs);
}

void pt_live_open(struct hfs *fs, fuse_req_t req, struct hfs_inode *in, int fd, int mode,
		  int flags, const struct stat *fresh)
{
	struct turns *t = pt_turns(fs);
	struct pt_live *l;
	struct stat st;

	/* without live_writes, no writer passes while checkpoints are on */
	if (!t || !fs->pt_live_writes || mode != PT_PASS || ((flags & O_ACCMODE) == O_RDONLY))
		return;
	l = calloc(1, sizeof(*l));
	if (!l) {
		turns_need_full_scan(t); /* cannot follow it: re-validate all */
		return;
	}
	l->in = in;
	l->fd = fd;
	l->pid = fuse_req_ctx(req)->pid;
	l->uid = fuse_req_ctx(req)->uid;
	if (!fresh && fstat(fd, &st) == 0)
		fresh = &st;
	if (fresh) {
		l->ctime = fresh->st_ctim;
		l->size = fresh->st_size;
	}
	pthread_mutex_lock(&fs->pt_lock);
	l->next = fs->pt_live;
	fs->pt_live = l;
	pthread_mutex_unlock(&fs->pt_lock);
	turns_live_add(t, 1);
}

void pt_live_close(struct hfs *fs, int fd)
{
	struct turns *t = pt_turns(fs);
	struct pt_live *l = NULL;

	if (!t)
		return;
	pthread_mutex_lock(&fs->pt_lock);
	for (struct pt_live **p = &fs->pt_live; *p; p = &(*p)->next) {
		if ((*p)->fd == fd) {
			l = *p;
			*p = l->next;
			/* what it wrote since last seen: the next checkpoint's */
			if (pt_live_changed(l)) {
				free(pt_live_mark(fs, t, l));
				turns_note(t, l->pid, l->uid);
			}
			break;
		}
	}
	pthread_mutex_unlock(&fs->pt_lock);
	if (l) {
		turns_live_add(t, -1);
		free(l);
	}
}

/* st: the file's attributes if the caller has them fresh, or NULL */
static int pt_setid(int fd, const struct stat *st)
{
	struct stat own;

	if (!st) {
		if (fstat(fd, &own) < 0)
			return 1;
		st = &own;
	}
	return (st->st_mode & (S_ISUID | S_ISGID)) != 0;
}

/* The kernel's id for the file below in, registered once for all its
 * passthrough handles; 0 if it cannot be had. The registered file only
 * names the file below: the kernel opens a backing file of its own for each
 * handle, with that handle's flags and our credentials (backing_file_open
 * in fs/fuse/passthrough.c), so one registration serves readers and
 * writers alike, and a read-only one does not hold the file below open for
 * writing (ETXTBSY) while only readers have it. pt_lock held. */
static int pt_backing_get(struct hfs *fs, struct hfs_inode *in, int fd)
{
	struct pt_backing_map map = { .fd = fd };
	int id;

	if (in->pt_backing > 0)
		return in->pt_backing;
	id = ioctl(fuse_session_fd(fs->se), PT_IOC_BACKING_OPEN, &map);
	if (id <= 0) {
		if (!atomic_exchange(&fs->pt_warned, 1))
			log_info("passthrough unavailable for some files (%s): they use the page cache",
				 strerror(errno));
		return 0;
	}
	in->pt_backing = id;
	return id;
}

/* May a handle that writes this file write through the kernel? Where
 * allowed, and not on a set-id file: a write through the kernel would keep
 * bits that, with FUSE_HANDLE_KILLPRIV_V2, we clear on our writes. With
 * checkpoints on, only with -o live_writes: a tracked file's writes must
 * come to us, to wait for a turn's checkpoint or a rollback (one the
 * kernel sent to the disk without us could fall between a rollback's
 * safety checkpoint and its restore, and be lost), and a file excluded
 * when opened may be renamed to a tracked name with the handle open. */
static int pt_may_write_through(struct hfs *fs, const struct stat *st, int fd)
{
	if (!pt_writes_allowed(fs) || pt_setid(fd, st))
		return 0;
	return !pt_turns(fs) || fs->pt_live_writes;
}

int pt_open_decide(struct hfs *fs, struct hfs_inode *in, int flags, int fd, const struct stat *st)
{
	int acc = flags & O_ACCMODE, mode = PT_CACHED;
	int may_pass, direct;

	if (!atomic_load(&fs->pt_enabled) || !S_ISREG(in->type))
		return PT_NONE;
	may_pass = (acc == O_RDONLY && !(flags & O_TRUNC)) ||
		   pt_may_write_through(fs, st, fd);
	/* a write-only handle uses direct I/O unless the page cache is asked
	 * for (ops_file.c) */
	direct = acc == O_WRONLY && !fs->writeback && !fs->cached_writes;
	pthread_mutex_lock(&fs->pt_lock);
	if (in->pt_opens > 0) {
		/* The kernel holds a backing file for the inode, or will once
		 * it has our answer: every open of it must be passthrough too,
		 * or the kernel fails it with EIO after we answered
		 * (fuse_file_io_open), an O_TRUNC already done. One that may
		 * not pass its writes through gets direct I/O: its reads and
		 * writes still come to us. */
		mode = may_pass ? PT_PASS : PT_PASS_DIRECT;
	} else if (in->cached_opens > 0 || in->direct_opens > 0) {
		/* No passthrough now: the kernel may apply our answers in any
		 * order, so a passthrough one must wait until every handle
		 * answered otherwise is released (counted below, direct ones
		 * too: the kernel fails a direct open of an inode that has a
		 * backing file as well). */
		mode = direct ? PT_DIRECT : PT_CACHED;
	} else if ((may_pass || direct) && pt_backing_get(fs, in, fd)) {
		/* a write-only handle that may not pass gets passthrough with
		 * direct I/O: counted, so no reader can race past it */
		mode = may_pass ? PT_PASS : PT_PASS_DIRECT;
	} else if (direct) {
		mode = PT_DIRECT;
	}
	if (mode == PT_CACHED)
		in->cached_opens++;
	else if (mode == PT_DIRECT)
		in->direct_opens++;
	else
		in->pt_opens++;
	pthread_mutex_unlock(&fs->pt_lock);
	return mode;
}

void pt_reply_begin(struct hfs_inode *in, int mode)
{
	if (mode == PT_PASS || mode == PT_PASS_DIRECT) {
		pt_reply_backing = in->pt_backing; /* stable while pt_opens > 0 */
		pt_reply_direct = mode == PT_PASS_DIRECT;
	}
}

void pt_reply_end(void)
{
	pt_reply_backing = 0;
	pt_reply_direct = 0;
}

void pt_release(struct hfs *fs, struct hfs_inode *in, int mode)
{
	if (mode == PT_NONE)
		return;
	pthread_mutex_lock(&fs->pt_lock);
	if (mode == PT_CACHED) {
		if (in->cached_opens > 0)
			in->cached_opens--;
	} else if (mode == PT_DIRECT) {
		if (in->direct_opens > 0)
			in->direct_opens--;
	} else if (in->pt_opens > 0 && --in->pt_opens == 0 && in->pt_backing > 0) {
		uint32_t id = (uint32_t)in->pt_backing;

		if (ioctl(fuse_session_fd(fs->se), PT_IOC_BACKING_CLOSE, &id) < 0)
			log_warn("cannot release passthrough backing %u: %s", id,
				 strerror(errno));
		in->pt_backing = 0;
	}
	pthread_mutex_unlock(&fs->pt_lock);
}
