/* Capturing a job's output within caps: a head buffer, an optional tail
 * ring, the exact count of what was dropped, and the notice that says so. */
#pragma once

#include <stddef.h>

#include "runner.h"

struct output_cap {
	size_t head_cap, tail_cap;
	char *head;
	size_t head_len;
	char *tail;             /* ring of tail_cap bytes */
	size_t tail_len, tail_pos; /* bytes held; next write position */
	size_t total;
	int fd;                 /* stream the head here as it arrives, or -1 */
	int broken;             /* writing to fd failed: its reader is gone */
	int spill_fd;           /* every byte, up to spill_max, goes here too (-1: none) */
	size_t spill_max, spilled;
};
/* Also write every byte fed, up to max, to fd (the full output kept aside
 * when the captured one is cut). */
void output_spill(struct output_cap *c, int fd, size_t max);

/* stdout style: max bytes kept as 40% head + 60% tail. */
int output_init_headtail(struct output_cap *c, size_t max, int fd);
/* stderr style: max bytes of head only. */
int output_init_head(struct output_cap *c, size_t max, int fd);
void output_feed(struct output_cap *c, const char *buf, size_t n);
/* Build the kept text into s (head, notice, tail) and write what was not
 * streamed yet to the stream fd. Frees the buffers of c. */
int output_finish(struct output_cap *c, struct runner_stream *s);
/* The notice for omitted of total bytes, e.g.
 * "\n\n... [OUTPUT TRUNCATED - 50,000 bytes omitted out of 100,000 total] ...\n\n" */
int output_notice(size_t omitted, size_t total, char *buf, size_t size);
