/* posix_ops battery "io": data paths: large and odd-sized reads and
 * writes, shared writable mmap against read(), fallocate with its modes,
 * copy_file_range, lseek SEEK_DATA/SEEK_HOLE and O_DIRECT. */
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "posix_ops.h"

#define PO_BIG (3 * 1024 * 1024 + 17)

static void po_io_big(void)
{
	char st[256], h[64];
	unsigned char *buf = malloc(PO_BIG), *back = malloc(PO_BIG);
	size_t off = 0, chunk = 65536 + 3;
	int fd;

	if (!buf || !back)
		abort();
	po_pattern(buf, PO_BIG, 1);
	fd = open("big", O_RDWR | O_CREAT | O_TRUNC, 0644);
	while (off < PO_BIG) {
		size_t n = PO_BIG - off < chunk ? PO_BIG - off : chunk;
		ssize_t w = write(fd, buf + off, n);

		if (w <= 0)
			break;
		off += (size_t)w;
	}
	po_note("write.big", "written=%zu want=%016llx %s %s", off,
		(unsigned long long)po_hash_bytes(buf, PO_BIG),
		po_fstat_str(fd, st, sizeof(st)),
		po_hash_path("big", h, sizeof(h)));
	memset(back, 0, PO_BIG);
	off = 0;
	lseek(fd, 0, SEEK_SET);
	for (;;) {
		ssize_t n = read(fd, back + off, 4093);

		if (n <= 0)
			break;
		off += (size_t)n;
	}
	po_note("read.odd_chunks", "got=%zu equal=%s", off,
		off == PO_BIG && memcmp(buf, back, PO_BIG) == 0 ? "yes" : "no");
	PO_CHECK("pwrite.middle", po_sys(pwrite(fd, "MIDDLE", 6, 1000000)),
		NULL);
	memset(back, 0, 16);
	PO_CHECK("pread.middle", po_sys(pread(fd, back, 10, 999998)),
		"data=%016llx", (unsigned long long)po_hash_bytes(back, 10));
	PO_CHECK("pread.past_eof", po_sys(pread(fd, back, 10, PO_BIG + 100)),
		NULL);
	PO_CHECK("pwrite.past_eof", po_sys(pwrite(fd, "E", 1, PO_BIG + 100)),
		"%s %s", po_fstat_str(fd, st, sizeof(st)),
		po_hash_path("big", h, sizeof(h)));
	PO_CHECK("fsync", po_sys(fsync(fd)), NULL);
	PO_CHECK("fdatasync", po_sys(fdatasync(fd)), NULL);
	close(fd);
	free(buf);
	free(back);
}

static void po_io_mmap(void)
{
	char st[256], h[64], buf[32];
	int fd = open("mm", O_RDWR | O_CREAT | O_TRUNC, 0644);
	int fd2;
	char *m;

	PO_CHECK("ftruncate.for_mmap", po_sys(ftruncate(fd, 8192)), NULL);
	m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	PO_CHECK("mmap.shared", m == MAP_FAILED ? -errno : 0, NULL);
	if (m == MAP_FAILED) {
		close(fd);
		return;
	}
	memcpy(m + 100, "written via mmap", 16);
	memcpy(m + 5000, "second page", 11);
	fd2 = open("mm", O_RDONLY);
	memset(buf, 0, sizeof(buf));
	PO_CHECK("pread.sees_mmap_store", po_sys(pread(fd2, buf, 16, 100)),
		"data=%s", buf);
	PO_CHECK("pwrite.for_mapping", po_sys(pwrite(fd, "via write", 9, 200)),
		"mapping=%.9s", m + 200);
	PO_CHECK("msync", po_sys(msync(m, 8192, MS_SYNC)), NULL);
	PO_CHECK("munmap", po_sys(munmap(m, 8192)), NULL);
	close(fd2);
	close(fd);
	po_note("mmap.after_close", "%s %s", po_lstat_str("mm", st, sizeof(st)),
		po_hash_path("mm", h, sizeof(h)));
	/* a private mapping's stores never reach the file */
	fd = open("mm", O_RDWR);
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (m != MAP_FAILED) {
		memcpy(m, "private", 7);
		munmap(m, 4096);
	}
	close(fd);
	po_note("mmap.private_not_written", "%s",
		po_hash_path("mm", h, sizeof(h)));
	/* a shared writable mapping of a read-only fd is refused */
	fd = open("mm", O_RDONLY);
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	PO_CHECK("mmap.shared_rw_on_rdonly_fd", m == MAP_FAILED ? -errno : 0,
		NULL);
	if (m != MAP_FAILED)
		munmap(m, 4096);
	close(fd);
}

static const char *po_io_alloc(int fd, char *buf, size_t size)
{
	struct stat s;

	if (fstat(fd, &s) < 0)
		return "fstat failed";
	snprintf(buf, size, "size=%lld allocated_kib=%lld",
		 (long long)s.st_size, (long long)s.st_blocks / 2);
	return buf;
}

static void po_io_fallocate(void)
{
	char st[256], h[64];
	unsigned char data[65536];
	int fd = open("fa", O_RDWR | O_CREAT | O_TRUNC, 0644);

	PO_CHECK("fallocate.extend", po_sys(fallocate(fd, 0, 0, 65536)), "%s",
		po_io_alloc(fd, st, sizeof(st)));
	PO_CHECK("fallocate.keep_size",
		po_sys(fallocate(fd, FALLOC_FL_KEEP_SIZE, 65536, 65536)), "%s",
		po_io_alloc(fd, st, sizeof(st)));
	po_pattern(data, sizeof(data), 7);
	pwrite(fd, data, sizeof(data), 0);
	fsync(fd);
	PO_CHECK("fallocate.punch_hole",
		po_sys(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				 8192, 16384)),
		"%s %s", po_io_alloc(fd, st, sizeof(st)),
		po_hash_path("fa", h, sizeof(h)));
	PO_CHECK("lseek.hole_after_punch", po_sys(lseek(fd, 0, SEEK_HOLE)),
		NULL);
	PO_CHECK("lseek.data_after_punch", po_sys(lseek(fd, 8192, SEEK_DATA)),
		NULL);
	PO_CHECK("fallocate.punch_without_keep_size",
		po_sys(fallocate(fd, FALLOC_FL_PUNCH_HOLE, 0, 4096)), NULL);
	PO_CHECK("fallocate.zero_range",
		po_sys(fallocate(fd, FALLOC_FL_ZERO_RANGE, 40960, 4096)),
		"%s %s", po_io_alloc(fd, st, sizeof(st)),
		po_hash_path("fa", h, sizeof(h)));
	/* refused by the kernel's FUSE client: see posix_known.txt */
	PO_CHECK("fallocate.collapse_range",
		 po_sys(fallocate(fd, FALLOC_FL_COLLAPSE_RANGE, 0, 4096)),
		 "%s %s", po_io_alloc(fd, st, sizeof(st)),
		 po_hash_path("fa", h, sizeof(h)));
	/* the file stays comparable whatever the line above did */
	ftruncate(fd, 61440);
	pwrite(fd, data, 4096, 0);
	PO_CHECK("fallocate.bad_len", po_sys(fallocate(fd, 0, 0, 0)), NULL);
	close(fd);
	fd = open("fa", O_RDONLY);
	PO_CHECK("fallocate.rdonly_fd", po_sys(fallocate(fd, 0, 0, 4096)),
		NULL);
	close(fd);
}

static void po_io_copy_range(void)
{
	char h[64], st[256];
	unsigned char *data = malloc(200000);
	int src, dst;
	loff_t in = 1000, out = 0;
	long total = 0;

	po_pattern(data, 200000, 3);
	po_write_file("cs", data, 200000, 0644);
	free(data);
	src = open("cs", O_RDONLY);
	dst = open("cd", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	for (;;) {
		ssize_t n = copy_file_range(src, &in, dst, &out,
					    150000 - (size_t)total, 0);

		if (n <= 0) {
			if (n < 0)
				total = -errno;
			break;
		}
		total += n;
		if (total >= 150000)
			break;
	}
	PO_CHECK("copy_file_range", total, "in=%lld out=%lld %s %s",
		(long long)in, (long long)out,
		po_lstat_str("cd", st, sizeof(st)),
		po_hash_path("cd", h, sizeof(h)));
	PO_CHECK("copy_file_range.implicit_offsets",
		po_sys(copy_file_range(src, NULL, dst, NULL, 5000, 0)),
		"src_pos=%lld dst_pos=%lld", (long long)lseek(src, 0, SEEK_CUR),
		(long long)lseek(dst, 0, SEEK_CUR));
	PO_CHECK("copy_file_range.past_eof",
		po_sys(copy_file_range(src, &(loff_t){ 300000 }, dst,
				       &(loff_t){ 0 }, 100, 0)),
		NULL);
	PO_CHECK("copy_file_range.from_wronly",
		po_sys(copy_file_range(dst, &(loff_t){ 0 }, src,
				       &(loff_t){ 0 }, 100, 0)),
		NULL);
	close(dst);
	dst = open("cs", O_RDWR);
	PO_CHECK("copy_file_range.overlap_same_file",
		po_sys(copy_file_range(dst, &(loff_t){ 0 }, dst,
				       &(loff_t){ 100 }, 1000, 0)),
		NULL);
	PO_CHECK("copy_file_range.same_file_disjoint",
		po_sys(copy_file_range(dst, &(loff_t){ 0 }, dst,
				       &(loff_t){ 100000 }, 1000, 0)),
		"%s", po_hash_path("cs", h, sizeof(h)));
	close(dst);
	close(src);
}

static void po_io_seek(void)
{
	unsigned char data[4096];
	int fd = open("sp", O_RDWR | O_CREAT | O_TRUNC, 0644);
	char st[256];

	po_pattern(data, sizeof(data), 9);
	pwrite(fd, data, sizeof(data), 0);
	pwrite(fd, data, sizeof(data), 1048576);
	fsync(fd);
	po_note("sparse.file", "%s", po_io_alloc(fd, st, sizeof(st)));
	PO_CHECK("lseek.data_0", po_sys(lseek(fd, 0, SEEK_DATA)), NULL);
	PO_CHECK("lseek.hole_0", po_sys(lseek(fd, 0, SEEK_HOLE)), NULL);
	PO_CHECK("lseek.data_4096", po_sys(lseek(fd, 4096, SEEK_DATA)), NULL);
	PO_CHECK("lseek.hole_1m", po_sys(lseek(fd, 1048576, SEEK_HOLE)), NULL);
	PO_CHECK("lseek.data_eof", po_sys(lseek(fd, 1048576 + 4096, SEEK_DATA)),
		NULL);
	PO_CHECK("lseek.hole_past_eof",
		po_sys(lseek(fd, 1048576 + 8192, SEEK_HOLE)), NULL);
	PO_CHECK("lseek.end", po_sys(lseek(fd, 0, SEEK_END)), NULL);
	PO_CHECK("lseek.negative", po_sys(lseek(fd, -1, SEEK_SET)), NULL);
	PO_CHECK("lseek.beyond_end_set", po_sys(lseek(fd, 5000000, SEEK_SET)),
		NULL);
	close(fd);
}

static void po_io_direct(void)
{
	char h[64];
	void *buf;
	int fd;
	long r;

	if (posix_memalign(&buf, 4096, 8192))
		abort();
	po_pattern(buf, 8192, 11);
	r = po_sys(fd = open("dio", O_RDWR | O_CREAT | O_TRUNC | O_DIRECT,
			     0644));
	PO_CHECK("open.o_direct", r < 0 ? r : 0, NULL);
	if (fd >= 0) {
		PO_CHECK("pwrite.o_direct", po_sys(pwrite(fd, buf, 8192, 0)),
			NULL);
		memset(buf, 0, 8192);
		PO_CHECK("pread.o_direct", po_sys(pread(fd, buf, 4096, 4096)),
			"data=%016llx",
			(unsigned long long)po_hash_bytes(buf, 4096));
		close(fd);
		po_note("o_direct.file", "%s", po_hash_path("dio", h, sizeof(h)));
	}
	free(buf);
}

/* Offsets past 4 GiB, and sendfile (the kernel's splice path). */
static void po_io_offsets(void)
{
	char st[256], h[64], buf[16];
	int fd = open("far", O_RDWR | O_CREAT | O_TRUNC, 0644), out;
	off_t far = 5LL * 1024 * 1024 * 1024 + 7;

	PO_CHECK("pwrite.at_5gib", po_sys(pwrite(fd, "far away", 8, far)),
		 "%s", po_fstat_str(fd, st, sizeof(st)));
	memset(buf, 0, sizeof(buf));
	PO_CHECK("pread.at_5gib", po_sys(pread(fd, buf, 8, far)), "data=%s",
		 buf);
	PO_CHECK("lseek.data_near_5gib", po_sys(lseek(fd, 0, SEEK_DATA)),
		 NULL);
	PO_CHECK("ftruncate.below_4gib", po_sys(ftruncate(fd, 4096)), "%s",
		 po_fstat_str(fd, st, sizeof(st)));
	close(fd);

	po_write_file("sf-in", "sendfile copies this text", 25, 0644);
	fd = open("sf-in", O_RDONLY);
	out = open("sf-out", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	PO_CHECK("sendfile", po_sys(sendfile(out, fd, &(off_t){ 9 }, 100)),
		 "%s", po_hash_path("sf-out", h, sizeof(h)));
	close(out);
	close(fd);
}

void po_io_run(void)
{
	po_io_big();
	po_io_mmap();
	po_io_fallocate();
	po_io_copy_range();
	po_io_seek();
	po_io_direct();
	po_io_offsets();
}
