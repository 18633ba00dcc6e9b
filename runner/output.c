/* Output capture for jobs: keeps a bounded head (and for stdout a tail
 * ring), counts every byte, and renders the kept text with a notice that
 * names exactly how many bytes were omitted. */
#include "output.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int output_alloc(struct output_cap *c, size_t head, size_t tail, int fd)
{
	memset(c, 0, sizeof(*c));
	c->head_cap = head;
	c->tail_cap = tail;
	c->fd = fd;
	c->spill_fd = -1;
	c->head = malloc(head ? head : 1);
	c->tail = malloc(tail ? tail : 1);
	if (!c->head || !c->tail) {
		free(c->head);
		free(c->tail);
		c->head = c->tail = NULL;
		return -ENOMEM;
	}
	return 0;
}

int output_init_headtail(struct output_cap *c, size_t max, int fd)
{
	size_t head = max * 2 / 5;

	return output_alloc(c, head, max - head, fd);
}

int output_init_head(struct output_cap *c, size_t max, int fd)
{
	return output_alloc(c, max, 0, fd);
}

static void output_write_all(struct output_cap *c, const char *p, size_t n)
{
	while (n > 0 && c->fd >= 0) {
		ssize_t w = write(c->fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			/* The reader went away: keep capturing, stop streaming. */
			c->broken = 1;
			c->fd = -1;
			return;
		}
		p += w;
		n -= (size_t)w;
	}
}

void output_spill(struct output_cap *c, int fd, size_t max)
{
	c->spill_fd = fd;
	c->spill_max = max;
}

static void output_spill_feed(struct output_cap *c, const char *p, size_t n)
{
	if (c->spill_fd < 0 || c->spilled >= c->spill_max)
		return;
	if (n > c->spill_max - c->spilled)
		n = c->spill_max - c->spilled;
	while (n > 0) {
		ssize_t w = write(c->spill_fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			c->spill_fd = -1; /* a full disk: the capture goes on */
			return;
		}
		p += w;
		n -= (size_t)w;
		c->spilled += (size_t)w;
	}
}

void output_feed(struct output_cap *c, const char *buf, size_t n)
{
	size_t h = 0;

	output_spill_feed(c, buf, n);
	c->total += n;
	if (c->head_len < c->head_cap) {
		h = c->head_cap - c->head_len;
		if (h > n)
			h = n;
		memcpy(c->head + c->head_len, buf, h);
		c->head_len += h;
		output_write_all(c, buf, h);
		buf += h;
		n -= h;
	}
	if (n == 0 || c->tail_cap == 0)
		return;
	if (n >= c->tail_cap) {
		memcpy(c->tail, buf + n - c->tail_cap, c->tail_cap);
		c->tail_pos = 0;
		c->tail_len = c->tail_cap;
		return;
	}
	size_t first = c->tail_cap - c->tail_pos;
	if (first > n)
		first = n;
	memcpy(c->tail + c->tail_pos, buf, first);
	memcpy(c->tail, buf + first, n - first);
	c->tail_pos = (c->tail_pos + n) % c->tail_cap;
	c->tail_len = c->tail_len + n > c->tail_cap ? c->tail_cap : c->tail_len + n;
}

/* 1234567 -> "1,234,567" */
static void output_group(size_t v, char *buf, size_t size)
{
	char digits[32];
	int n = snprintf(digits, sizeof(digits), "%zu", v), o = 0;

	for (int i = 0; i < n && (size_t)o + 2 < size; i++) {
		if (i > 0 && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
}

int output_notice(size_t omitted, size_t total, char *buf, size_t size)
{
	char o[40], t[40];

	output_group(omitted, o, sizeof(o));
	output_group(total, t, sizeof(t));
	return snprintf(buf, size,
			"\n\n... [OUTPUT TRUNCATED - %s bytes omitted out of %s total] ...\n\n",
			o, t);
}

int output_finish(struct output_cap *c, struct runner_stream *s)
{
	size_t kept = c->head_len + c->tail_len;
	char notice[160] = "";
	size_t nl = 0, off;

	memset(s, 0, sizeof(*s));
	s->total = c->total;
	s->omitted = c->total - kept;
	s->truncated = s->omitted > 0;
	if (s->truncated)
		nl = (size_t)output_notice(s->omitted, s->total, notice, sizeof(notice));
	s->len = kept + nl;
	s->data = malloc(s->len + 1);
	if (!s->data) {
		free(c->head);
		free(c->tail);
		c->head = c->tail = NULL;
		return -ENOMEM;
	}
	memcpy(s->data, c->head, c->head_len);
	off = c->head_len;
	memcpy(s->data + off, notice, nl);
	off += nl;
	/* Oldest tail byte sits at tail_pos once the ring has wrapped. */
	size_t start = c->tail_len == c->tail_cap ? c->tail_pos : 0;
	for (size_t i = 0; i < c->tail_len; i++)
		s->data[off + i] = c->tail[(start + i) % (c->tail_cap ? c->tail_cap : 1)];
	s->data[s->len] = '\0';
	output_write_all(c, s->data + c->head_len, s->len - c->head_len);
	free(c->head);
	free(c->tail);
	c->head = c->tail = NULL;
	return 0;
}
