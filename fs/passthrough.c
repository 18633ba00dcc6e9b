/* Kernel passthrough for files opened read-only (Linux 6.9+, as root).
 *
 * A read-only handle can change nothing, so its reads and mappings need not
 * pass through us at all: the kernel can serve them from the file below
 * ("backing file") at the speed of the disk below. libfuse 3.14 predates the
 * feature, so this file speaks the two bits of protocol it does not know:
 * through libfuse's custom I/O hooks it offers FUSE_PASSTHROUGH in the INIT
 * reply when the kernel asks for it, and marks an OPEN reply as passthrough
 * with the backing id we registered for the inode.
 *
 * The kernel keeps one mode per inode: while any handle is in passthrough
 * mode, no handle may use the page cache, and all passthrough handles share
 * one backing file. So per inode we count handles of each kind and decide:
 * - read-only opens go passthrough unless cached handles are open;
 * - read-write opens use the page cache unless passthrough handles are
 *   open; then they are passthrough with direct I/O: reads and writes still
 *   come to us (tracked for checkpoints like every write), maps go to the
 *   backing file, which is opened read-only, so nothing writes it behind
 *   our back;
 * - write-only opens use direct I/O, which has no mode (ops_file.c).
 * Our counts drop on RELEASE, which the kernel sends after dropping the
 * handle's mode, so they never claim less than the kernel holds.
 * Anything missing (older kernel, not root, a backing file on a stack too
 * deep) falls back to the page cache, per open. */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <fcntl.h>
#include <unistd.h>
#include <linux/fuse.h>

#include "hfs.h"

/* From the kernel's uapi/linux/fuse.h (7.40), absent from older headers. */
#define PT_FUSE_INIT_EXT (1u << 30)
#define PT_FUSE_PASSTHROUGH_FLAGS2 (1u << (37 - 32))
#define PT_FOPEN_PASSTHROUGH (1u << 7)
#define PT_FOPEN_KEEP_CACHE (1u << 1)
#define PT_FUSE_INIT_OPCODE 26
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
		    iov[1].iov_len == PT_OPEN_OUT_SIZE) {
			char *out = iov[1].iov_base;
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
	if (!fs->pt_wanted)
		return 0;
	/* a backing file must sit lower than us: one level above ext4 and
	 * friends, two above an overlay (a container's root) */
	fs->pt_stack_depth = 1;
	if (fstatfs(fs->root.fd, &sfs) == 0 && sfs.f_type == 0x794c7630)
		fs->pt_stack_depth = 2;
	r = fuse_session_custom_io(fs->se, &io, fuse_session_fd(fs->se));
	if (r < 0) {
		log_warn("passthrough off: libfuse refused custom I/O (%s)", strerror(-r));
		fs->pt_wanted = 0;
	}
	return 0;
}

/* The kernel's id for the file below in, registered once for all its
 * passthrough handles; 0 if it cannot be had. pt_lock held. */
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

int pt_open_decide(struct hfs *fs, struct hfs_inode *in, int flags, int fd, int may_pass)
{
	int acc = flags & O_ACCMODE, mode = PT_CACHED;

	if (!atomic_load(&fs->pt_enabled) || !S_ISREG(in->type) || acc == O_WRONLY)
		return PT_NONE;
	pthread_mutex_lock(&fs->pt_lock);
	if (may_pass && acc == O_RDONLY && !(flags & O_TRUNC) && in->cached_opens == 0)
		mode = pt_backing_get(fs, in, fd) ? PT_PASS : PT_CACHED;
	if (mode == PT_CACHED && in->pt_opens > 0)
		mode = PT_PASS_DIRECT; /* cannot share the inode with passthrough handles */
	if (mode == PT_CACHED)
		in->cached_opens++;
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
	} else if (in->pt_opens > 0 && --in->pt_opens == 0 && in->pt_backing > 0) {
		uint32_t id = (uint32_t)in->pt_backing;

		if (ioctl(fuse_session_fd(fs->se), PT_IOC_BACKING_CLOSE, &id) < 0)
			log_warn("cannot release passthrough backing %u: %s", id,
				 strerror(errno));
		in->pt_backing = 0;
	}
	pthread_mutex_unlock(&fs->pt_lock);
}
