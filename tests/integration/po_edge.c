/* posix_ops battery "edge": requests at the edges of what the kernel
 * passes on: zero sizes, offsets near the 64-bit limit, oversized xattr
 * values and names, huge lengths. The daemon must answer each as the disk
 * below does, and keep running. */
#include <fcntl.h>
#include <limits.h>
#include <linux/falloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "posix_ops.h"

static void po_edge_sizes(void)
{
	char st[256], buf[16];
	int fd = open("e", O_RDWR | O_CREAT | O_TRUNC, 0644);

	PO_CHECK("write.zero_bytes", po_sys(write(fd, buf, 0)), "%s",
		 po_fstat_str(fd, st, sizeof(st)));
	PO_CHECK("read.zero_bytes", po_sys(read(fd, buf, 0)), NULL);
	PO_CHECK("pwrite.offset_max", po_sys(pwrite(fd, "x", 1, LLONG_MAX)),
		 NULL);
	PO_CHECK("pwrite.offset_near_max",
		 po_sys(pwrite(fd, "x", 1, LLONG_MAX - 4096)), NULL);
	PO_CHECK("pread.offset_max", po_sys(pread(fd, buf, 1, LLONG_MAX)),
		 NULL);
	PO_CHECK("pwrite.negative_offset", po_sys(pwrite(fd, "x", 1, -1)),
		 NULL);
	PO_CHECK("ftruncate.huge", po_sys(ftruncate(fd, LLONG_MAX)), NULL);
	PO_CHECK("ftruncate.8tib", po_sys(ftruncate(fd, 1LL << 43)), "%s",
		 po_fstat_str(fd, st, sizeof(st)));
	PO_CHECK("fallocate.overflow",
		 po_sys(fallocate(fd, 0, LLONG_MAX - 10, 100)), NULL);
	PO_CHECK("fallocate.negative", po_sys(fallocate(fd, 0, -1, 100)), NULL);
	PO_CHECK("fallocate.bad_mode", po_sys(fallocate(fd, 0x4000, 0, 100)),
		 NULL);
	PO_CHECK("lseek.data_past_8tib",
		 po_sys(lseek(fd, (1LL << 43) + 1, SEEK_DATA)), NULL);
	PO_CHECK("lseek.bad_whence", po_sys(lseek(fd, 0, 17)), NULL);
	PO_CHECK("copy_file_range.huge_len",
		 po_sys(copy_file_range(fd, &(loff_t){ 0 }, fd,
					&(loff_t){ 1LL << 45 }, SIZE_MAX / 2, 0)),
		 NULL);
	PO_CHECK("copy_file_range.bad_flags",
		 po_sys(copy_file_range(fd, NULL, fd, NULL, 10, 1)), NULL);
	PO_CHECK("ftruncate.back_to_zero", po_sys(ftruncate(fd, 0)), "%s",
		 po_fstat_str(fd, st, sizeof(st)));
	close(fd);
	PO_CHECK("readlink.zero_size",
		 po_sys(readlink("e", buf, 0)), NULL);
	PO_CHECK("open.bad_flags_creat_directory",
		 po_open_ret("newdir-flag", O_CREAT | O_DIRECTORY | O_RDWR, 0644),
		 "%s", po_lstat_str("newdir-flag", st, sizeof(st)));
	PO_CHECK("mkdir.mode_with_type_bits",
		 po_sys(mkdir("md", S_IFREG | 0755)), "%s",
		 po_lstat_str("md", st, sizeof(st)));
	PO_CHECK("chmod.type_bits_ignored", po_sys(chmod("e", S_IFDIR | 0600)),
		 "%s", po_lstat_str("e", st, sizeof(st)));
}

static void po_edge_xattr(void)
{
	static char big[70000];
	char name[300];
	ssize_t r;

	po_write_file("x", "", 0, 0644);
	memset(big, 'v', sizeof(big));
	PO_CHECK("setxattr.64k_value",
		 po_sys(setxattr("x", "user.big", big, 65536, 0)), NULL);
	PO_CHECK("setxattr.over_64k_value",
		 po_sys(setxattr("x", "user.big", big, 65537, 0)), NULL);
	PO_CHECK("setxattr.value_over_block",
		 po_sys(setxattr("x", "user.big", big, 5000, 0)), NULL);
	PO_CHECK("setxattr.empty_name", po_sys(setxattr("x", "", "1", 1, 0)),
		 NULL);
	PO_CHECK("setxattr.prefix_only",
		 po_sys(setxattr("x", "user.", "1", 1, 0)), NULL);
	snprintf(name, sizeof(name), "user.");
	memset(name + 5, 'n', 250);
	name[255] = '\0';
	PO_CHECK("setxattr.name_255", po_sys(setxattr("x", name, "1", 1, 0)),
		 NULL);
	r = po_sys(getxattr("x", name, big, sizeof(big)));
	PO_CHECK("getxattr.name_255", r, NULL);
	PO_CHECK("getxattr.huge_buffer",
		 po_sys(getxattr("x", name, big, sizeof(big))), NULL);
	for (int i = 0; i < 40; i++) {
		char n[32];

		snprintf(n, sizeof(n), "user.many%02d", i);
		if (setxattr("x", n, "v", 1, 0) < 0) {
			PO_CHECK("setxattr.many", -errno, "at=%d", i);
			break;
		}
	}
	r = po_sys(listxattr("x", big, sizeof(big)));
	PO_CHECK("listxattr.many", r > 0 ? 0 : r, "bytes=%zd", r);
	PO_CHECK("getxattr.dir_missing", po_sys(getxattr(".", "user.no", big, 10)),
		 NULL);
}

void po_edge_run(void)
{
	po_edge_sizes();
	po_edge_xattr();
}
