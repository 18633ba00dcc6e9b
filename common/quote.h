/* Names a program did not choose (file names, process names, reasons an
 * agent wrote) made safe for a terminal: a name holding a control byte is
 * written in double quotes with C escapes, as git quotes paths, so it can
 * neither move the cursor, clear the screen nor break a table's lines. */
#pragma once

#include <stddef.h>
#include <stdio.h>

/* Does s need quoting (any byte below 0x20, or 0x7f)? */
int quote_needed(const char *s);
/* s, quoted if needed, into out (always terminated; cut short if small).
 * Returns the length it wanted, as snprintf does. */
size_t quote_str(const char *s, char *out, size_t size);
/* s, quoted if needed, onto f. */
void quote_put(FILE *f, const char *s);
