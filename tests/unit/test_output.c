/* Output caps: 40% head + 60% tail for stdout, head only for stderr, and
 * the exact omitted count in the notice, whatever the chunking. */
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "tap.h"

/* Byte i of the synthetic stream. */
static char byte_at(size_t i)
{
	return (char)('a' + (i * 7 + i / 26) % 26);
}

static void feed_n(struct output_cap *c, size_t total, size_t chunk)
{
	char buf[70000];

	for (size_t off = 0; off < total;) {
		size_t n = total - off < chunk ? total - off : chunk;
		for (size_t k = 0; k < n; k++)
			buf[k] = byte_at(off + k);
		output_feed(c, buf, n);
		off += n;
	}
}

static int matches(const char *p, size_t from, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != byte_at(from + i))
			return 0;
	return 1;
}

static void check_headtail(size_t total, size_t chunk)
{
	struct output_cap c;
	struct runner_stream s;
	char notice[200];
	size_t nl;

	output_init_headtail(&c, 50000, -1);
	feed_n(&c, total, chunk);
	output_finish(&c, &s);
	if (total <= 50000) {
		ok(!s.truncated && s.len == total && s.omitted == 0 && matches(s.data, 0, total),
		   "%zu bytes in %zu-byte chunks kept whole", total, chunk);
	} else {
		nl = (size_t)output_notice(total - 50000, total, notice, sizeof(notice));
		ok(s.truncated && s.omitted == total - 50000 && s.total == total,
		   "%zu bytes in %zu-byte chunks: %zu omitted", total, chunk, s.omitted);
		ok(s.len == 20000 + nl + 30000 && matches(s.data, 0, 20000) &&
		   memcmp(s.data + 20000, notice, nl) == 0 &&
		   matches(s.data + 20000 + nl, total - 30000, 30000),
		   "head 20000 + notice + last 30000 bytes");
	}
	free(s.data);
}

int main(void)
{
	struct output_cap c;
	struct runner_stream s;
	char notice[200];

	output_notice(50000, 100000, notice, sizeof(notice));
	is_str(notice, "\n\n... [OUTPUT TRUNCATED - 50,000 bytes omitted out of 100,000 total] ...\n\n",
	       "notice names omitted and total bytes with separators");
	output_notice(1, 999, notice, sizeof(notice));
	ok(strstr(notice, "- 1 bytes omitted out of 999 total") != NULL, "small numbers");
	output_notice(1234567, 1000000000, notice, sizeof(notice));
	ok(strstr(notice, "1,234,567 bytes omitted out of 1,000,000,000 total") != NULL,
	   "large numbers");

	check_headtail(0, 1);
	check_headtail(100, 7);
	check_headtail(50000, 4096);
	check_headtail(50001, 4096);
	check_headtail(100000, 4096);
	check_headtail(100000, 1);
	check_headtail(100000, 65536);
	check_headtail(1000003, 65536);
	check_headtail(80000, 29999);

	output_init_head(&c, 10000, -1);
	feed_n(&c, 25000, 3000);
	output_finish(&c, &s);
	output_notice(15000, 25000, notice, sizeof(notice));
	ok(s.truncated && s.omitted == 15000 && s.len == 10000 + strlen(notice) &&
	   matches(s.data, 0, 10000) && strcmp(s.data + 10000, notice) == 0,
	   "stderr keeps the first 10000 bytes then the notice");
	free(s.data);

	output_init_head(&c, 10000, -1);
	feed_n(&c, 10000, 10000);
	output_finish(&c, &s);
	ok(!s.truncated && s.len == 10000, "stderr at exactly the cap is whole");
	free(s.data);
	return done_testing();
}
