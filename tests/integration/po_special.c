/* posix_ops battery "special": fifos, unix sockets bound in the tree,
 * mknod of every type (device nodes only succeed for root). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include "posix_ops.h"

static void po_special_fifo(void)
{
	char st[256], buf[16];
	int fd;

	PO_CHECK("mkfifo", po_sys(mkfifo("p", 0640)), "%s",
		po_lstat_str("p", st, sizeof(st)));
	PO_CHECK("mkfifo.existing", po_sys(mkfifo("p", 0640)), NULL);
	fd = open("p", O_RDWR | O_NONBLOCK);
	PO_CHECK("open.fifo_rdwr", fd < 0 ? -errno : 0, NULL);
	if (fd < 0)
		return;
	PO_CHECK("write.fifo", po_sys(write(fd, "through fifo", 12)), NULL);
	memset(buf, 0, sizeof(buf));
	PO_CHECK("read.fifo", po_sys(read(fd, buf, sizeof(buf) - 1)), "data=%s",
		buf);
	PO_CHECK("read.fifo_empty", po_sys(read(fd, buf, 1)), NULL);
	close(fd);
	fd = open("p", O_WRONLY | O_NONBLOCK);
	PO_CHECK("open.fifo_wronly_no_reader", fd < 0 ? -errno : 0, NULL);
	if (fd >= 0)
		close(fd);
	po_note("fifo.after_use", "%s", po_lstat_str("p", st, sizeof(st)));
}

static void po_special_socket(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char st[256], buf[16];
	int srv, cli, conn;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "sock");
	srv = socket(AF_UNIX, SOCK_STREAM, 0);
	PO_CHECK("bind.unix", po_sys(bind(srv, (struct sockaddr *)&sa,
					 sizeof(sa))),
		"%s", po_lstat_str("sock", st, sizeof(st)));
	PO_CHECK("listen", po_sys(listen(srv, 4)), NULL);
	cli = socket(AF_UNIX, SOCK_STREAM, 0);
	PO_CHECK("connect.unix", po_sys(connect(cli, (struct sockaddr *)&sa,
					       sizeof(sa))), NULL);
	PO_CHECK("write.socket", po_sys(write(cli, "ping", 4)), NULL);
	conn = accept(srv, NULL, NULL);
	memset(buf, 0, sizeof(buf));
	PO_CHECK("read.socket", po_sys(read(conn, buf, sizeof(buf) - 1)),
		"data=%s", buf);
	close(conn);
	close(cli);
	cli = socket(AF_UNIX, SOCK_STREAM, 0);
	PO_CHECK("bind.existing", po_sys(bind(cli, (struct sockaddr *)&sa,
					     sizeof(sa))), NULL);
	close(cli);
	close(srv);
	PO_CHECK("unlink.socket", po_sys(unlink("sock")), NULL);
	cli = socket(AF_UNIX, SOCK_STREAM, 0);
	PO_CHECK("connect.removed", po_sys(connect(cli, (struct sockaddr *)&sa,
						  sizeof(sa))), NULL);
	close(cli);
	/* a socket file with nobody listening */
	srv = socket(AF_UNIX, SOCK_DGRAM, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "dsock");
	bind(srv, (struct sockaddr *)&sa, sizeof(sa));
	close(srv);
	cli = socket(AF_UNIX, SOCK_DGRAM, 0);
	PO_CHECK("sendto.dead_socket",
		po_sys(sendto(cli, "x", 1, 0, (struct sockaddr *)&sa,
			      sizeof(sa))), NULL);
	close(cli);
	PO_CHECK("open.socket_file", po_open_ret("dsock", O_RDONLY), NULL);
}

static void po_special_mknod(void)
{
	char st[256], buf[8];
	int fd;

	PO_CHECK("mknod.fifo", po_sys(mknod("nf", S_IFIFO | 0600, 0)), "%s",
		po_lstat_str("nf", st, sizeof(st)));
	PO_CHECK("mknod.reg", po_sys(mknod("nr", S_IFREG | 0600, 0)), "%s",
		po_lstat_str("nr", st, sizeof(st)));
	PO_CHECK("mknod.sock", po_sys(mknod("ns", S_IFSOCK | 0600, 0)), "%s",
		po_lstat_str("ns", st, sizeof(st)));
	PO_CHECK("mknod.chr_zero",
		po_sys(mknod("zero", S_IFCHR | 0666, makedev(1, 5))), "%s",
		po_lstat_str("zero", st, sizeof(st)));
	fd = open("zero", O_RDONLY);
	PO_CHECK("open.chr_zero", fd < 0 ? -errno : 0, NULL);
	if (fd >= 0) {
		memset(buf, 'x', sizeof(buf));
		PO_CHECK("read.chr_zero", po_sys(read(fd, buf, sizeof(buf))),
			"zeros=%s", buf[0] == 0 && buf[7] == 0 ? "yes" : "no");
		close(fd);
	}
	PO_CHECK("mknod.blk", po_sys(mknod("blk", S_IFBLK | 0600,
					   makedev(7, 200))),
		"%s", po_lstat_str("blk", st, sizeof(st)));
	PO_CHECK("mknod.existing", po_sys(mknod("nf", S_IFIFO | 0600, 0)), NULL);
	PO_CHECK("mknod.bad_type", po_sys(mknod("bad", 0170000 | 0600, 0)),
		NULL);
	PO_CHECK("mknod.dir_type", po_sys(mknod("bad", S_IFDIR | 0700, 0)),
		NULL);
}

void po_special_run(void)
{
	po_special_fifo();
	po_special_socket();
	po_special_mknod();
}
