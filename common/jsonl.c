/* JSON-lines framing over stream sockets and pipes, and a one-shot
 * request/reply client for the daemon's control socket. */
#include "jsonl.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"

void jsonl_reader_init(struct jsonl_reader *r, int fd)
{
	memset(r, 0, sizeof(*r));
	r->fd = fd;
}

void jsonl_reader_free(struct jsonl_reader *r)
{
	free(r->buf);
	r->buf = NULL;
	r->len = r->cap = 0;
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

int jsonl_read(struct jsonl_reader *r, cJSON **out, int timeout_ms)
{
	long long deadline = timeout_ms >= 0 ? now_ms() + timeout_ms : -1;

	for (;;) {
		char *nl = r->len ? memchr(r->buf, '\n', r->len) : NULL;
		if (nl) {
			size_t linelen = (size_t)(nl - r->buf);
			*nl = '\0';
			*out = cJSON_ParseWithLength(r->buf, linelen);
			memmove(r->buf, nl + 1, r->len - linelen - 1);
			r->len -= linelen + 1;
			return *out ? 0 : -EBADMSG;
		}
		if (r->cap - r->len < 4096) {
			size_t ncap = r->cap ? r->cap * 2 : 16384;
			if (ncap > (64u << 20))
				return -EMSGSIZE;
			char *nb = realloc(r->buf, ncap);
			if (!nb)
				return -ENOMEM;
			r->buf = nb;
			r->cap = ncap;
		}
		if (deadline >= 0) {
			long long left = deadline - now_ms();
			struct pollfd p = { .fd = r->fd, .events = POLLIN };
			if (left <= 0)
				return -ETIMEDOUT;
			int pr = poll(&p, 1, (int)left);
			if (pr < 0 && errno == EINTR)
				continue;
			if (pr < 0)
				return -errno;
			if (pr == 0)
				return -ETIMEDOUT;
		}
		ssize_t n = read(r->fd, r->buf + r->len, r->cap - r->len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EPIPE;
		r->len += (size_t)n;
	}
}

int jsonl_write(int fd, const cJSON *obj)
{
	_cleanup_free_ char *s = cJSON_PrintUnformatted(obj);
	size_t len, off = 0;

	if (!s)
		return -ENOMEM;
	len = strlen(s);
	s[len] = '\n'; /* overwrite NUL: write len+1 bytes, never read as string again */
	while (off < len + 1) {
		ssize_t n = send(fd, s + off, len + 1 - off, MSG_NOSIGNAL);
		if (n < 0 && errno == ENOTSOCK)
			n = write(fd, s + off, len + 1 - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		off += (size_t)n;
	}
	return 0;
}

int ctl_call(const char *sock_path, const cJSON *req, cJSON **resp, int timeout_ms,
	     struct herr *e)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -1;
	struct jsonl_reader rd;
	cJSON *reply = NULL;
	int r;

	if (strlen(sock_path) >= sizeof(sa.sun_path))
		return err_set(e, -ENAMETOOLONG, "control socket path too long: %s", sock_path);
	strcpy(sa.sun_path, sock_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return err_sys(e, -errno, "socket");
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return err_sys(e, -errno, "cannot reach the daemon at %s", sock_path);
	if ((r = jsonl_write(fd, req)) < 0)
		return err_sys(e, r, "cannot send to the daemon");
	jsonl_reader_init(&rd, fd);
	r = jsonl_read(&rd, &reply, timeout_ms);
	jsonl_reader_free(&rd);
	if (r == -ETIMEDOUT)
		return err_set(e, r, "the daemon did not answer within %d ms", timeout_ms);
	if (r == -EPIPE)
		return err_set(e, r, "the daemon closed the connection without an answer");
	if (r < 0)
		return err_sys(e, r, "bad answer from the daemon");
	const cJSON *ok = cJSON_GetObjectItemCaseSensitive(reply, "ok");
	if (!cJSON_IsTrue(ok)) {
		const cJSON *msg = cJSON_GetObjectItemCaseSensitive(reply, "error");
		err_set(e, -EIO, "%s",
			cJSON_IsString(msg) ? msg->valuestring : "the daemon refused the request");
		if (resp)
			*resp = reply;
		else
			cJSON_Delete(reply);
		return -EIO;
	}
	if (resp)
		*resp = reply;
	else
		cJSON_Delete(reply);
	return 0;
}
