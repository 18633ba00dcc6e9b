/* Quoting of untrusted names for terminal output (see quote.h). */
#include "quote.h"

#include <string.h>

int quote_needed(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return 1;
	return 0;
}

/* The escape of one byte inside quotes, into esc (5 bytes). */
static const char *quote_byte(unsigned char c, char esc[5])
{
	switch (c) {
	case '"':
		return "\\\"";
	case '\\':
		return "\\\\";
	case '\n':
		return "\\n";
	case '\t':
		return "\\t";
	default:
		break;
	}
	if (c < 0x20 || c == 0x7f) {
		esc[0] = '\\';
		esc[1] = (char)('0' + ((c >> 6) & 7));
		esc[2] = (char)('0' + ((c >> 3) & 7));
		esc[3] = (char)('0' + (c & 7));
		esc[4] = '\0';
		return esc;
	}
	esc[0] = (char)c;
	esc[1] = '\0';
	return esc;
}

size_t quote_str(const char *s, char *out, size_t size)
{
	size_t n = 0;
	char esc[5];

#define QUOTE_ADD(str)                                   \
	do {                                             \
		for (const char *q_ = (str); *q_; q_++) { \
			if (n + 1 < size)                \
				out[n] = *q_;            \
			n++;                             \
		}                                        \
	} while (0)

	if (!quote_needed(s)) {
		QUOTE_ADD(s);
	} else {
		QUOTE_ADD("\"");
		for (const unsigned char *p = (const unsigned char *)s; *p; p++)
			QUOTE_ADD(quote_byte(*p, esc));
		QUOTE_ADD("\"");
	}
#undef QUOTE_ADD
	if (size)
		out[n < size ? n : size - 1] = '\0';
	return n;
}

void quote_put(FILE *f, const char *s)
{
	char esc[5];

	if (!quote_needed(s)) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		fputs(quote_byte(*p, esc), f);
	fputc('"', f);
}
