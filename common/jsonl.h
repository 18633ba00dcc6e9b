/* JSON-lines framing (one cJSON object per line) and the control-socket
 * client that hermesctl and the runner use to talk to a hermesfs daemon. */
#pragma once

#include <stddef.h>
#include <cjson/cJSON.h>
#include "err.h"

struct jsonl_reader {
	int fd;
	char *buf;
	size_t len, cap;
};

void jsonl_reader_init(struct jsonl_reader *r, int fd);
void jsonl_reader_free(struct jsonl_reader *r);
/* Read one line as JSON. timeout_ms < 0 waits forever. Returns 0, -ETIMEDOUT,
 * -EPIPE at end of stream, -EBADMSG for a line that is not JSON. */
int jsonl_read(struct jsonl_reader *r, cJSON **out, int timeout_ms);
/* Write obj and a newline, all of it. */
int jsonl_write(int fd, const cJSON *obj);

/* Connect to a unix socket, send req, read one reply. A reply with
 * "ok": false becomes an error carrying its "error" text. */
int ctl_call(const char *sock_path, const cJSON *req, cJSON **resp, int timeout_ms,
	     struct herr *e);
